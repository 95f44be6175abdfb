package ops

import (
	"context"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// counting counts the observer's requests to a real management API.
type counting struct {
	m                *broker.Management
	snapshots, stats int
}

func (c *counting) Snapshot(ctx context.Context, vhost string) (topology.Snapshot, error) {
	c.snapshots++
	return c.m.Snapshot(ctx, vhost)
}

func (c *counting) Stats(ctx context.Context, vhost string) ([]topology.Queue, error) {
	c.stats++
	return c.m.Stats(ctx, vhost)
}

// TestObserverRealBroker watches a ladder on the test broker: the first
// read is a snapshot, later ones one statistics request, a new queue
// brings a snapshot at once, only the ladder in scope is reported, and
// the messages published show in its totals and forecast, none stuck or
// stalled.
func TestObserverRealBroker(t *testing.T) {
	t.Parallel()
	env := brokertest.Require(t)
	cfg := env.NewVhost(t)
	ctx := context.Background()
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var watched topology.Ladder
	for _, name := range []string{"other", "watched"} {
		l, err := topology.Ladder{Name: name, Vhost: cfg.Vhost, Unit: time.Second, Levels: 8, Radix: 2}.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Apply(ctx, l.Plan()); err != nil {
			t.Fatal(err)
		}
		watched = l
	}
	// 200s waits 128s in level 7 first: long enough to be read there.
	tr, err := watched.Trace(200*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	msgs := Delayed{Trace: tr, Body: []byte("x")}.Messages(0, 3, time.Now())
	if res, err := conn.Publish(ctx, msgs); err != nil || res.Confirmed != 3 {
		t.Fatalf("publish: %+v %v", res, err)
	}
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	insp := &counting{m: m}
	// The whole vhost, asked for: what is counted is its requests.
	o := NewObserver(Scope{Vhost: cfg.Vhost, Ladders: []string{"watched"}, Reach: ReachVhost})
	refresh := func() bool {
		t.Helper()
		var snapped bool
		o, snapped, err = o.Refresh(ctx, insp, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		return snapped
	}
	if !refresh() || insp.snapshots != 1 || insp.stats != 0 {
		t.Fatalf("first read: %d snapshots, %d stats", insp.snapshots, insp.stats)
	}
	// The management API shows a publish at its next statistics emission
	// (every 5s by default): read until the messages show, as the console
	// would, a statistics request each time.
	for i := 0; i < 24 && o.Report(o.At()).Totals.InFlight < 3; i++ {
		if err := Sleep(ctx, StallSampleEvery); err != nil {
			t.Fatal(err)
		}
		refresh()
	}
	rep := o.Report(o.At())
	if len(rep.Ladders) != 1 || rep.Ladders[0].Found.Ladder.Name != "watched" {
		t.Fatalf("scope: %d ladders reported", len(rep.Ladders))
	}
	lr := rep.Ladders[0]
	if tt := lr.Totals; tt.InFlight != 3 || tt.Stuck != 0 || tt.Stalled != 0 || tt.Missing != 0 || tt.Drift != 0 {
		t.Fatalf("totals %+v", tt)
	}
	if lr.Forecast.Messages != 3 || lr.Forecast.Unknown != 0 {
		t.Errorf("forecast %+v", lr.Forecast)
	}
	for _, r := range lr.Rows {
		if r.Queue == tr.Hops[0].Queue && r.Stats.Ready != 3 {
			t.Errorf("%s holds %d ready", r.Queue, r.Stats.Ready)
		}
	}
	if insp.stats == 0 || insp.snapshots > 1+insp.stats/(SnapshotEvery-1) {
		t.Errorf("%d snapshots for %d statistics reads", insp.snapshots, insp.stats)
	}
	// A queue comes: the next refresh, due to read only the statistics,
	// re-reads the snapshot at once.
	for o.Next().Snapshot {
		refresh()
	}
	extra := topology.Plan{Queues: []topology.Queue{{Name: "watched.extra", Durable: true}}}
	if _, err := conn.Apply(ctx, extra); err != nil {
		t.Fatal(err)
	}
	if !refresh() {
		t.Error("a new queue did not bring a snapshot")
	}
	if _, ok := o.Snapshot().Queue("watched.extra"); !ok {
		t.Error("the new queue is not in the snapshot")
	}
}
