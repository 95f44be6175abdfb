package ops

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// recorded replays broker readings: each read returns the next recorded
// snapshot (its queues alone for Stats), the last one again once they run
// out, and counts what was asked.
type recorded struct {
	snaps           []topology.Snapshot
	next            int
	snapshots, stat int
	err             error
}

func (r *recorded) take() topology.Snapshot {
	s := r.snaps[min(r.next, len(r.snaps)-1)]
	r.next++
	return s
}

func (r *recorded) Snapshot(context.Context, string) (topology.Snapshot, error) {
	r.snapshots++
	if r.err != nil {
		return topology.Snapshot{}, r.err
	}
	return r.take(), nil
}

func (r *recorded) Stats(context.Context, string) ([]topology.Queue, error) {
	r.stat++
	if r.err != nil {
		return nil, r.err
	}
	return r.take().Queues, nil
}

// clock is a test clock that sleeping advances.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func (c *clock) sleep(_ context.Context, d time.Duration) error {
	c.t = c.t.Add(d)
	return nil
}

func quorumLadder(t *testing.T) topology.Ladder {
	t.Helper()
	l, err := topology.Ladder{Name: "jobs", Levels: 4, Radix: 2, Unit: time.Second, QueueType: topology.Quorum}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// with returns the ladder's snapshot with stats set on the named queues.
func with(l topology.Ladder, stats map[string]topology.QueueStats) topology.Snapshot {
	s := l.Plan().Snapshot()
	for i, q := range s.Queues {
		if st, ok := stats[q.Name]; ok {
			s.Queues[i].Stats = st
		}
	}
	return s
}

func TestObserverSnapshotOrStats(t *testing.T) {
	l := quorumLadder(t)
	base := with(l, nil)
	grown := base.Merge(topology.Snapshot{Queues: []topology.Queue{{Name: "jobs.extra"}}})
	rec := &recorded{snaps: []topology.Snapshot{base}}
	c := &clock{time.Unix(1700000000, 0)}
	o := NewObserver(Scope{Vhost: "/", Reach: ReachVhost})
	if !o.Next().Snapshot {
		t.Fatal("the first read is not a snapshot")
	}
	var kinds []bool
	for i := 0; i < 2*SnapshotEvery; i++ {
		var snapped bool
		var err error
		o, snapped, err = o.Refresh(context.Background(), rec, c.now)
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, snapped)
	}
	for i, snapped := range kinds {
		if snapped != (i%SnapshotEvery == 0) {
			t.Fatalf("reads %v: want a snapshot every %d", kinds, SnapshotEvery)
		}
	}
	// Asked for, a snapshot comes next whatever the count.
	if !o.Resnap().Next().Snapshot {
		t.Error("Resnap did not make the next read a snapshot")
	}
	// A queue came: the same refresh reads the snapshot too.
	rec.snaps, rec.next = []topology.Snapshot{grown}, 0
	before := rec.snapshots
	o, snapped, err := o.Refresh(context.Background(), rec, c.now)
	if err != nil || !snapped || rec.snapshots != before+1 {
		t.Fatalf("a new queue: snapshotted %v, %d snapshots, %v", snapped, rec.snapshots-before, err)
	}
	if _, ok := o.Snapshot().Queue("jobs.extra"); !ok {
		t.Error("the new queue is not in the snapshot")
	}
	// A failed snapshot is due again; the last data stay.
	o = o.Resnap()
	rec.err = errors.New("connection refused")
	o, _, err = o.Refresh(context.Background(), rec, c.now)
	if err == nil || !o.Next().Snapshot || !o.Loaded() || len(o.Found()) != 1 {
		t.Fatalf("after a failed snapshot: err %v, next %+v, loaded %v", err, o.Next(), o.Loaded())
	}
}

