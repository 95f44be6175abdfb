package ui

import (
	"encoding/json"
	"fmt"
	"os"
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
	}
	for _, w := range []int{80, 120} {
		t.Run(fmt.Sprintf("text/%d", w), func(t *testing.T) {
			rows, folded := health.StatusRows(lr, false)
			out := LadderText(lr, rows, folded, w) + "\n" + ForecastText(lr.Forecast, w) + "\n" + DrainText(lr.Totals, lr.Drain, w)
			for _, bad := range []string{"stalled", "unstall", "may never arrive"} {
				if strings.Contains(out, bad) {
					t.Errorf("status text says %q:\n%s", bad, out)
				}
			}
			golden.RequireEqual(t, out)
		})
	}
}
