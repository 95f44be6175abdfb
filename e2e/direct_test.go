package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
)

// TestDirectLadderSurvivesRestart restarts a node of its own with two
// direct ladders in use. A direct ladder's messages route by BCC keys the
// broker keeps inside the stored message, not in its headers: they must
// survive a restart with the message. The classic ladder's messages rest in
// one long rung while the node is down (classic ladders only keep messages
// at rest); the quorum ladder's are moving from rung to rung, which
// at-least-once dead-lettering must carry across. Every message must
// arrive, none early, none in an unroutable queue.
func TestDirectLadderSurvivesRestart(t *testing.T) {
	n := startNode(t, "direct", 0, nil)
	env := n.rungsEnv()
	const (
		count  = 3000
		qcount = 1000
	)
	mustRungs(t, env, "apply", "--ladder", "dc", "--layout", "direct", "--unit", "100ms", "--max-delay", "1h")
	mustRungs(t, env, "apply", "--ladder", "dq", "--layout", "direct", "--unit", "10ms", "--max-delay", "1h", "--queue-type", "quorum")
	t0 := time.Now()
	// 30s at 100ms: 300 units = 0x12c, 25.6s in dc.rung.02.1 (all through
	// the restart), then 3.2s in dc.rung.01.2 and 1.2s in dc.rung.00.c.
	out := mustRungs(t, env, "publish", "--ladder", "dc", "--delay", "30s", "--count", strconv.Itoa(count), "--id-prefix", "c-")
	if !strings.Contains(out, strconv.Itoa(count)+" confirmed") {
		t.Fatalf("publish:\n%s", out)
	}
	tq := time.Now()
	// 7.65s at 10ms: 765 units = 0x2fd, three hops of 5.12s, 2.4s, 130ms.
	out = mustRungs(t, env, "publish", "--ladder", "dq", "--delay", "7.65s", "--count", strconv.Itoa(qcount), "--id-prefix", "q-")
	if !strings.Contains(out, strconv.Itoa(qcount)+" confirmed") {
		t.Fatalf("publish:\n%s", out)
	}
	n.must("restart")
	t.Logf("restarted %s after publishing", time.Since(t0).Round(time.Millisecond))

	for _, c := range []struct {
		ladder, prefix string
		count          int
		at             time.Time
	}{{"dc", "c-", count, t0}, {"dq", "q-", qcount, tq}} {
		got := newArrivals()
		consumeUntil(t, n.config(), c.ladder+".done", 2*time.Minute, 45*time.Second,
			func(d broker.Delivery) { got.record(d, c.prefix, c.count, c.at) },
			func() bool { return len(got.seen) >= c.count })
		t.Logf("%s: %d deliveries, %d distinct, %d duplicates, %d early, %d foreign", c.ladder, got.total, len(got.seen), got.duplicates(), len(got.early), len(got.foreign))
		if len(got.seen) != c.count || len(got.early) > 0 || len(got.foreign) > 0 {
			t.Errorf("%s: %d of %d arrived, early %v, foreign %v", c.ladder, len(got.seen), c.count, got.early[:min(5, len(got.early))], got.foreign[:min(5, len(got.foreign))])
		}
		if left := drainIDs(t, n.config(), c.ladder+".unroutable"); len(left) > 0 {
			t.Errorf("%s: %d messages in the unroutable queue", c.ladder, len(left))
		}
	}
}