// TestObserverStall feeds a recorded stall: one rung's waiting count
// stays at 536, another's falls. Only the first is stalled, once the stall
// window has passed, and it is counted once: stalled, not also stuck.
func TestObserverStall(t *testing.T) {
	l := quorumLadder(t)
	rs := l.Rungs()
	stalled, busy := rs[0].Queue, rs[1].Queue
	var snaps []topology.Snapshot
	for i := 0; i < 10; i++ {
		snaps = append(snaps, with(l, map[string]topology.QueueStats{
			stalled: {Expired: 536},
			busy:    {Ready: 3, Expired: int64(20 - i), PublishRate: 1},
		}))
	}
	rec := &recorded{snaps: snaps}
	c := &clock{time.Unix(1700000000, 0)}
	o, _, err := NewObserver(Scope{Vhost: "/", Reach: ReachVhost}).Refresh(context.Background(), rec, c.now)
	if err != nil {
		t.Fatal(err)
	}
	w := o.Waiting()
	if w.Rungs != 2 || w.Window != health.StallWindow(rs[0].TTL, health.DefaultInterval) {
		t.Fatalf("waiting %+v", w)
	}
	if r := o.Report(c.now()); r.Totals.Stalled != 0 {
		t.Fatalf("stalled before any history: %+v", r.Totals)
	}
	announced := StallWatch{}
	o, err = o.WatchStalls(context.Background(), rec, c.now, c.sleep, func(sw StallWatch) { announced = sw })
	if err != nil {
		t.Fatal(err)
	}
	if announced != w || rec.stat != int((w.Window+StallSampleEvery-1)/StallSampleEvery) {
		t.Errorf("announced %+v, %d samples", announced, rec.stat)
	}
	rep := o.Report(o.At())
	lr := rep.Ladders[0]
	byQueue := map[string]health.Row{}
	for _, r := range lr.Rows {
		byQueue[r.Queue] = r
	}
	if r := byQueue[stalled]; !r.Stalled || r.Stuck || r.Waited < w.Window {
		t.Errorf("stalled rung: %+v", r)
	}
	if r := byQueue[busy]; r.Stalled || r.Stuck {
		t.Errorf("busy rung: %+v", r)
	}
	left := int64(20 - rec.stat) // the busy rung's count at the last of 1+stat reads
	want := health.Totals{Ladders: 1, InFlight: 536 + 3 + left, Expired: 536 + left, HasUnroutable: true, Stalled: 1}
	if lr.Totals != want || rep.Totals != want {
		t.Errorf("totals\n%+v\n%+v, want\n%+v", lr.Totals, rep.Totals, want)
	}
	if lr.Totals.Attention() != 1 || lr.Forecast.Unknown != 536 {
		t.Errorf("attention %d, forecast unknown %d", lr.Totals.Attention(), lr.Forecast.Unknown)
	}
}

// TestObserverWatchEndsWhenAllDrain feeds two waiting rungs whose counts
// both fall (a busy ladder, as in the scale phase): the watch ends at the
// first sample that shows them both falling, not after the whole window,
// and neither is stalled.
func TestObserverWatchEndsWhenAllDrain(t *testing.T) {
	l := quorumLadder(t)
	rs := l.Rungs()
	var snaps []topology.Snapshot
	for i := 0; i < 10; i++ {
		snaps = append(snaps, with(l, map[string]topology.QueueStats{
			rs[0].Queue: {Expired: int64(500 - 100*i)},
			rs[1].Queue: {Ready: 3, Expired: int64(400 - 10*i), PublishRate: 1},
		}))
	}
	rec := &recorded{snaps: snaps}
	c := &clock{time.Unix(1700000000, 0)}
	o, _, err := NewObserver(Scope{Vhost: "/", Reach: ReachVhost}).Refresh(context.Background(), rec, c.now)
	if err != nil {
		t.Fatal(err)
	}
	if o, err = o.WatchStalls(context.Background(), rec, c.now, c.sleep, nil); err != nil {
		t.Fatal(err)
	}
	if rec.stat != 1 {
		t.Errorf("watched %d samples, want 1: both counts fell at the first", rec.stat)
	}
	if r := o.Report(o.At()); r.Totals.Stalled != 0 || r.Totals.Attention() != 0 {
		t.Errorf("draining rungs judged: %+v", r.Totals)
	}
}

