package lab

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
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

// ConsoleOptions configure the console phase.
type ConsoleOptions struct {
	// Queues is how many queues the phase's vhost holds.
	Queues int
	// Smoke times each in-process operation once: the timings mean
	// nothing, the requests and bytes still do.
	Smoke bool
}

// DefaultConsoleOptions is the vhost docs/benchmarks measures: 1,000 queues.
func DefaultConsoleOptions() ConsoleOptions { return ConsoleOptions{Queues: 1000} }

// ConsoleCost is what the console costs: management requests and bytes per
// refresh against a vhost of Queues queues, and in-process times.
type ConsoleCost struct {
	Queues         int `json:"queues"`
	Ladders        int `json:"ladders"`
	RungsPerLadder int `json:"rungs_per_ladder"`
	Exchanges      int `json:"exchanges"`
	Bindings       int `json:"bindings"`
	// Stats is the console's periodic refresh of its ladder list; Snapshot
	// its full read of the ladders' objects, done when the set of queues
	// changes. Neither reads the plain queues beside the ladders.
	StatsRequests    int64 `json:"stats_requests"`
	StatsBytes       int64 `json:"stats_bytes"`
	SnapshotRequests int64 `json:"snapshot_requests"`
	SnapshotBytes    int64 `json:"snapshot_bytes"`
	// DiscoverNs is topology.Discover on the snapshot (every ladder and
	// its drift); RowsNs builds one ladder's rows from the snapshot and
	// RenderNs renders its view from them.
	DiscoverNs int64  `json:"discover_ns"`
	RowsNs     int64  `json:"rows_ns"`
	RenderNs   int64  `json:"render_ns"`
	RenderSize string `json:"render_size,omitempty"`
}

// ConsoleReport is what the console phase measured.
type ConsoleReport struct {
	bench.RunInfo
	// Vhost is the run's own, removed at its end.
	Vhost    string         `json:"vhost"`
	Smoke    bool           `json:"smoke"`
	Console  ConsoleCost    `json:"console"`
	Targets  []bench.Target `json:"targets"`
	Problems []string       `json:"problems"`
}

// RunConsole builds the console fixture in a vhost of its own, which it
// removes afterwards, and measures what the console's observer reads and
// what building and rendering a ladder's view take.
func RunConsole(ctx context.Context, cfg broker.Config, mgmt *broker.Management, o ConsoleOptions) (rep ConsoleReport, err error) {
	rep = ConsoleReport{RunInfo: startRun(), Smoke: o.Smoke, Problems: []string{}}
	if o.Queues < 1 {
		return rep, fmt.Errorf("%w: a console vhost of %d queues (want at least 1)", bench.ErrOptions, o.Queues)
	}
	began := time.Now()
	if _, err := rep.MeetBroker(ctx, mgmt); err != nil {
		return rep, err
	}
	vh, err := bench.NewVhost(ctx, mgmt, cfg, "rungs-lab-console-")
	if err != nil {
		return rep, err
	}
	defer vh.Remove(ctx, time.Minute, &rep.Problems)
	rep.Vhost = vh.Config.Vhost
	vcfg := vh.Config
	conn, err := broker.Dial(ctx, vcfg)
	if err != nil {
		return rep, err
	}
	defer conn.Close()
	if rep.Console, err = consoleCost(ctx, vcfg, mgmt, conn, o); err != nil {
		return rep, fmt.Errorf("console cost: %w", err)
	}
	rep.Targets = rep.Console.targets()
	rep.Finish(began)
	return rep, nil
}

// consoleCost builds the fixture in cfg's vhost and measures, through the
// console's observer (ops.Observer), one full read (the snapshot) and one
// refresh (the statistics), then discovery and what the console does with
// a ladder on every refresh: build its rows, then render its view.
func consoleCost(ctx context.Context, cfg broker.Config, mgmt *broker.Management, conn *broker.Conn, o ConsoleOptions) (ConsoleCost, error) {
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
	if len(found) > 0 {
		f := found[0]
		c.RowsNs = timeOp(o.Smoke, func() { ladderView(f, snap) })
		view := ladderView(f, snap)
		c.RenderNs = timeOp(o.Smoke, func() { view(renderWidth, renderHeight) })
		c.RenderSize = fmt.Sprintf("%d×%d", renderWidth, renderHeight)
	}
	return c, nil
}

