package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// live is a test's own vhost on the real broker.
type live struct {
	cfg   broker.Config
	vhost string
	conn  *broker.Conn
	mgmt  *broker.Management
}

func newLive(t *testing.T) live {
	t.Helper()
	cfg := brokertest.NewVhost(t)
	conn, err := broker.Dial(ctxFor(t, 10*time.Second), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	mgmt, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return live{cfg: cfg, vhost: cfg.Vhost, conn: conn, mgmt: mgmt}
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// apply declares the ladder and its destination queues, as rungs apply
// does with workers' queues already there.
func (e live) apply(t *testing.T, l topology.Ladder) topology.Ladder {
	t.Helper()
	l.Vhost = e.vhost
	l, err := l.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	var dests topology.Plan
	for _, q := range l.Targets {
		dests.Queues = append(dests.Queues, topology.Queue{Name: q, Durable: true})
	}
	for _, p := range []topology.Plan{dests, l.Plan()} {
		if _, err := e.conn.Apply(ctxFor(t, time.Minute), p); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// publish sends each message with confirms.
func (e live) publish(t *testing.T, msgs ...broker.Message) {
	t.Helper()
	res, err := e.conn.Publish(ctxFor(t, 30*time.Second), msgs)
	if err != nil || res.Confirmed != len(msgs) {
		t.Fatalf("publish: %+v %v", res, err)
	}
}

// snapshotWhen reads the vhost until ok accepts it: the management API's
// queue counts follow the queues a stats interval late.
func (e live) snapshotWhen(t *testing.T, ok func(topology.Snapshot) bool) topology.Snapshot {
	t.Helper()
	ctx := ctxFor(t, 2*time.Minute)
	for {
		s, err := e.mgmt.Snapshot(ctx, e.vhost)
		if err != nil {
			t.Fatal(err)
		}
		if ok(s) {
			return s
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the snapshot never settled: %+v", s.Queues)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (e live) version(t *testing.T) topology.Version {
	t.Helper()
	v, err := e.mgmt.Version(ctxFor(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readyIn(s topology.Snapshot, queues ...string) int64 {
	var n int64
	for _, q := range queues {
		if st, ok := s.Queue(q); ok {
			n += st.Stats.Ready
		}
	}
	return n
}

func TestPurgePlanAndRun(t *testing.T) {
	t.Parallel()
	e := newLive(t)
	l := e.apply(t, topology.Ladder{Name: "pg", Layout: "prefix", Unit: time.Minute, Levels: 4, Radix: 2, Targets: []string{"pg.work"}})
	var msgs []broker.Message
	for i := range 6 {
		tr, err := l.Trace(time.Duration(1+i%3)*time.Minute, "")
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, broker.Message{Exchange: tr.Exchange, RoutingKey: tr.Key, Body: []byte(fmt.Sprint(i))})
	}
	// Two jobs waiting for a worker: a ladder purge must leave them.
	msgs = append(msgs, broker.Message{RoutingKey: "pg.work", Body: []byte("job")}, broker.Message{RoutingKey: "pg.work", Body: []byte("job")})
	e.publish(t, msgs...)
	var rungs []string
	for _, r := range l.Rungs() {
		rungs = append(rungs, r.Queue)
	}
	snap := e.snapshotWhen(t, func(s topology.Snapshot) bool { return readyIn(s, rungs...) == 6 && readyIn(s, "pg.work") == 2 })
	found := topology.Discover(snap)
	f, err := FindLadder(found, LadderQuery{Name: "pg"})
	if err != nil {
		t.Fatal(err)
	}

	p, err := PlanPurge(snap, found, e.version(t), PurgeRequest{Ladder: f.Ladder})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Queues) != len(l.Rungs())+len(l.Terminals()) || p.Lost() != 6 || len(p.Untouched) != 1 || p.Untouched[0] != "pg.work" {
		t.Fatalf("plan %+v", p)
	}
	if d := p.Deepest(2); len(d) != 2 || d[0].Lost() < d[1].Lost() || d[0].Role != topology.RoleRung {
		t.Errorf("deepest %+v", d)
	}
	var seen []PurgeProgress
	res, err := p.Run(ctxFor(t, time.Minute), e.conn, func(pp PurgeProgress) { seen = append(seen, pp) })
	if err != nil || res.Purged != 6 || len(res.Queues) != len(p.Queues) || res.Failed != "" {
		t.Fatalf("run: %+v %v", res, err)
	}
	if last := seen[len(seen)-1]; len(seen) != len(p.Queues) || last.Done != last.Of || last.Purged != 6 {
		t.Errorf("progress %+v", seen)
	}
	if n, err := e.conn.Purge(ctxFor(t, 10*time.Second), "pg.work"); err != nil || n != 2 {
		t.Errorf("the destination queue held %d (%v), want its 2 jobs untouched", n, err)
	}

	one, err := PlanPurge(snap, found, topology.Version{}, PurgeRequest{Queue: rungs[0]})
	if err != nil || len(one.Queues) != 1 || one.Queues[0].Role != topology.RoleRung || one.Ladder != nil {
		t.Errorf("one queue: %+v %v", one, err)
	}
	if _, err := PlanPurge(snap, found, topology.Version{}, PurgeRequest{Queue: "no.such"}); err == nil || err.Error() != fmt.Sprintf("no queue %q in vhost %s", "no.such", e.vhost) {
		t.Errorf("missing queue: %v", err)
	}
	// A queue deleted between plan and run stops the purge there, and
	// the result says what was purged before.
	gone := PurgePlan{Queues: []PurgeQueue{{Queue: "pg.done"}, {Queue: "no.such"}, {Queue: "pg.unroutable"}}}
	res, err = gone.Run(ctxFor(t, time.Minute), e.conn, nil)
	if err == nil || res.Failed != "no.such" || len(res.Queues) != 1 {
		t.Errorf("run over a missing queue: %+v %v", res, err)
	}
}

func TestTraceChecksTheRouteOnTheBroker(t *testing.T) {
	t.Parallel()
	e := newLive(t)
	l := e.apply(t, topology.Ladder{Name: "tr", Layout: "prefix", Unit: time.Second, Levels: 6, Radix: 2, Targets: []string{"tr.work"}})
	snap := e.snapshotWhen(t, func(s topology.Snapshot) bool { return len(topology.Discover(s)) == 1 })
	req, err := ParseTraceInput(l, "5s tr.work")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Trace(req, topology.NewGraph(snap), nil)
	if err != nil || !got.Check.Checked || got.Check.Err != nil || got.Trace.Target != "tr.work" {
		t.Fatalf("trace on an applied ladder: %+v %v", got, err)
	}
	// The key spells the same trace.
	if byKey, err := Trace(TraceRequest{Ladder: l, Key: got.Trace.Key}, topology.NewGraph(snap), nil); err != nil || byKey.Trace.Delay != got.Trace.Delay || byKey.Trace.Target != "tr.work" {
		t.Errorf("by key: %+v %v", byKey, err)
	}
	// Delete the first rung the message enters, bindings and all: the
	// check says so.
	gone := got.Trace.Hops[0].Queue
	if err := e.conn.Teardown(ctxFor(t, 10*time.Second), topology.Plan{Queues: []topology.Queue{{Name: gone}}}); err != nil {
		t.Fatal(err)
	}
	snap = e.snapshotWhen(t, func(s topology.Snapshot) bool { _, ok := s.Queue(gone); return !ok })
	if got, err := Trace(req, topology.NewGraph(snap), nil); err != nil || got.Check.Err == nil {
		t.Errorf("trace over a missing binding: %+v %v", got, err)
	}
	if got, _ := Trace(req, nil, fmt.Errorf("401")); got.Check.Checked || got.Check.Unchecked != "not checked against the broker: 401" {
		t.Errorf("without bindings: %+v", got.Check)
	}
	for _, in := range []string{"", "5s a b", "soon"} {
		if _, err := ParseTraceInput(l, in); err == nil {
			t.Errorf("ParseTraceInput(%q) accepted it", in)
		}
	}
}

func TestPeekGateOnTheBroker(t *testing.T) {
	t.Parallel()
	e := newLive(t)
	l := e.apply(t, topology.Ladder{Name: "gq", Layout: "prefix", Unit: time.Second, Levels: 3, Radix: 2, QueueType: topology.Quorum})
	if _, err := e.conn.Apply(ctxFor(t, time.Minute), topology.Plan{Queues: []topology.Queue{
		{Name: "plain", Durable: true},
		{Name: "qq", Durable: true, Args: topology.Args{"x-queue-type": "quorum"}},
		{Name: "limited", Durable: true, Args: topology.Args{"x-queue-type": "quorum", "x-delivery-limit": int64(5)}},
	}}); err != nil {
		t.Fatal(err)
	}
	// gn is applied as rungs apply declares it on this release; gq as an
	// earlier rungs did, with the release's default delivery limit.
	v := e.version(t)
	gn, _ := topology.Ladder{Name: "gn", Vhost: e.vhost, Layout: "prefix", Unit: time.Second, Levels: 3, Radix: 2, QueueType: topology.Quorum}.Normalize()
	if _, err := e.conn.Apply(ctxFor(t, time.Minute), gn.Plan().ForRelease(v)); err != nil {
		t.Fatalf("%v: %v", v, err)
	}
	snap := e.snapshotWhen(t, func(s topology.Snapshot) bool {
		_, ok := s.Queue("limited")
		_, gnOK := s.Queue(gn.Rungs()[1].Queue)
		return ok && gnOK
	})
	ladders := Ladders(topology.Discover(snap))
	gate := func(name string, force, readOnly bool) PeekGate {
		t.Helper()
		q, ok := snap.Queue(name)
		if !ok {
			t.Fatalf("no queue %s", name)
		}
		f, err := e.mgmt.PeekFacts(ctxFor(t, 10*time.Second), e.vhost, q)
		if err != nil {
			t.Fatal(err)
		}
		return GatePeek(PeekRequest{Queue: q, Ladders: ladders, Version: f.Version, Limit: f.Limit, LimitKnown: f.LimitKnown,
			DelayedRetries: f.DelayedRetries, Force: force, ReadOnly: readOnly})
	}
	rung := l.Rungs()[1].Queue
	type want struct {
		got     PeekGate
		verdict PeekVerdict
		why     string
	}
	cases := map[string]want{
		"classic":                   {gate("plain", false, false), PeekOK, ""},
		"classic, read-only":        {gate("plain", false, true), PeekOK, ""},
		"quorum rung":               {gate(rung, false, false), PeekNeedsForce, "rung of quorum ladder gq"},
		"quorum rung, forced":       {gate(rung, true, false), PeekOK, "rung of quorum ladder gq"},
		"quorum rung, read-only":    {gate(rung, true, true), PeekReadOnly, "rung of quorum ladder gq"},
		"quorum, limit 5":           {gate("limited", false, false), PeekNeedsForce, "delivery limit of 5"},
		"quorum, limit 5, forced":   {gate("limited", true, false), PeekOK, "delivery limit of 5"},
		"quorum, read-only":         {gate("qq", false, true), PeekReadOnly, "qq is a quorum queue"},
		"quorum, version's default": {gate("qq", false, false), PeekOK, "qq is a quorum queue"},
	}
	// RabbitMQ 4 gives every quorum queue a delivery limit of 20; 3.x none,
	// so there a rung with no limit is read without --force.
	if n := v.QuorumDefaultDeliveryLimit(); n > 0 {
		cases["quorum, version's default"] = want{gate("qq", false, false), PeekNeedsForce, fmt.Sprintf("delivery limit of %d", n)}
	} else {
		cases["quorum rung"] = want{gate(rung, false, false), PeekOK, "rung of quorum ladder gq with no delivery limit"}
	}
	// A rung as rungs apply declares it is read without --force on every
	// release; before 4.3 a read still raises its count, so read-only
	// refuses it.
	gnRung := gn.Rungs()[1].Queue
	cases["rung applied for the release"] = want{gate(gnRung, false, false), PeekOK, ""}
	if v.QuorumRequeueNackCounts() {
		cases["rung applied for the release"] = want{cases["rung applied for the release"].got, PeekOK, "rung of quorum ladder gn with no delivery limit"}
		cases["rung applied for the release, read-only"] = want{gate(gnRung, false, true), PeekReadOnly, "with no delivery limit"}
	}
	if !v.QuorumRequeueNackCounts() {
		// 4.3: a peek's nack is a return, which no limit counts.
		for _, name := range []string{"quorum rung", "quorum rung, forced", "quorum rung, read-only", "quorum, limit 5", "quorum, limit 5, forced", "quorum, read-only", "quorum, version's default"} {
			cases[name] = want{cases[name].got, PeekOK, ""}
		}
		// ...but a delayed retry of returns holds what a peek hands back.
		if code := brokertest.PutPolicy(t, e.cfg, "slow", `{"pattern":"^gq\\.rung\\.","definition":{"delayed-retry-type":"all","delayed-retry-min":3000},"apply-to":"queues"}`); code >= 300 {
			t.Fatalf("%v refused the delayed-retry policy: %d", v, code)
		}
		cases["4.3 rung with delayed retry"] = want{gate(rung, false, false), PeekNeedsForce, "policy slow (type all, 3s)"}
		cases["4.3 rung with delayed retry, read-only"] = want{gate(rung, true, true), PeekReadOnly, "policy slow"}
	}
	for name, tc := range cases {
		if tc.got.Verdict != tc.verdict || !tc.got.Checked || !strings.Contains(tc.got.Why, tc.why) {
			t.Errorf("%s (RabbitMQ %s): verdict %d, why %q; want %d, %q", name, v, tc.got.Verdict, tc.got.Why, tc.verdict, tc.why)
		}
	}
	if g := cases["classic"].got; g.Note != "" || g.Risk.ChangesBroker {
		t.Errorf("a classic peek changes the broker: %+v", g)
	}

	why := fmt.Errorf("connection refused")
	for _, tc := range []struct {
		force, readOnly bool
		verdict         PeekVerdict
	}{{false, false, PeekNeedsForce}, {true, true, PeekReadOnly}, {true, false, PeekOK}} {
		g := GatePeek(PeekRequest{Queue: topology.Queue{Name: "x"}, Unchecked: why, Force: tc.force, ReadOnly: tc.readOnly})
		if g.Verdict != tc.verdict || g.Checked || (tc.verdict == PeekOK) != (g.Note != "") {
			t.Errorf("unchecked, force %v, read-only %v: %+v", tc.force, tc.readOnly, g)
		}
	}
}

func TestReplayPlanOnTheBroker(t *testing.T) {
	t.Parallel()
	e := newLive(t)
	l := e.apply(t, topology.Ladder{Name: "rp", Layout: "prefix", Unit: time.Second, Levels: 6, Radix: 2, Targets: []string{"rp.work"}})
	if _, err := e.conn.Apply(ctxFor(t, time.Minute), topology.Plan{Queues: []topology.Queue{{Name: "rp.dlq", Durable: true}}}); err != nil {
		t.Fatal(err)
	}
	e.publish(t, broker.Message{RoutingKey: "rp.dlq", Body: []byte("a"), Headers: map[string]any{"tenant": []byte("acme")}},
		broker.Message{RoutingKey: "rp.dlq", Body: []byte("b"), Headers: map[string]any{"tenant": "other"}})
	snap := e.snapshotWhen(t, func(s topology.Snapshot) bool { return readyIn(s, "rp.dlq") == 2 })
	scope := NewBrokerView(snap)

	p, err := ReplayRequest{Source: "rp.dlq", To: ReplayTo{Ladder: &l, Delay: 5 * time.Second, Dest: "rp.work"}, Limit: 0, Where: []string{"tenant=acme"}}.Plan(scope)
	if err != nil || p.Ready != 2 || p.Options.Limit != 0 || p.Options.Filter == nil || !strings.HasPrefix(p.Describe, "into ladder rp: 5s later to rp.work") {
		t.Fatalf("into the ladder: %+v %v", p, err)
	}
	res, err := e.conn.Move(ctxFor(t, time.Minute), p.Options)
	if err != nil || res.Moved != 1 || res.Skipped != 1 {
		t.Fatalf("the planned Move: %+v %v", res, err)
	}

	var nq *NoQueueError
	if _, err := (ReplayRequest{Source: "rp.gone", To: ReplayTo{Origin: true}}).Plan(scope); !errors.As(err, &nq) {
		t.Errorf("a missing source: %v", err)
	}
	var fe *FieldError
	if _, err := (ReplayRequest{Source: "rp.dlq", To: ReplayTo{Queue: "rp.nowhere"}}).Plan(scope); !errors.As(err, &fe) || fe.Field != "queue" {
		t.Errorf("a missing destination: %v", err)
	}
	if _, err := (ReplayRequest{Source: "rp.work", To: ReplayTo{Ladder: &l, Delay: time.Second, Dest: "rp.work"}}).Plan(scope); err == nil {
		t.Error("a replay into a ladder that delivers back to the source was planned")
	}
	// Without the management API only the request itself is checked.
	if p, err := (ReplayRequest{Source: "rp.gone", To: ReplayTo{Queue: "rp.nowhere"}}).Plan(nil); err != nil || p.Ready != -1 {
		t.Errorf("unchecked: %+v %v", p, err)
	}
}

// TestPurgeCountsWhatTheReleaseDeletes checks the purge plan's count
// against what the broker's purge deletes, on each release: 4.3 purges a
// quorum queue's expired messages waiting to be dead-lettered and those a
// delayed retry holds; older releases purge ready messages only.
func TestPurgeCountsWhatTheReleaseDeletes(t *testing.T) {
	t.Parallel()
	e := newLive(t)
	ver := e.version(t)
	// "stuck" dead-letters at least once into an exchange that does not
	// exist, so its expired messages wait there (messages_dlx).
	// "held" retries returned messages after a minute (4.3's delayed retry;
	// older releases ignore the arguments).
	plan := topology.Plan{Queues: []topology.Queue{
		{Name: "stuck", Durable: true, Args: topology.Args{"x-queue-type": "quorum", "x-message-ttl": int64(50),
			"x-dead-letter-exchange": "nowhere", "x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"}},
		{Name: "held", Durable: true, Args: topology.Args{"x-queue-type": "quorum",
			"x-delayed-retry-type": "all", "x-delayed-retry-min": int64(60000)}},
	}}
	if _, err := e.conn.Apply(ctxFor(t, time.Minute), plan); err != nil {
		t.Fatal(err)
	}
	var msgs []broker.Message
	for i := range 3 {
		msgs = append(msgs, broker.Message{RoutingKey: "stuck", Body: []byte(fmt.Sprint(i))})
	}
	for i := range 5 {
		msgs = append(msgs, broker.Message{RoutingKey: "held", Body: []byte(fmt.Sprint(i))})
	}
	e.publish(t, msgs...)
	// Three of held's messages are handed back once: delayed on 4.3.
	if _, err := e.conn.Peek(ctxFor(t, 10*time.Second), "held", 3); err != nil {
		t.Fatal(err)
	}
	wantDelayed := int64(0)
	if ver.QuorumDelayedRetry() {
		wantDelayed = 3
	}
	snap := e.snapshotWhen(t, func(s topology.Snapshot) bool {
		st, _ := s.Queue("stuck")
		h, _ := s.Queue("held")
		return st.Stats.Expired == 3 && h.Stats.Delayed == wantDelayed && h.Stats.Ready == 5-wantDelayed
	})
	found := topology.Discover(snap)
	for _, c := range []struct {
		queue string
		want  int64
	}{
		{"stuck", map[bool]int64{true: 3, false: 0}[ver.QuorumPurgeTakesExpired()]},
		{"held", 5},
	} {
		p, err := PlanPurge(snap, found, ver, PurgeRequest{Queue: c.queue})
		if err != nil {
			t.Fatal(err)
		}
		if p.Lost() != c.want {
			t.Errorf("%v: the plan to purge %s counts %d (%s), want %d", ver, c.queue, p.Lost(), p.Total().Describe(), c.want)
		}
		res, err := p.Run(ctxFor(t, time.Minute), e.conn, nil)
		if err != nil || int64(res.Purged) != p.Lost() {
			t.Errorf("%v: purging %s deleted %d (%v); the plan said %d", ver, c.queue, res.Purged, err, p.Lost())
		}
	}
	// What an older release's purge leaves still waits there.
	if !ver.QuorumPurgeTakesExpired() {
		e.snapshotWhen(t, func(s topology.Snapshot) bool {
			st, _ := s.Queue("stuck")
			return st.Stats.Expired == 3
		})
	}
}
