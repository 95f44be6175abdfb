package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// The lost route, on a real broker: a destination's queue is deleted with
// messages in flight for it. status and doctor name the destination and
// the count held for it, say nothing of a stall, #12625 or unstall, and
// unstall refuses; once the route is restored as the remedy says, every
// held message leaves and none is lost.

func deleteQueue(t *testing.T, c *broker.Conn, name string) {
	t.Helper()
	if err := c.Teardown(context.Background(), topology.Plan{Queues: []topology.Queue{{Name: name}}}); err != nil {
		t.Fatal(err)
	}
}

func declare(t *testing.T, c *broker.Conn, p topology.Plan) {
	t.Helper()
	if _, err := c.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// noStall fails when a lost route is told as the broker's stall.
func noStall(t *testing.T, what, out string) {
	t.Helper()
	for _, bad := range []string{"is stalled", "stalled:", "#12625", "rungs unstall", "run unstall"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s says %q of a lost route:\n%s", what, bad, out)
		}
	}
}

func wants(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s does not say %q:\n%s", what, w, out)
		}
	}
}

// heldRung checks a Celery or NServiceBus ladder whose rung keeps n
// messages for dest, expired, while dest's route is lost.
func heldRung(t *testing.T, env map[string]string, ladder, dest string, n int) {
	t.Helper()
	held := topology.FormatCount(int64(n))
	// The statistics lag the broker: a status whose first reading shows
	// nothing waiting yet judges nothing; the operator runs it again.
	var out string
	_ = testutil.Until(t, 60*time.Second, func() error {
		_, out, _ = run(t, env, "status", "--ladder", ladder)
		if !strings.Contains(out, "lost route") {
			return fmt.Errorf("status names no lost route yet:\n%s", out)
		}
		return nil
	})
	t.Logf("status: %s", firstProblem(out))
	noStall(t, "status", out)
	wants(t, "status", out, "lost route: "+held+" expired held for "+dest+" (queue "+dest+" is gone)", "remedy: restore "+dest+":")
	_, out, _ = run(t, env, "doctor", "--ladder", ladder)
	t.Logf("doctor: %s", lineWith(out, "lost route to"))
	noStall(t, "doctor", out)
	wants(t, "doctor", out, "lost route to "+dest+": "+topology.Counted(int64(n), "message", "messages")+" held for it; queue "+dest+" is gone")
	code, _, errs := run(t, env, "unstall", "--ladder", ladder, "--yes")
	if code == ExitOK || !strings.Contains(errs, "whose route is lost") || !strings.Contains(errs, "nothing was changed") {
		t.Errorf("unstall of a lost route: exit %d\n%s", code, errs)
	}
}

func firstProblem(out string) string { return lineWith(out, "held for") }

func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return strings.TrimSpace(l)
		}
	}
	return "(none)"
}

