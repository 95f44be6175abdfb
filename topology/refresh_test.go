package topology

import (
	"testing"
	"time"
)

func TestMovementsObserve(t *testing.T) {
	t0 := time.Unix(0, 0)
	q := func(ready int64, rate float64) []Queue {
		return []Queue{{Name: "q", Stats: QueueStats{Ready: ready, ExpireRate: rate}}}
	}
	m := Movements{}.Observe(q(5, 0), t0)
	m = m.Observe(q(5, 0), t0.Add(time.Minute))
	if got := m.Still("q", t0.Add(2*time.Minute)); got != 2*time.Minute {
		t.Errorf("unchanged depth still for %s, want 2m", got)
	}
	m = m.Observe(q(5, 1.5), t0.Add(3*time.Minute))
	if got := m.Still("q", t0.Add(3*time.Minute)); got != 0 {
		t.Errorf("a flowing queue is still for %s", got)
	}
	m = m.Observe(q(4, 0), t0.Add(4*time.Minute))
	if got := m.Still("q", t0.Add(5*time.Minute)); got != time.Minute {
		t.Errorf("after a change, still for %s, want 1m", got)
	}
	if got := m.Observe(nil, t0).Still("q", t0); got != 0 {
		t.Error("a vanished queue is remembered")
	}
}
