package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// notLate bounds lateness loosely: the tests check that nothing arrives
// early or not at all, while a busy shared machine can delay any message.
const notLate = 30 * time.Second

// A producer in another language publishes into a direct ladder with what
// trace --json says: exchange, routing key and the BCC header. The test
// publishes exactly that, as a plain header, not through rungs' BCC field.
func TestDirectLadderForThirdPartyProducers(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	mustRun(t, env, "apply", "--ladder", "hops", "--layout", "direct", "--unit", "10ms", "--max-delay", "1m", "--target", "work")
	if out := mustRun(t, env, "plan", "--ladder", "hops", "--layout", "direct", "--unit", "10ms", "--max-delay", "1m", "--target", "work"); !strings.Contains(out, "drift: none") {
		t.Fatalf("plan after apply:\n%s", out)
	}
	var tr struct {
		Exchange   string
		RoutingKey string `json:"routing_key"`
		Headers    map[string][]string
		Target     string
		Checked    bool
	}
	if err := json.Unmarshal([]byte(mustRun(t, env, "trace", "1500ms", "--ladder", "hops", "--to", "work", "--json")), &tr); err != nil {
		t.Fatal(err)
	}
	// 1500ms is 150 units of 10ms: 0x96, so a hop of 9·160ms, then 6·10ms.
	wantBCC := []string{"i>01.9", "01>00.6", "00>=work"}
	if tr.Exchange != "hops.ingest" || tr.RoutingKey != "0.0.9.6.work" || !reflect.DeepEqual(tr.Headers["BCC"], wantBCC) || tr.Target != "work" || !tr.Checked {
		t.Fatalf("trace --json: %+v", tr)
	}
	// The key alone is enough to rebuild the path of a resting message.
	out := mustRun(t, env, "trace", "--ladder", "hops", "--routing-key", tr.RoutingKey)
	for _, want := range []string{"BCC      i>01.9  01>00.6  00>=work", "hops.rung.01.9", "hops.rung.00.6", "checked: the broker's bindings route it exactly this way"} {
		if !strings.Contains(out, want) {
			t.Errorf("trace --routing-key lacks %q:\n%s", want, out)
		}
	}
	bcc := make([]any, len(tr.Headers["BCC"]))
	for i, k := range tr.Headers["BCC"] {
		bcc[i] = k
	}
	a := watch(t, c, "work", "hops.unroutable")
	b := published{prefix: "foreign-", delay: 1500 * time.Millisecond, at: time.Now()}
	msgs := []broker.Message{}
	for _, id := range []string{"foreign-1", "foreign-2", "foreign-3"} {
		msgs = append(msgs, broker.Message{Exchange: tr.Exchange, RoutingKey: tr.RoutingKey, MessageID: id, Headers: map[string]any{"BCC": bcc}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if res, err := c.Publish(ctx, msgs); err != nil || res.Confirmed != 3 {
		t.Fatalf("publish: %+v, %v", res, err)
	}
	checkOnTime(t, a.wait(t, "work", 3, time.Minute), notLate, b)
	// And rungs' own publish; the broker stripped BCC from all of them.
	p := publishDelayed(t, env, "hops", "own-", 300*time.Millisecond, 5, "work")
	got := a.wait(t, "work", 8, time.Minute)
	checkOnTime(t, got[3:], notLate, p)
	for _, d := range got {
		if _, ok := d.Headers["BCC"]; ok {
			t.Errorf("%s arrived with a BCC header: %v", d.MessageID, d.Headers)
		}
	}
	time.Sleep(200 * time.Millisecond)
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.got["hops.unroutable"]); n != 0 || len(a.got["work"]) != 8 {
		t.Errorf("%d unroutable, %d in work (want 0 and 8: once each)", n, len(a.got["work"]))
	}
}

// A message resting in a rung of a direct ladder has lost its BCC header
// (the broker strips it); peek rebuilds its path from the routing key.
func TestPeekRebuildsADirectPath(t *testing.T) {
	t.Parallel()
	env, _ := brokerEnv(t)
	mustRun(t, env, "apply", "--ladder", "d", "--layout", "direct", "--unit", "1s", "--max-delay", "1h", "--queue-type", "classic")
	mustRun(t, env, "publish", "--ladder", "d", "--delay", "90s", "--id-prefix", "rest-")
	out := mustRun(t, env, "peek", "d.rung.01.5")
	for _, want := range []string{"1m30s to d.done, rebuilt from the routing key", "BCC i>01.5  01>00.a  00>=", "d.rung.01.5 (1m20s) → d.rung.00.a (10s) → d.done"} {
		if !strings.Contains(out, want) {
			t.Errorf("peek lacks %q:\n%s", want, out)
		}
	}
	var pk struct {
		Messages []struct {
			Path struct {
				BCC    []string
				Target string
			}
		}
	}
	if err := json.Unmarshal([]byte(mustRun(t, env, "peek", "d.rung.01.5", "--json")), &pk); err != nil {
		t.Fatal(err)
	}
	if len(pk.Messages) != 1 || !reflect.DeepEqual(pk.Messages[0].Path.BCC, []string{"i>01.5", "01>00.a", "00>="}) || pk.Messages[0].Path.Target != "d.done" {
		t.Fatalf("peek --json: %+v", pk)
	}
}

// Messages move into a direct ladder, with the BCC keys its routing needs,
// from another ladder (migrate) and from a queue (replay --to-ladder); and
// back from a worker's dead-letter queue to where they came from.
func TestMigrateAndReplayIntoADirectLadder(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	mustRun(t, env, "apply", "--ladder", "p", "--unit", "100ms", "--levels", "8", "--radix", "2")
	mustRun(t, env, "apply", "--ladder", "d", "--layout", "direct", "--unit", "10ms", "--max-delay", "1m", "--queue-type", "quorum")
	a := watch(t, c, "d.done", "p.done", "d.unroutable")

	slow := publishDelayed(t, env, "p", "slow-", 5*time.Second, 5, "")
	time.Sleep(500 * time.Millisecond)
	res := runMigrateJSON(t, env, "--from", "p", "--to", "d")
	if res.Moved != 5 || res.Parked != 0 || res.Unknown != 0 {
		t.Fatalf("migrate: %+v", res)
	}
	// Late by up to 1s of whole-second timestamps and the 1s margin.
	checkOnTime(t, a.wait(t, "d.done", 5, time.Minute), notLate, slow)

	declareQueues(t, c, "held")
	fillQueue(t, c, "held", "held", 4, nil)
	held := published{prefix: "held", delay: 700 * time.Millisecond, at: time.Now()}
	if out := mustRun(t, env, "replay", "--from", "held", "--to-ladder", "d", "--delay", "700ms", "--yes"); !strings.Contains(out, "replayed 4 message(s)") {
		t.Fatalf("replay:\n%s", out)
	}
	got := a.wait(t, "d.done", 9, time.Minute)
	checkOnTime(t, got[5:], notLate, held)
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.got["d.unroutable"]) != 0 || len(a.got["p.done"]) != 0 {
		t.Errorf("unroutable %d, p.done %d", len(a.got["d.unroutable"]), len(a.got["p.done"]))
	}
}

// Replayed back to where it came from, a job rejected by a worker on a
// direct ladder's destination is delivered again at once: the route back
// rebuilds its BCC keys.
func TestReplayToOriginIntoADirectLadder(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	mustRun(t, env, "apply", "--ladder", "d", "--layout", "direct", "--unit", "10ms", "--max-delay", "10s", "--target", "w")
	// The worker's queue dead-letters rejected jobs into w.dlq.
	ch := brokertest.RawChannel(t, cfg)
	if _, err := ch.QueueDeclare("w.dlq", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.ExchangeDeclare("w.dlx", "fanout", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind("w.dlq", "", "w.dlx", false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDelete("w", false, false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("w", true, false, false, false, map[string]any{"x-dead-letter-exchange": "w.dlx"}); err != nil {
		t.Fatal(err)
	}
	mustRun(t, env, "apply", "--ladder", "d", "--layout", "direct", "--unit", "10ms", "--max-delay", "10s", "--target", "w")
	publishDelayed(t, env, "d", "job-", 250*time.Millisecond, 3, "w")
	// Reject every job once it arrives.
	rejected := 0
	_ = testutil.Until(t, 10*time.Second, func() error {
		for rejected < 3 {
			d, ok, err := ch.Get("w", false)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				return fmt.Errorf("%d of 3 rejected", rejected)
			}
			if err := d.Reject(false); err != nil {
				t.Fatal(err)
			}
			rejected++
		}
		return nil
	})
	waitDepth(t, c, "w.dlq", 3)
	out := mustRun(t, env, "replay", "--from", "w.dlq", "--to-origin", "--yes")
	if !strings.Contains(out, "replayed 3 message(s)") {
		t.Fatalf("replay:\n%s", out)
	}
	back := drain(t, c, "w", 3, 10*time.Second)
	if len(back) != 3 {
		t.Fatalf("%d of 3 rejected jobs came back to w", len(back))
	}
	if n := queueDepth(t, c, "d.unroutable"); n != 0 {
		t.Errorf("%d in d.unroutable", n)
	}
	for _, d := range back {
		if _, ok := d.Headers[topology.HeaderReplayed]; !ok {
			t.Errorf("%s: not marked replayed: %v", d.MessageID, d.Headers)
		}
	}
}

// waitDepth waits until a queue holds n messages, without taking them.
func waitDepth(t *testing.T, c *broker.Conn, queue string, n int) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("%d messages in %s", n, queue), func() error {
		if got := queueDepth(t, c, queue); got < n {
			return fmt.Errorf("%s holds %d", queue, got)
		}
		return nil
	})
}
