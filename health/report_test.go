package health

import (
	"testing"
	"time"

	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// TestTotalsOneMeaning: a stalled rung counts as stalled only, a stuck
// one as stuck only, and Attention counts both, in one ladder's totals
// and in the sum over ladders.
func TestTotalsOneMeaning(t *testing.T) {
	snap := fixture.Stalled()
	jobs := foundIn(snap, "jobs")
	// A rung below the stalled ones holds a message older than the
	// ladder can hold one: stuck, for another reason.
	rs := jobs.Ladder.Rungs()
	low := rs[len(rs)-1]
	for i, q := range snap.Queues {
		if q.Name == low.Queue {
			snap.Queues[i].Stats = topology.QueueStats{Ready: 2, HeadAge: 24 * time.Hour}
		}
	}
	r := NewReport([]topology.Found{jobs}, snap, Watch{Interval: 5 * time.Second, Waited: fixture.StalledWaits})
	tt := r.Ladders[0].Totals
	if tt.Stalled != 3 || tt.Stuck != 1 || tt.Attention() != 4 {
		t.Fatalf("totals %+v", tt)
	}
	for _, row := range r.Ladders[0].Rows {
		if row.Stuck && row.Stalled {
			t.Errorf("%s is both stuck and stalled", row.Queue)
		}
	}
	sum := Sum([]LadderReport{r.Ladders[0], r.Ladders[0]})
	if sum.Stalled != 6 || sum.Stuck != 2 || sum.Ladders != 2 || sum.InFlight != 2*tt.InFlight || r.Totals != tt {
		t.Errorf("sum %+v", sum)
	}
	if fc := r.Ladders[0].Forecast; fc.Unknown != 536+536+402+2 {
		t.Errorf("forecast unknown %d: stuck and stalled rungs' messages have no bound", fc.Unknown)
	}
}