// A Celery 5.5 native-delay ladder on quorum rungs, declared as kombu
// declares it, with two task queues; emails is deleted while its tasks
// wait in the 2s rung.
func TestLostRouteCelery(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	l, err := topology.Ladder{Name: "celery", Layout: "celery", Unit: time.Second, Levels: 28, Radix: 2, QueueType: topology.Quorum, Targets: []string{"celery", "emails"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	p := l.Plan()
	// kombu's side: each task queue and its topic exchange, both named
	// like the routing key, declared before the ladder binds them.
	app := topology.Plan{
		Exchanges: []topology.Exchange{{Name: "celery", Type: "topic", Durable: true}, {Name: "emails", Type: "topic", Durable: true}},
		Queues:    []topology.Queue{{Name: "celery", Durable: true}, {Name: "emails", Durable: true}},
	}
	declare(t, c, app)
	declare(t, c, p)
	mustRun(t, env, "publish", "--ladder", "celery", "--delay", "2s", "--to", "emails", "--count", "5")
	mustRun(t, env, "publish", "--ladder", "celery", "--delay", "2s", "--to", "celery", "--count", "3")
	deleteQueue(t, c, "emails")
	if got := drain(t, c, "celery", 3, 20*time.Second); len(got) != 3 {
		t.Fatalf("%d of 3 tasks for celery arrived", len(got))
	}
	brokertest.AwaitStats(t, cfg, "celery_delayed_1", func(s topology.QueueStats) bool { return s.Expired == 5 })
	heldRung(t, env, "celery", "emails", 5)
	// reroute refuses while the route is lost, naming what restores it.
	if code, _, errs := run(t, env, "reroute", "--ladder", "celery", "--yes"); code == ExitOK || !strings.Contains(errs, "still lost") {
		t.Errorf("reroute of a lost route: exit %d %s", code, errs)
	}
	// The remedy: the queue, bound to its exchange with "#.emails"; then
	// reroute, so that the broker retries now rather than in 3 minutes.
	declare(t, c, topology.Plan{
		Queues:   []topology.Queue{{Name: "emails", Durable: true}},
		Bindings: []topology.Binding{{Source: "emails", Destination: "emails", DestinationType: topology.ToQueue, RoutingKey: "#.emails"}},
	})
	out := mustRun(t, env, "reroute", "--ladder", "celery", "--yes")
	t.Logf("reroute: %s", strings.ReplaceAll(strings.TrimSpace(out), "\n", " / "))
	if got := drain(t, c, "emails", 5, 30*time.Second); len(got) != 5 {
		t.Fatalf("%d of 5 held tasks reached emails once its route was restored", len(got))
	}
}

// NServiceBus' conventional routing topology (its default): the endpoint's
// fanout exchange bound to its queue and to the delivery exchange; the
// sales endpoint is retired (its queue deleted) with 4 messages delayed.
func TestLostRouteNServiceBus(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	mustRun(t, env, "apply", "--layout", "nsb")
	declare(t, c, topology.Plan{
		Exchanges: []topology.Exchange{{Name: "sales", Type: "fanout", Durable: true}},
		Queues:    []topology.Queue{{Name: "sales", Durable: true}},
		Bindings: []topology.Binding{
			{Source: "sales", Destination: "sales", DestinationType: topology.ToQueue},
			{Source: "nsb.v2.delay-delivery", Destination: "sales", DestinationType: topology.ToExchange, RoutingKey: "#.sales"},
		},
	})
	mustRun(t, env, "publish", "--ladder", "nsb.v2", "--delay", "1s", "--to", "sales", "--count", "4")
	deleteQueue(t, c, "sales")
	brokertest.AwaitStats(t, cfg, "nsb.v2.delay-level-00", func(s topology.QueueStats) bool { return s.Expired == 4 })
	heldRung(t, env, "nsb.v2", "sales", 4)
	// Parked: the rung drains into sales.parked, every message kept.
	out := mustRun(t, env, "reroute", "--ladder", "nsb.v2", "--park", "--yes")
	t.Logf("reroute --park: %s", strings.ReplaceAll(strings.TrimSpace(out), "\n", " / "))
	if got := drain(t, c, "sales.parked", 4, 30*time.Second); len(got) != 4 {
		t.Fatalf("%d of 4 held messages reached sales.parked", len(got))
	}
}

// NServiceBus' direct routing topology, as rungs apply declares it: the
// endpoint's queue bound straight to the delivery exchange, so deleting it
// leaves no binding that names it. 3 messages wait 1s (held once sales is
// gone), 2 wait an hour in a higher rung, ready: their routing keys end in
// the endpoint's name. Where reading them changes nothing (quorum rungs
// from 4.3) status names sales with the 3 held; before 4.3 a read would
// raise their delivery counts, so none is read and status says "every
// destination" with the binding that restores one. Neither is a stall;
// unstall refuses; restored, the 3 arrive and the 2 are still on their
// way, their delivery counts untouched.
func TestLostRouteNServiceBusDirect(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	v := releaseOf(t, cfg)
	c := dial(t, cfg)
	declare(t, c, topology.Plan{Queues: []topology.Queue{{Name: "sales", Durable: true}}})
	mustRun(t, env, "apply", "--layout", "nsb", "--target", "sales")
	mustRun(t, env, "publish", "--ladder", "nsb.v2", "--delay", "1h", "--to", "sales", "--count", "2")
	mustRun(t, env, "publish", "--ladder", "nsb.v2", "--delay", "1s", "--to", "sales", "--count", "3")
	deleteQueue(t, c, "sales")
	brokertest.AwaitStats(t, cfg, "nsb.v2.delay-level-00", func(s topology.QueueStats) bool { return s.Expired == 3 })
	// The remedy wraps: read it as one line.
	out := strings.Join(strings.Fields(heldRungNamed(t, env)), " ")
	if v.QuorumRequeueNackCounts() {
		wants(t, "status", out, "3 expired held for every destination", "binds no destination",
			"declare binding source=nsb.v2.delay-delivery destination=<endpoint> routing_key='#.<endpoint>'")
	} else {
		wants(t, "status", out, "lost route: 3 expired held for sales (queue sales is gone)",
			"declare binding source=nsb.v2.delay-delivery destination=sales routing_key='#.sales'")
	}
	mustRun(t, env, "apply", "--layout", "nsb", "--target", "sales")
	mustRun(t, env, "reroute", "--ladder", "nsb.v2", "--yes")
	if got := drain(t, c, "sales", 3, 30*time.Second); len(got) != 3 {
		t.Fatalf("%d of 3 held messages reached sales once its route was restored", len(got))
	}
	// The 2 an hour away were only read: still in their rung, never
	// handed back as a delivery.
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	awaitDepth(t, m, cfg.Vhost, "nsb.v2.delay-level-11", 2)
	res, err := c.Peek(context.Background(), "nsb.v2.delay-level-11", 2)
	if err != nil || len(res.Messages) != 2 {
		t.Fatalf("peek of the hour's rung: %+v %v", res, err)
	}
	for _, msg := range res.Messages {
		if msg.DeliveryCount > 0 {
			t.Errorf("a message an hour away has x-delivery-count %d after status read it", msg.DeliveryCount)
		}
	}
}

// heldRungNamed waits for status to judge nsb.v2's held rung lost, checks
// that nothing says stall and that unstall refuses, and returns status.
func heldRungNamed(t *testing.T, env map[string]string) string {
	t.Helper()
	var out string
	_ = testutil.Until(t, 60*time.Second, func() error {
		_, out, _ = run(t, env, "status", "--ladder", "nsb.v2")
		if !strings.Contains(out, "lost route") {
			return fmt.Errorf("status names no lost route yet:\n%s", out)
		}
		return nil
	})
	t.Logf("status: %s", firstProblem(out))
	noStall(t, "status", out)
	code, _, errs := run(t, env, "unstall", "--ladder", "nsb.v2", "--yes")
	if code == ExitOK || !strings.Contains(errs, "whose route is lost") {
		t.Errorf("unstall of a lost route: exit %d\n%s", code, errs)
	}
	return out
}

// rungs' own ladders keep what no binding routes in NAME.unroutable: the
// target's queue deleted, the messages for it land there, and status
// names the target from their keys. Restored with rungs apply, then
// replayed to where they left, every one arrives.
func TestLostRouteOwnLadders(t *testing.T) {
	t.Parallel()
	for _, layout := range []string{"prefix", "direct"} {
		t.Run(layout, func(t *testing.T) {
			t.Parallel()
			env, cfg := brokerEnv(t)
			c := dial(t, cfg)
			// Classic rungs: reading a classic unroutable queue changes
			// nothing on any release (a quorum one's on 4.3 only).
			mustRun(t, env, "apply", "--ladder", "w", "--layout", layout, "--unit", "1s", "--levels", "2", "--radix", "2", "--queue-type", "classic", "--target", "jobs.q")
			mustRun(t, env, "publish", "--ladder", "w", "--delay", "2s", "--to", "jobs.q", "--count", "5")
			deleteQueue(t, c, "jobs.q")
			m, err := broker.NewManagement(cfg)
			if err != nil {
				t.Fatal(err)
			}
			awaitDepth(t, m, cfg.Vhost, "w.unroutable", 5)
			out := mustRun(t, env, "status", "--ladder", "w")
			t.Logf("status: %s", lineWith(out, "meant for"))
			noStall(t, "status", out)
			wants(t, "status", out, "5 of 5 unroutable messages meant for jobs.q (queue jobs.q is gone)", "rungs apply --ladder w --target jobs.q")
			if strings.Contains(strings.Split(out, "remedy:")[0], "--to-origin") {
				t.Errorf("status suggests replay --to-origin before the route is restored:\n%s", out)
			}
			_, out, _ = run(t, env, "doctor", "--ladder", "w")
			t.Logf("doctor: %s", lineWith(out, "lost route to"))
			noStall(t, "doctor", out)
			wants(t, "doctor", out, "lost route to jobs.q: 5 messages held for it; queue jobs.q is gone")
			mustRun(t, env, "apply", "--ladder", "w", "--target", "jobs.q")
			mustRun(t, env, "replay", "--from", "w.unroutable", "--to-origin", "--yes")
			if got := drain(t, c, "jobs.q", 5, 30*time.Second); len(got) != 5 {
				t.Fatalf("%d of 5 reached jobs.q once restored and replayed", len(got))
			}
		})
	}
}

func awaitDepth(t *testing.T, m *broker.Management, vhost, queue string, n int64) {
	t.Helper()
	_ = testutil.Until(t, 30*time.Second, func() error {
		qs, err := m.QueueStats(context.Background(), vhost, []string{queue})
		if err != nil || len(qs) != 1 || qs[0].Stats.Messages() < n {
			return fmt.Errorf("%s does not hold %d yet: %+v %v", queue, n, qs, err)
		}
		return nil
	})
}

// 200 Celery tasks for emails, then 50 for celery, in one quorum rung
// whose emails queue is gone: the rung's dead-letter worker holds the
// first 32 it cannot route (its prefetch) and takes no more, so the
// celery tasks behind them wait too (measured on 3.10.8, 4.0.5 and 4.3.6:
// none of the 50 arrived; all 50 did when published first). status counts
// 32 as emails' and says the rest may wait behind them; restored and
// rerouted, all 250 arrive.
//
// emails goes before the tasks are published: deleted after, a task that
// expired first reached the old queue and went with it (on a loaded
// machine 113 of 200 did, which once read as tasks the restore did not
// deliver).
func TestLostRouteCeleryHeldBehind(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	l, err := topology.Ladder{Name: "celery", Layout: "celery", Unit: time.Second, Levels: 28, Radix: 2, QueueType: topology.Quorum, Targets: []string{"celery", "emails"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	declare(t, c, topology.Plan{
		Exchanges: []topology.Exchange{{Name: "celery", Type: "topic", Durable: true}, {Name: "emails", Type: "topic", Durable: true}},
		Queues:    []topology.Queue{{Name: "celery", Durable: true}, {Name: "emails", Durable: true}},
	})
	declare(t, c, l.Plan())
	deleteQueue(t, c, "emails")
	// Published as a Celery producer does, without rungs publish's route
	// check (which refuses a message for emails now).
	task := func(dest string) broker.Message {
		tr, err := l.Trace(2*time.Second, dest)
		if err != nil {
			t.Fatal(err)
		}
		return ops.Delayed{Trace: tr, Body: []byte(dest), Persistent: true}.Messages(1, 1, time.Now())[0]
	}
	var msgs []broker.Message
	for i := 0; i < 250; i++ {
		msgs = append(msgs, task(map[bool]string{true: "emails", false: "celery"}[i < 200]))
	}
	if _, err := c.Publish(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	brokertest.AwaitStats(t, cfg, "celery_delayed_1", func(s topology.QueueStats) bool { return s.Expired == 250 })
	var out string
	_ = testutil.Until(t, 60*time.Second, func() error {
		_, out, _ = run(t, env, "status", "--ladder", "celery")
		if !strings.Contains(out, "218 may wait") {
			return fmt.Errorf("status does not count the 250 held yet:\n%s", out)
		}
		return nil
	})
	t.Logf("status: %s", lineWith(out, "lost route:"))
	noStall(t, "status", out)
	// The line wraps: read it as one.
	wants(t, "status", strings.Join(strings.Fields(out), " "),
		"lost route: 250 expired held (queue emails is gone): at least 32 for emails, 218 may wait behind them for any destination",
		"remedy: restore emails:")
	if got := drain(t, c, "celery", 50, 3*time.Second); len(got) != 0 {
		t.Errorf("%d of the 50 celery tasks behind the held ones arrived while emails was gone", len(got))
	}
	declare(t, c, topology.Plan{
		Queues:   []topology.Queue{{Name: "emails", Durable: true}},
		Bindings: []topology.Binding{{Source: "emails", Destination: "emails", DestinationType: topology.ToQueue, RoutingKey: "#.emails"}},
	})
	mustRun(t, env, "reroute", "--ladder", "celery", "--yes")
	if got := drain(t, c, "emails", 200, 60*time.Second); len(got) != 200 {
		t.Fatalf("%d of 200 held tasks reached emails once its route was restored", len(got))
	}
	if got := drain(t, c, "celery", 50, 60*time.Second); len(got) != 50 {
		t.Fatalf("%d of the 50 tasks behind them reached celery", len(got))
	}
}
