package health

import (
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

func TestStallWindow(t *testing.T) {
	const every = 5 * time.Second
	cases := []struct{ ttl, interval, want time.Duration }{
		{4 * time.Second, every, 14 * time.Second}, // TTL + two refreshes
		{time.Millisecond, every, every*2 + time.Millisecond},
		{time.Hour, every, 15 * time.Second}, // the TTL counts at most one interval
		{0, 0, 10 * time.Second},             // unknown interval: the 5s default
		{-time.Second, every, 10 * time.Second},
	}
	for _, c := range cases {
		if got := StallWindow(c.ttl, c.interval); got != c.want {
			t.Errorf("StallWindow(%s, %s) = %s, want %s", c.ttl, c.interval, got, c.want)
		}
	}
}

func TestStalled(t *testing.T) {
	const ttl, every = 8 * time.Second, 5 * time.Second
	waiting := topology.QueueStats{Expired: 536}
	if s := Stalled(waiting, ttl, 0, every); s != "" {
		t.Errorf("no history must not read as stalled: %q", s)
	}
	if s := Stalled(waiting, ttl, 14*time.Second, every); s != "" {
		t.Errorf("within the window (15s): %q", s)
	}
	s := Stalled(waiting, ttl, 15*time.Second, every)
	for _, want := range []string{"stalled", "536 expired, not dead-lettered in 15s", "rungs unstall"} {
		if !strings.Contains(s, want) {
			t.Errorf("Stalled = %q, want it to say %q", s, want)
		}
	}
	if s := Stalled(topology.QueueStats{Ready: 9}, ttl, time.Hour, every); s != "" {
		t.Errorf("nothing waiting to be dead-lettered: %q", s)
	}
}

func queues(expired map[string]int64) []topology.Queue {
	var qs []topology.Queue
	for name, n := range expired {
		qs = append(qs, topology.Queue{Name: name, Stats: topology.QueueStats{Expired: n}})
	}
	return qs
}

func TestWaitsClockRestartsOnlyWhenTheCountFalls(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var w Waits
	w = w.Observe(queues(map[string]int64{"a": 10, "b": 5}), at(0))
	w = w.Observe(queues(map[string]int64{"a": 12, "b": 3}), at(5)) // a grows (stalled), b drains
	w = w.Observe(queues(map[string]int64{"a": 12, "b": 3}), at(10))
	if got := w.Waited("a", at(10)); got != 10*time.Second {
		t.Errorf("a waited %s, want 10s: a count that only grows never restarts the clock", got)
	}
	if got := w.Waited("b", at(10)); got != 5*time.Second {
		t.Errorf("b waited %s, want 5s: it fell at 5s", got)
	}
	w = w.Observe(queues(map[string]int64{"a": 12}), at(15))
	if got := w.Waited("b", at(15)); got != 0 {
		t.Errorf("b drained to nothing, yet waited %s", got)
	}
	if got := w.Waited("unknown", at(15)); got != 0 {
		t.Errorf("unknown queue waited %s", got)
	}
}

// TestWaitsProperty: whatever the samples, the clock never runs longer
// than the samples span, never runs for a queue with nothing waiting, and
// runs the whole span for a queue whose count never falls.
func TestWaitsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		t0 := time.Unix(1700000000, 0)
		n := rapid.IntRange(1, 20).Draw(t, "samples")
		var w Waits
		var last int64 = -1
		monotone := true
		var at time.Time
		first := time.Time{}
		for i := 0; i < n; i++ {
			at = t0.Add(time.Duration(i) * 5 * time.Second)
			e := rapid.Int64Range(0, 50).Draw(t, "expired")
			if e == 0 || (last >= 0 && e < last) {
				monotone = false
				first = time.Time{}
			}
			if e > 0 && first.IsZero() {
				first, monotone = at, true
			}
			last = e
			w = w.Observe(queues(map[string]int64{"q": e}), at)
			got := w.Waited("q", at)
			if got > at.Sub(t0) || got < 0 {
				t.Fatalf("waited %s after %s of samples", got, at.Sub(t0))
			}
			if e == 0 && got != 0 {
				t.Fatalf("nothing waiting, yet waited %s", got)
			}
			if e > 0 && monotone && got != at.Sub(first) {
				t.Fatalf("count never fell since %s, yet waited %s", first, got)
			}
		}
	})
}

func TestLadderRowsFlagStalledRungs(t *testing.T) {
	snap := fixture.Stalled()
	f, ok := fixture.Found(snap, "jobs")
	if !ok {
		t.Fatal("no ladder jobs in the fixture")
	}
	rows := LadderRows(f, snap, Watch{Interval: 5 * time.Second, Still: fixture.StalledWaits, Waited: fixture.StalledWaits})
	byQueue := map[string]Row{}
	for _, r := range rows {
		byQueue[r.Queue] = r
	}
	for _, q := range []string{"jobs.rung.03.1", "jobs.rung.03.2", "jobs.rung.03.4"} {
		r := byQueue[q]
		if !r.Stalled || r.Stuck || r.Severity != Problem || !strings.HasPrefix(r.Tag, "stalled") {
			t.Errorf("%s: stalled %v stuck %v severity %v tag %q status %q", q, r.Stalled, r.Stuck, r.Severity, r.Tag, r.Status)
		}
	}
	if r := byQueue["jobs.rung.02.6"]; r.Stalled || r.Severity != Notice || r.Tag != "14 expired" {
		t.Errorf("a moving rung with a few expired: stalled %v severity %v tag %q", r.Stalled, r.Severity, r.Tag)
	}
	// Without history nothing is stalled, but the rungs still show.
	plain := LadderRows(f, snap, Watch{})
	kept, _ := FoldIdleRungs(plain, "")
	for _, q := range []string{"jobs.rung.03.1", "jobs.rung.03.2", "jobs.rung.03.4", "jobs.rung.02.6"} {
		if !containsQueue(kept, q) {
			t.Errorf("%s holds expired messages and was folded away", q)
		}
	}
	for _, r := range plain {
		if r.Stalled {
			t.Errorf("%s stalled without history", r.Queue)
		}
	}
	items := LadderItems([]topology.Found{f}, snap, Watch{Interval: 5 * time.Second, Waited: fixture.StalledWaits})
	if tt := items[0].Totals; tt.Stalled != 3 || tt.Stuck != 0 || tt.InFlight != 536+536+402+120+14 {
		t.Errorf("item: %d stalled, %d stuck, %d in flight", tt.Stalled, tt.Stuck, tt.InFlight)
	}
}

// TestFoldNeverHidesMessages: whatever state a rung's messages are in, a
// rung holding any is never folded.
func TestFoldNeverHidesMessages(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := topology.QueueStats{
			Ready:   rapid.Int64Range(0, 3).Draw(t, "ready"),
			Unacked: rapid.Int64Range(0, 3).Draw(t, "unacked"),
			Expired: rapid.Int64Range(0, 3).Draw(t, "expired"),
		}
		rows := []Row{{Kind: RungRow, Queue: "r", Stats: s}}
		kept, _ := FoldIdleRungs(rows, "")
		if s.Messages() > 0 && len(kept) == 0 {
			t.Fatalf("folded a rung holding %+v", s)
		}
	})
}
