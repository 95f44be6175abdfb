package ops

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// listing records what an operation asks the management API for: a whole
// vhost (Snapshot, Stats) and listings (a scope not read by name) are what
// a read by name must not cost.
type listing struct {
	m *broker.Management
	sync.Mutex
	whole, listed int
}

func (l *listing) Snapshot(ctx context.Context, vhost string) (topology.Snapshot, error) {
	l.Lock()
	l.whole++
	l.Unlock()
	return l.m.Snapshot(ctx, vhost)
}

func (l *listing) Stats(ctx context.Context, vhost string) ([]topology.Queue, error) {
	l.Lock()
	l.whole++
	l.Unlock()
	return l.m.Stats(ctx, vhost)
}

func (l *listing) LadderSnapshot(ctx context.Context, sc topology.Scope) (topology.Snapshot, error) {
	if !sc.Bound {
		l.Lock()
		l.listed++
		l.Unlock()
	}
	return l.m.LadderSnapshot(ctx, sc)
}

func (l *listing) LadderStats(ctx context.Context, sc topology.Scope) ([]topology.Queue, error) {
	l.Lock()
	l.listed++
	l.Unlock()
	return l.m.LadderStats(ctx, sc)
}

func (l *listing) QueueStats(ctx context.Context, vhost string, names []string) ([]topology.Queue, error) {
	return l.m.QueueStats(ctx, vhost, names)
}