// TestObserverMovement feeds a rung whose depth stands still: stuck once
// it has not moved for its TTL and two intervals, and not stalled. A rung
// whose depth moves is neither.
func TestObserverMovement(t *testing.T) {
	l, err := topology.Ladder{Name: "orders", Levels: 3, Radix: 2, Unit: time.Second, QueueType: topology.Classic}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	still, moving := l.Rungs()[0].Queue, l.Rungs()[1].Queue
	var snaps []topology.Snapshot
	for i := 0; i < 8; i++ {
		snaps = append(snaps, with(l, map[string]topology.QueueStats{
			still:  {Ready: 7},
			moving: {Ready: int64(10 + i)},
		}))
	}
	rec := &recorded{snaps: snaps}
	c := &clock{time.Unix(1700000000, 0)}
	o := NewObserver(Scope{Vhost: "/", Reach: ReachVhost}).WithIntervals(5*time.Second, 0)
	ttl := l.Rungs()[0].TTL
	var rep health.Report
	for i := range snaps {
		o, _, err = o.Refresh(context.Background(), rec, c.now)
		if err != nil {
			t.Fatal(err)
		}
		rep = o.Report(c.now())
		stuck := time.Duration(i)*5*time.Second > ttl+10*time.Second
		if got := rep.Ladders[0].Totals.Stuck; got != map[bool]int{true: 1}[stuck] {
			t.Fatalf("read %d (still %s): %d stuck", i, time.Duration(i)*5*time.Second, got)
		}
		_ = c.sleep(context.Background(), 5*time.Second)
	}
	if tt := rep.Totals; tt.Stalled != 0 || tt.Stuck != 1 || tt.InFlight != 7+17 {
		t.Errorf("totals %+v", tt)
	}
}

