package ui

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/rungs-dev/rungs/health"
)

// stormPeak is the recorded 4.0.5 storm (health/testdata) as judged at the
// peak of its backlog: rung 01.1 holding 26,663 expired messages while the
// ladder drained about 200 hops a second.
func stormPeak(t *testing.T) health.LadderReport {
	t.Helper()
	raw, err := os.ReadFile("../health/testdata/storm-drain-4.0.json")
	if err != nil {
		t.Fatal(err)
	}
	var r health.Recording
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	var peak health.LadderReport
	if err := r.Replay(5*time.Second, func(_ time.Duration, lr health.LadderReport) {
		if lr.Drain.Finish > 0 && lr.Totals.Expired > peak.Totals.Expired {
			peak = lr
		}
	}); err != nil {
		t.Fatal(err)
	}
	if peak.Totals.Backlogged == 0 {
		t.Fatal("the recording has no backlog")
	}
	return peak
}

// A backlogged ladder says so with its drain, never "stalled" or unstall.
func TestBackloggedGolden(t *testing.T) {
	lr := stormPeak(t)
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("view/%dx%d", sz.w, sz.h), func(t *testing.T) {
			rows, folded := health.FoldIdleRungs(lr.Rows, "")
			s := LadderState{Found: lr.Found, Rows: rows, Folded: folded, Totals: lr.Totals, Forecast: lr.Forecast, Drain: lr.Drain}
			body := sz.h - HeaderHeight - 1
			view := LadderView(s, NewStyles(true), sz.w, body)
			checkFrame(t, view, sz.w, body)
			plain := ansi.Strip(view)
			if !strings.Contains(plain, "backlogged") || strings.Contains(plain, "stalled") {
				t.Errorf("the view does not say backlogged, or says stalled:\n%s", plain)
			}
			golden.RequireEqual(t, plain)
		})
		// The done queue selected: its facts give its arrivals, which its
		// publish rate does not count.
		t.Run(fmt.Sprintf("done/%dx%d", sz.w, sz.h), func(t *testing.T) {
			rows, folded := health.FoldIdleRungs(lr.Rows, "")
			sel := slices.IndexFunc(rows, func(r health.Row) bool { return r.Queue == "storm.done" })
			s := LadderState{Found: lr.Found, Rows: rows, Selected: sel, Folded: folded, Totals: lr.Totals, Forecast: lr.Forecast, Drain: lr.Drain}
			body := sz.h - HeaderHeight - 1
			view := LadderView(s, NewStyles(true), sz.w, body)
			checkFrame(t, view, sz.w, body)
			plain := ansi.Strip(view)
			if !strings.Contains(plain, "backlog grows ") {
				t.Errorf("the done queue's facts do not give its arrivals:\n%s", plain)
			}
			golden.RequireEqual(t, plain)
		})
	}
	for _, w := range []int{80, 120} {
		t.Run(fmt.Sprintf("text/%d", w), func(t *testing.T) {
			rows, folded := health.StatusRows(lr, false)
			out := LadderText(lr, rows, folded, w) + "\n" + ForecastText(lr.Forecast, w) + "\n" + DrainText(lr.Totals, lr.Drain, w) + "\n" + DestText(lr.Drain, w)
			if !strings.Contains(out, "Done queue storm.done: backlog grows ") {
				t.Errorf("status text does not give the done queue's arrivals:\n%s", out)
			}
			for _, bad := range []string{"stalled", "unstall", "may never arrive"} {
				if strings.Contains(out, bad) {
					t.Errorf("status text says %q:\n%s", bad, out)
				}
			}
			golden.RequireEqual(t, out)
		})
	}
}

// inflowStorm replays a storm in the default direct ladder whose 16s rung
// holds 300,000 expired messages and forwards 1,500 a second, while
// clients publish in a second into it, and returns the last report.
func inflowStorm(t *testing.T, in int64) health.LadderReport {
	t.Helper()
	l := health.RecordedLadder{Name: "storm", Layout: "direct", Radix: 16, Levels: 2, UnitMS: 1000, QueueType: "quorum"}
	rec := health.Recording{Ladder: l}
	depth, arrived := int64(300_000), int64(0)
	for i := int64(0); i <= 60; i++ {
		rec.Samples = append(rec.Samples, health.RecordedSample{MS: i * 1000, Queues: map[string][5]int64{
			"storm.rung.01.1": {0, 0, depth, 0, in * 1000},
			"storm.rung.00.4": {0, 0, 2000 - 100*(i%2), 0, 0},
			"storm.done":      {arrived, 0, 0, 0, 0},
		}})
		depth += in - 1500
		arrived += 1500
	}
	var last health.LadderReport
	if err := rec.Replay(5*time.Second, func(_ time.Duration, lr health.LadderReport) { last = lr }); err != nil {
		t.Fatal(err)
	}
	return last
}

// A storm that keeps coming shows both rates: growing (2,700/s in) with
// no finish, shrinking (600/s in) with the finish as a range.
func TestBacklogInflowGolden(t *testing.T) {
	for name, in := range map[string]int64{"grows": 2700, "shrinks": 600} {
		lr := inflowStorm(t, in)
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/view/%dx%d", name, sz.w, sz.h), func(t *testing.T) {
				rows, folded := health.FoldIdleRungs(lr.Rows, "")
				s := LadderState{Found: lr.Found, Rows: rows, Folded: folded, Totals: lr.Totals, Forecast: lr.Forecast, Drain: lr.Drain}
				body := sz.h - HeaderHeight - 1
				view := LadderView(s, NewStyles(true), sz.w, body)
				checkFrame(t, view, sz.w, body)
				plain := ansi.Strip(view)
				want := map[string]string{"grows": "grows 1200/s", "shrinks": "done ~2m21s–2m54s"}[name]
				if !strings.Contains(plain, want) || strings.Contains(plain, "stalled") {
					t.Errorf("the view does not say %q, or says stalled:\n%s", want, plain)
				}
				golden.RequireEqual(t, plain)
			})
		}
		for _, w := range []int{80, 120} {
			t.Run(fmt.Sprintf("%s/text/%d", name, w), func(t *testing.T) {
				out := DrainText(lr.Totals, lr.Drain, w) + "\n" + DestText(lr.Drain, w)
				if !strings.Contains(out, "backlog "+name) {
					t.Errorf("status text does not say the backlog %s:\n%s", name, out)
				}
				// The done queue gains the 1,500/s the ladder drains.
				if !strings.Contains(out, "Done queue storm.done: backlog grows 1500/s: 1500/s in, 0/s drained") {
					t.Errorf("status text does not give the done queue's arrivals:\n%s", out)
				}
				golden.RequireEqual(t, out)
			})
		}
	}
}
