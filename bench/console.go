package bench

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// ConsoleRungs is the rung count of the console fixture's ladders: binary
// ladders of the default range, 28 levels, the size the render
// target names.
const ConsoleRungs = topology.DefaultBinaryLevels

// Render sizes the run times the ladder view at.
const (
	renderWidth  = 120
	renderHeight = 40
)

// ConsoleFixture is the vhost the console's cost is measured against:
// queues/100 (at most 10) prefix ladders of 28 rungs, and plain queues up to
// queues in all. The last plan holds the plain queues.
func ConsoleFixture(vhost string, queues int) []topology.Plan {
	n := min(10, queues/100)
	var plans []topology.Plan
	total := 0
	for i := 0; i < n; i++ {
		l, err := topology.Ladder{Name: fmt.Sprintf("console.l%02d", i), Vhost: vhost, Unit: time.Second, Levels: ConsoleRungs, Radix: 2, QueueType: topology.Classic}.Normalize()
		if err != nil {
			continue // cannot happen: the ladder is valid by construction
		}
		p := l.Plan()
		total += len(p.Queues)
		plans = append(plans, p)
	}
	plain := topology.Plan{Ladder: topology.Ladder{Vhost: vhost}}
	for i := total; i < queues; i++ {
		plain.Queues = append(plain.Queues, topology.Queue{Name: fmt.Sprintf("console.q%04d", i), Durable: true})
	}
	return append(plans, plain)
}

// ConsoleSnapshot is the fixture as a snapshot, with some depth in every
// rung, for benchmarks that need no broker.
func ConsoleSnapshot(queues int) topology.Snapshot {
	snap := topology.Snapshot{Vhost: "bench"}
	for _, p := range ConsoleFixture("bench", queues) {
		snap = snap.Merge(p.Snapshot())
	}
	for i := range snap.Queues {
		snap.Queues[i].Stats = topology.QueueStats{Ready: int64(i % 97), PublishRate: float64(i%13) * 1.5, DeliverRate: float64(i%11) * 1.5, Type: "classic", State: "running"}
	}
	return snap
}

// consoleCost builds the fixture in the run's vhost and measures, through
// the console's observer (ops.Observer), one full read (the snapshot) and
// one refresh (the statistics), then discovery and, when a renderer is
// given, rendering one ladder view.
func consoleCost(ctx context.Context, cfg broker.Config, mgmt *broker.Management, conn *broker.Conn, o Options) (ConsoleCost, error) {
	var c ConsoleCost
	plans := ConsoleFixture(cfg.Vhost, o.Queues)
	for _, p := range plans {
		if _, err := conn.Apply(ctx, p); err != nil {
			return c, err
		}
		c.Exchanges += len(p.Exchanges)
		c.Bindings += len(p.Bindings)
		if p.Ladder.Levels > 0 {
			c.Ladders++
		}
	}
	c.Queues, c.RungsPerLadder = o.Queues, ConsoleRungs

	// The console's own observer of its ladder list: every ladder of the
	// vhost, never the plain queues beside them. Its first read is the
	// full snapshot, the next one a refresh of the statistics, as the
	// console does.
	obs := ops.NewObserver(ops.Scope{Vhost: cfg.Vhost})
	r0, b0 := mgmt.Cost()
	obs, _, err := obs.Refresh(ctx, mgmt, time.Now)
	if err != nil {
		return c, err
	}
	r1, b1 := mgmt.Cost()
	c.SnapshotRequests, c.SnapshotBytes = r1-r0, b1-b0
	snap := obs.Snapshot()
	if obs, _, err = obs.Refresh(ctx, mgmt, time.Now); err != nil {
		return c, err
	}
	r2, b2 := mgmt.Cost()
	c.StatsRequests, c.StatsBytes = r2-r1, b2-b1
	if n, want := len(obs.Snapshot().Queues), ladderQueues(plans); n != want {
		return c, fmt.Errorf("refresh read %d queues, the fixture's ladders have %d", n, want)
	}

	found := topology.Discover(snap)
	if len(found) != c.Ladders {
		return c, fmt.Errorf("discovered %d ladders, the fixture has %d", len(found), c.Ladders)
	}
	c.DiscoverNs = timeOp(o.Smoke, func() { topology.Discover(snap) })
	if o.Render != nil && len(found) > 0 {
		f := found[0]
		c.RowsNs = timeOp(o.Smoke, func() { o.Render(f, snap) })
		view := o.Render(f, snap)
		c.RenderNs = timeOp(o.Smoke, func() { view(renderWidth, renderHeight) })
		c.RenderSize = fmt.Sprintf("%d×%d", renderWidth, renderHeight)
	}
	return c, nil
}

// ladderQueues counts the queues of the fixture's ladders: what the
// console's list reads, while the plain queues beside them cost it nothing.
func ladderQueues(plans []topology.Plan) int {
	n := 0
	for _, p := range plans {
		if p.Ladder.Levels > 0 {
			n += len(p.Queues)
		}
	}
	return n
}

// benchTime is how long timeOp measures an operation for, as
// testing.Benchmark does by default.
const benchTime = time.Second

// timeOp is f's time per call, or one call's in a smoke run, whose timings
// mean nothing anyway. It measures as testing.Benchmark does (batches of
// calls, each sized from the last, until one lasts benchTime) without
// linking the testing package into the rungs binary.
func timeOp(once bool, f func()) int64 {
	start := time.Now()
	f()
	took := time.Since(start)
	if once {
		return max(1, took.Nanoseconds())
	}
	n := 1
	for took < benchTime && n < 1e9 {
		n = nextBatch(n, took)
		runtime.GC()
		start = time.Now()
		for range n {
			f()
		}
		took = time.Since(start)
	}
	return max(1, took.Nanoseconds()/int64(n))
}

// nextBatch sizes the next batch so that it should last about 1.2 times
// benchTime, growing at most a hundredfold and at least by one.
func nextBatch(n int, took time.Duration) int {
	per := max(1, took.Nanoseconds()/int64(n))
	want := int(1.2 * float64(benchTime.Nanoseconds()) / float64(per))
	return max(n+1, min(want, 100*n, 1e9))
}