// The report forecasts at the observer's interval, the slower of the
// refresh and the broker's statistics interval, as the rules judge.
func TestObserverForecastInterval(t *testing.T) {
	l := quorumLadder(t)
	snap := with(l, map[string]topology.QueueStats{l.Rungs()[2].Queue: {Ready: 5, HeadAge: time.Second}})
	o, _, err := NewObserver(Scope{Vhost: "/", Reach: ReachVhost}).WithIntervals(30*time.Second, 10*time.Second).Refresh(context.Background(), &recorded{snaps: []topology.Snapshot{snap}}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	rep := o.Report(o.At())
	lr := rep.Ladders[0]
	if rep.Interval != 30*time.Second || o.Interval() != 30*time.Second {
		t.Fatalf("interval %s", rep.Interval)
	}
	want := health.Forecast(l, lr.Rows, 30*time.Second)
	if lr.Forecast.Latest != want.Latest || lr.Forecast.Messages != 5 {
		t.Errorf("forecast %+v, want %+v", lr.Forecast, want)
	}
}

func TestObserverScope(t *testing.T) {
	a, err := topology.Ladder{Name: "a", Levels: 2, Radix: 2, Unit: time.Second}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	b, err := topology.Ladder{Name: "b", Levels: 2, Radix: 2, Unit: time.Second}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	snap := a.Plan().Snapshot().Merge(b.Plan().Snapshot())
	o, _, err := NewObserver(Scope{Vhost: "/", Ladders: []string{"b"}, Reach: ReachVhost}).Refresh(context.Background(), &recorded{snaps: []topology.Snapshot{snap}}, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	rep := o.Report(o.At())
	if len(rep.Ladders) != 1 || rep.Ladders[0].Found.Ladder.Name != "b" || rep.Totals.Ladders != 1 {
		t.Fatalf("scope b: %d ladders", len(rep.Ladders))
	}
	// Two layouts under one name: a scope of one ladder watches that one.
	pre, err := topology.Ladder{Name: "b", Layout: "prefix", Levels: 2, Radix: 2, Unit: time.Second}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	suf, err := topology.Ladder{Name: "b", Layout: "suffix", Levels: 2, Radix: 2, Unit: time.Second}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	both := pre.Plan().Snapshot().Merge(suf.Plan().Snapshot())
	for _, l := range []topology.Ladder{pre, suf} {
		sc := ScopeOf("/", l)
		sc.Reach = ReachVhost
		if !sc.Watches(l) || sc.Same(Scope{Vhost: "/", Ladders: []string{"b"}}) {
			t.Errorf("ScopeOf(%s): %+v", l.Layout, sc)
		}
		o, _, err := NewObserver(sc).Refresh(context.Background(), &recorded{snaps: []topology.Snapshot{both}}, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		rep := o.Report(o.At())
		if len(rep.Ladders) != 1 || !SameLadder(rep.Ladders[0].Found.Ladder, l) {
			t.Errorf("scope of the %s ladder b watches %d ladders", l.Layout, len(rep.Ladders))
		}
	}
	// A scope of both watches both: identity is name and layout, not the
	// name alone (a map by name kept only the last layout).
	sc := ScopeOf("/", pre, suf)
	if !sc.Watches(pre) || !sc.Watches(suf) || !sc.Same(ScopeOf("/", suf, pre)) {
		t.Errorf("ScopeOf(prefix b, suffix b) = %+v", sc)
	}
}

// TestObserverWithScope narrows and widens an observer, as the console
// does when a ladder opens and closes: what it knows carries over, the
// ladders found follow the scope, the next read is the new scope's
// snapshot, and a reading taken for the old scope is ignored.
func TestObserverWithScope(t *testing.T) {
	l := quorumLadder(t)
	rec := &recorded{snaps: []topology.Snapshot{with(l, nil)}}
	c := &clock{time.Unix(1700000000, 0)}
	all := Scope{Vhost: "/", Reach: ReachVhost}
	o, _, err := NewObserver(all).Refresh(context.Background(), rec, c.now)
	if err != nil || len(o.Found()) != 1 {
		t.Fatalf("first read: %d ladders found, %v", len(o.Found()), err)
	}
	stale := o.Next().Do(context.Background(), rec, c.now)
	if same := o.WithScope(Scope{Vhost: "/", Reach: ReachVhost}); same.Next().Snapshot {
		t.Error("the same scope again forces a snapshot")
	}

	jobs := o.WithScope(Scope{Vhost: "/", Ladders: []string{"jobs"}, Reach: ReachVhost})
	if len(jobs.Found()) != 1 || !jobs.Loaded() || !jobs.Next().Snapshot || !jobs.Scope().Same(Scope{Vhost: "/", Ladders: []string{"jobs"}, Reach: ReachVhost}) {
		t.Fatalf("narrowed to jobs: %d found, loaded %v, next %+v", len(jobs.Found()), jobs.Loaded(), jobs.Next())
	}
	if other := o.WithScope(Scope{Vhost: "/", Ladders: []string{"other"}, Reach: ReachVhost}); len(other.Found()) != 0 || len(other.Snapshot().Queues) == 0 {
		t.Errorf("narrowed to another ladder: %d found, %d queues kept", len(other.Found()), len(other.Snapshot().Queues))
	}
	c.t = c.t.Add(time.Minute)
	if ignored, again := jobs.Observe(stale); again || !ignored.At().Equal(jobs.At()) || !ignored.Next().Snapshot {
		t.Error("a reading taken for the old scope was taken in")
	}
	if fresh := o.WithScope(Scope{Vhost: "other", Reach: ReachVhost}); fresh.Loaded() || len(fresh.Found()) != 0 {
		t.Error("another vhost starts with what the old one held")
	}
	back := jobs.WithScope(all)
	if back, _, err = back.Refresh(context.Background(), rec, c.now); err != nil || len(back.Found()) != 1 || !back.At().Equal(c.t) {
		t.Fatalf("widened again: %d found, at %v, %v", len(back.Found()), back.At(), err)
	}
}
