package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// The console's cost, without a broker: go test -bench . -run '^$' ./bench
// ConsoleSnapshot(1000) is the vhost `rungs bench` measures requests and
// bytes against: 10 prefix ladders of 28 rungs and plain queues, 1,000
// queues in all.

func consoleFixture(tb testing.TB) (topology.Snapshot, []topology.Found) {
	tb.Helper()
	snap := ConsoleSnapshot(1000)
	found := topology.Discover(snap)
	if len(snap.Queues) != 1000 || len(found) != 10 {
		tb.Fatalf("fixture has %d queues and %d ladders, want 1000 and 10", len(snap.Queues), len(found))
	}
	for _, f := range found {
		if n := len(f.Ladder.Rungs()); n != ConsoleRungs || len(f.Drift) != 0 {
			tb.Fatalf("%s: %d rungs, %d drift", f.Ladder.Name, n, len(f.Drift))
		}
	}
	return snap, found
}

// BenchmarkDiscover is the console's model build after a full snapshot:
// find every ladder of every layout and diff each against its plan.
func BenchmarkDiscover(b *testing.B) {
	snap, _ := consoleFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		topology.Discover(snap)
	}
}

// BenchmarkLadderItems builds the ladder list's rows (10 ladders) from a
// refresh's statistics, as the console does on every refresh.
func BenchmarkLadderItems(b *testing.B) {
	snap, found := consoleFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		health.LadderItems(found, snap, health.Watch{})
	}
}

// BenchmarkLadderRows builds one 28-rung ladder's rows from a refresh's
// statistics: the model's part of a refresh of the ladder screen.
func BenchmarkLadderRows(b *testing.B) {
	snap, found := consoleFixture(b)
	b.ReportAllocs()
	for b.Loop() {
		health.LadderRows(found[0], snap, health.Watch{})
	}
}

// BenchmarkRenderLadderView renders a 28-rung ladder's view at 120×40 from
// its rows: the view's part of a refresh (the ≤ 1 ms target).
func BenchmarkRenderLadderView(b *testing.B) {
	snap, found := consoleFixture(b)
	st := ui.NewStyles(true)
	rows := health.LadderRows(found[0], snap, health.Watch{})
	b.ReportAllocs()
	for b.Loop() {
		_ = ui.LadderView(ui.LadderState{Found: found[0], Rows: rows}, st, 120, 40)
	}
}

// BenchmarkRenderLadderViewSmall renders the same view at 80×24, the
// smallest size the console must serve in full: fewer columns and rows.
func BenchmarkRenderLadderViewSmall(b *testing.B) {
	snap, found := consoleFixture(b)
	st := ui.NewStyles(true)
	rows := health.LadderRows(found[0], snap, health.Watch{})
	b.ReportAllocs()
	for b.Loop() {
		_ = ui.LadderView(ui.LadderState{Found: found[0], Rows: rows}, st, 80, 24)
	}
}

// BenchmarkRenderLadderList renders the list of the 10 ladders at 120×40.
func BenchmarkRenderLadderList(b *testing.B) {
	snap, found := consoleFixture(b)
	st := ui.NewStyles(true)
	items := health.LadderItems(found, snap, health.Watch{})
	b.ReportAllocs()
	for b.Loop() {
		_ = ui.LadderList(ui.ListState{Items: items, Total: len(items), Vhost: snap.Vhost}, st, 120, 40)
	}
}

// TestConsoleFixture checks the fixture the benchmarks and the run use,
// and that the view renders every rung of a 28-rung ladder.
func TestConsoleFixture(t *testing.T) {
	snap, found := consoleFixture(t)
	rows := health.LadderRows(found[0], snap, health.Watch{})
	view := ui.LadderView(ui.LadderState{Found: found[0], Rows: rows}, ui.NewStyles(true), 120, 60)
	if !strings.Contains(view, "rung.27") || !strings.Contains(view, "rung.00") {
		t.Fatalf("view of %s lacks its top or bottom rung:\n%s", found[0].Ladder.Name, view)
	}
	small := ConsoleFixture("v", 100)
	if len(small) != 2 || len(small[0].Queues)+len(small[1].Queues) != 100 {
		t.Fatalf("ConsoleFixture(100) = %d plans", len(small))
	}
}

func TestNextBatchGrowsTowardBenchTime(t *testing.T) {
	for _, c := range []struct {
		n    int
		took time.Duration
		want int
	}{
		{1, time.Millisecond, 100},          // at most a hundredfold
		{100, 100 * time.Millisecond, 1200}, // 1ms a call: 1.2s worth
		{5, 2 * time.Second, 6},             // already long enough: still grows
	} {
		if got := nextBatch(c.n, c.took); got != c.want {
			t.Errorf("nextBatch(%d, %s) = %d, want %d", c.n, c.took, got, c.want)
		}
	}
	calls := 0
	if ns := timeOp(true, func() { calls++ }); ns < 1 || calls != 1 {
		t.Errorf("a smoke run calls once: %d calls, %dns", calls, ns)
	}
}
