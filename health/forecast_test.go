package health

import (
	"testing"

	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// A rung the rows judge stuck gets no upper bound in the forecast; the
// others keep theirs.
func TestForecastFollowsRowsJudgement(t *testing.T) {
	busy := fixture.Busy()
	f := foundIn(busy, "orders")
	fc := Forecast(f.Ladder, LadderRows(f, busy, Watch{}), 0)
	for _, r := range fc.Rungs {
		if want := r.Rung.Queue == "orders.rung.06"; r.Unknown != want {
			t.Errorf("%s: unknown %v, want %v", r.Rung.Queue, r.Unknown, want)
		}
	}
	if fc.Unknown != 412 || fc.Messages == 0 {
		t.Errorf("forecast %+v", fc)
	}
}

// foundIn is the ladder of that name discovered in snap.
func foundIn(snap topology.Snapshot, name string) topology.Found {
	for _, f := range topology.Discover(snap) {
		if f.Ladder.Name == name {
			return f
		}
	}
	return topology.Found{}
}