// ladderView is what the console does with a ladder on every refresh:
// build its rows from the snapshot (the model's part), then return the
// function that renders the view (the view's part), timed apart.
func ladderView(f topology.Found, snap topology.Snapshot) func(w, h int) string {
	lr := health.NewReport([]topology.Found{f}, snap, health.Watch{}).Ladders[0]
	st := ui.NewStyles(true)
	return func(w, h int) string {
		return ui.LadderView(ui.LadderState{Found: f, Rows: lr.Rows, Totals: lr.Totals, Forecast: lr.Forecast}, st, w, h)
	}
}

// targets are the console's: a 28-rung view renders in a millisecond, and
// a refresh is one request per vhost.
func (c ConsoleCost) targets() []bench.Target {
	var out []bench.Target
	if c.RenderNs > 0 {
		out = append(out, bench.Target{
			Name: fmt.Sprintf("render a %d-rung ladder view (from its rows)", c.RungsPerLadder), Want: "≤ 1 ms",
			Got: bench.FormatMS(float64(c.RenderNs)/1e6) + " ms", Met: c.RenderNs <= int64(time.Millisecond),
		})
	}
	if c.StatsRequests > 0 {
		out = append(out, bench.Target{
			Name: fmt.Sprintf("management requests per refresh, %d queues", c.Queues), Want: "≤ 1 per vhost",
			Got: fmt.Sprintf("%d (%s)", c.StatsRequests, topology.FormatBytes(c.StatsBytes)), Met: c.StatsRequests <= 1,
		})
	}
	return out
}

// Markdown renders the console report as docs/benchmarks holds it.
func (r ConsoleReport) Markdown() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	c := r.Console
	w("## rungs-lab console, RabbitMQ %s, %s\n\n", r.Broker.RabbitMQ, r.Started.Format("2006-01-02 15:04 UTC"))
	if r.Smoke {
		w("**Smoke run: each operation timed once; the timings mean nothing.**\n\n")
	}
	w("- Machine: %s; %d CPUs, %s; load average %s before, %s after\n", r.Machine.CPU, r.Machine.CPUs, r.Machine.Memory, r.Machine.LoadBefore, r.Machine.LoadAfter)
	w("- Run took %s\n\n", bench.FormatSeconds(r.Seconds))
	w("### Console cost (%d queues: %d ladders of %d rungs and plain queues; %d exchanges, %d bindings)\n\n", c.Queues, c.Ladders, c.RungsPerLadder, c.Exchanges, c.Bindings)
	w("| measure | requests | response bytes | time |\n|---|---:|---:|---:|\n")
	w("| refresh of the ladder list (the ladders' queue statistics) | %d | %s | – |\n", c.StatsRequests, topology.FormatBytes(c.StatsBytes))
	w("| full snapshot (the ladders' objects + statistics) | %d | %s | – |\n", c.SnapshotRequests, topology.FormatBytes(c.SnapshotBytes))
	w("| discover every ladder and its drift | – | – | %s ms |\n", bench.FormatMS(float64(c.DiscoverNs)/1e6))
	if c.RenderNs > 0 {
		w("| build a %d-rung ladder's rows from the statistics | – | – | %s ms |\n", c.RungsPerLadder, bench.FormatMS(float64(c.RowsNs)/1e6))
		w("| render the %d-rung ladder view (%s) from its rows | – | – | %s ms |\n", c.RungsPerLadder, c.RenderSize, bench.FormatMS(float64(c.RenderNs)/1e6))
	}
	w("\n")
	bench.WriteTargets(&b, r.Targets)
	bench.WriteProblems(&b, r.Problems, "The console's observer read every ladder of the fixture and none of the plain queues.")
	return b.String()
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
// linking the testing package into the lab.
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