// Each operation's read finds what it names beside other queues without
// reading the vhost whole or listing it: peek, purge, a replay into a
// ladder and a ladder's own read.
func TestOperationsReadByName(t *testing.T) {
	t.Parallel()
	e := newLive(t)
	l := e.apply(t, topology.Ladder{Name: "rn", Layout: "prefix", Unit: time.Second, Levels: 3, Radix: 2, QueueType: topology.Classic, Targets: []string{"rn.work"}})
	if _, err := e.conn.Apply(ctxFor(t, time.Minute), topology.Plan{Queues: []topology.Queue{{Name: "dlq", Durable: true}}}); err != nil {
		t.Fatal(err)
	}
	brokertest.DeclareOthers(t, e.cfg, "other.", 50)
	e.snapshotWhen(t, func(s topology.Snapshot) bool { _, ok := s.Queue("dlq"); return ok })
	insp := &listing{m: e.mgmt}
	ctx := ctxFor(t, time.Minute)
	rung := l.Rungs()[1].Queue

	req, err := ReadPeek(ctx, insp, e.mgmt, e.vhost, rung)
	if err != nil || req.Unchecked != nil || req.Queue.QueueType() != topology.Classic || !slices.ContainsFunc(req.Ladders, func(x topology.Ladder) bool { return x.Name == "rn" }) {
		t.Fatalf("peek of %s: %+v, %v", rung, req, err)
	}
	if g := GatePeek(req); g.Risk.Ladder != "rn" || !g.Risk.Rung {
		t.Errorf("the gate did not see %s as a rung of rn: %+v", rung, g.Risk)
	}
	var nq *NoQueueError
	if _, err := ReadPeek(ctx, insp, e.mgmt, e.vhost, "gone"); !errors.As(err, &nq) {
		t.Errorf("peek of a queue not there: %v, want a NoQueueError", err)
	}

	snap, found, err := ReadPurge(ctx, insp, e.vhost, rung, "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanPurge(snap, found, topology.Version{}, PurgeRequest{Queue: rung})
	if err != nil || len(p.Queues) != 1 || p.Queues[0].Queue != rung {
		t.Errorf("purge of %s: %+v, %v", rung, p, err)
	}
	snap, found, err = ReadPurge(ctx, insp, e.vhost, "", "rn")
	if err != nil {
		t.Fatal(err)
	}
	f, err := FindLadder(found, LadderQuery{Name: "rn"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := PlanPurge(snap, found, topology.Version{}, PurgeRequest{Ladder: f.Ladder}); err != nil || len(p.Queues) != len(l.Plan().Queues) || !slices.Equal(p.Untouched, []string{"rn.work"}) {
		t.Errorf("purge of ladder rn: %d queues, untouched %v, %v", len(p.Queues), p.Untouched, err)
	}

	rr := ReplayRequest{Source: "dlq", To: ReplayTo{Ladder: &f.Ladder, Delay: 5 * time.Second}}
	view, err := ReadReplay(ctx, insp, e.vhost, rr, "rn")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rr.Plan(view); err != nil {
		t.Errorf("replay from dlq into rn: %v", err)
	}
	rr = ReplayRequest{Source: "dlq", To: ReplayTo{Queue: "rn.work"}}
	if view, err = ReadReplay(ctx, insp, e.vhost, rr, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := rr.Plan(view); err != nil {
		t.Errorf("replay from dlq to rn.work: %v", err)
	}
	rr.To.Queue = "gone"
	if view, err = ReadReplay(ctx, insp, e.vhost, rr, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := rr.Plan(view); !errors.As(err, &nq) {
		t.Errorf("replay to a queue not there: %v, want a NoQueueError", err)
	}

	snap, err = ReadLadder(ctx, insp, e.vhost, "rn")
	if err != nil {
		t.Fatal(err)
	}
	if d := topology.Diff(l.Plan(), snap); len(d) > 0 {
		t.Errorf("ladder rn read by name drifts from its plan: %v", d)
	}
	if insp.whole > 0 || insp.listed > 0 {
		t.Errorf("reads by name read the vhost whole %d times and listed it %d times", insp.whole, insp.listed)
	}
}

// The one count rule: at least one message, and more than MaxUnpaced
// only at a rate.
func TestPublishRequestCountRule(t *testing.T) {
	l := ladder(t)
	for _, c := range []struct {
		count int
		rate  float64
		ok    bool
	}{{1, 0, true}, {MaxUnpaced, 0, true}, {MaxUnpaced + 1, 0, false}, {MaxUnpaced + 1, 100, true}, {100 * MaxUnpaced, Unpaced, true}, {0, 0, false}, {0, 100, false}, {5, -1, false}} {
		req := PublishRequest{Ladder: l, Delay: 5 * time.Second, Count: c.count, Rate: c.rate}
		_, err := req.Plan(nil)
		var fe *FieldError
		if (err == nil) != c.ok || err != nil && !errors.As(err, &fe) {
			t.Errorf("count %d at %g/s: %v, want ok %v and a FieldError", c.count, c.rate, err, c.ok)
		}
	}
}

// Route refuses a trace the bindings would not deliver with a RouteError,
// and a delay the ladder cannot trace with that error.
func TestRouteTracesThenChecks(t *testing.T) {
	l := ladder(t)
	if _, err := Route(l, 5*time.Second, "", topology.NewGraph(topology.Snapshot{Vhost: "/"})); !errors.As(err, new(*RouteError)) {
		t.Errorf("a route over no bindings: %v, want a RouteError", err)
	}
	if tr, err := Route(l, 5*time.Second, "", topology.NewGraph(topology.Snapshot{Vhost: "/", Exchanges: l.Plan().Exchanges, Queues: l.Plan().Queues, Bindings: l.Plan().Bindings})); err != nil || tr.Delay != 5*time.Second {
		t.Errorf("a route over the plan's bindings: %v, %v", tr, err)
	}
	if _, err := Route(l, 5*time.Second, "", nil); err != nil {
		t.Errorf("unchecked: %v", err)
	}
	if _, err := Route(l, 100*time.Hour, "", nil); err == nil || errors.As(err, new(*RouteError)) {
		t.Errorf("a delay beyond the ladder: %v, want the trace's error", err)
	}
}

func TestLadderDelayNeedsOne(t *testing.T) {
	var fe *FieldError
	if _, err := LadderDelay(" "); !errors.As(err, &fe) || fe.Field != "delay" {
		t.Errorf("no delay: %v", err)
	}
	if _, err := LadderDelay("soon"); !errors.As(err, &fe) || fe.Field != "delay" {
		t.Errorf("a bad delay: %v", err)
	}
	if d, err := LadderDelay("5m"); err != nil || d != 5*time.Minute {
		t.Errorf("5m: %v, %v", d, err)
	}
}
