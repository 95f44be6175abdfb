package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// doctor reads the routing keys at the heads of a Celery ladder's rungs,
// where reading changes nothing on the release, and names stacked delay
// prefixes (celery/kombu#2556): on classic rungs on every release, on
// quorum rungs from 4.3. Where a read would change the rungs (quorum before
// 4.3) it reads nothing and says how to look. Nothing moves either way.
func TestDoctorReadsCeleryKeysWhereReadingChangesNothing(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	v := releaseOf(t, cfg)
	c := dial(t, cfg)
	for _, lt := range []struct{ name, qt string }{{"mail_celery", "classic"}, {"q_celery", "quorum"}} {
		mustRun(t, env, "apply", "--layout", "celery", "--ladder", lt.name, "--queue-type", lt.qt, "--target", "emails")
		l, err := topology.Ladder{Name: lt.name, Vhost: cfg.Vhost, Layout: "celery", Targets: []string{"emails"}}.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		// 600s waits 512s in level 9: the messages stay put for the test.
		key, err := l.Key(600*time.Second, "emails")
		if err != nil {
			t.Fatal(err)
		}
		entry, err := l.Entry(600 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		stacked := key[:2*l.Levels] + strings.Repeat("0.", l.Levels) + key[2*l.Levels:]
		msgs := []broker.Message{{Exchange: entry, RoutingKey: stacked, MessageID: lt.name + "-stacked", Body: []byte("{}")}}
		if lt.qt == "classic" {
			msgs = append(msgs, broker.Message{Exchange: entry, RoutingKey: key, MessageID: lt.name + "-fresh", Body: []byte("{}")})
		}
		if res, err := c.Publish(context.Background(), msgs); err != nil || res.Confirmed != len(msgs) {
			t.Fatalf("publish: %+v %v", res, err)
		}
	}
	readQuorum := !v.QuorumRequeueNackCounts()
	var out string
	if err := testutil.Until(t, time.Minute, func() error {
		_, out, _ = run(t, env, "doctor")
		// 118 bytes: two more 56-byte prefixes fit under 255.
		want := []string{"Celery ladder mail_celery: 1 of the 2 routing keys read at the heads of 1 rung carry stacked delay prefixes", "can take 2 more retries with a delay"}
		if readQuorum {
			want = append(want, "Celery ladder q_celery: 1 of the 1 routing key read at the heads of 1 rung carry stacked")
		} else {
			want = append(want, "Celery ladder q_celery: routing keys not read for stacked delay prefixes (celery/kombu#2556), because doctor changes nothing and q_celery_delayed_")
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				return fmt.Errorf("%v: doctor lacks %q", v, w)
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Nothing moved, and nothing was marked on a quorum rung doctor did
	// not read.
	// (A quorum queue's statistics can lag a few seconds.)
	if err := testutil.Until(t, 30*time.Second, func() error {
		snap := vhostSnapshot(t, cfg)
		for q, want := range map[string]int64{"mail_celery_delayed_9": 2, "q_celery_delayed_9": 1} {
			if got, _ := snap.Queue(q); got.Stats.Ready+got.Stats.Unacked != want {
				return fmt.Errorf("%v: %s holds %d ready and %d unacked, want %d", v, q, got.Stats.Ready, got.Stats.Unacked, want)
			}
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	if !readQuorum {
		d, ok, err := c.Get(context.Background(), "q_celery_delayed_9", false) // put back at once
		if err != nil || !ok {
			t.Fatalf("get: %v %v", ok, err)
		}
		if d.Redelivered {
			t.Errorf("%v: doctor handed a quorum rung's message back", v)
		}
	}
}
