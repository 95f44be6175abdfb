package topology

import (
	"sort"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// simMessage is one message the simulator follows through a ladder.
type simMessage struct {
	publish time.Time // when it entered the ladder's first rung
	stamped bool      // whether it carries a timestamp property
	trace   Trace
}

// delivered is when it reaches its destination.
func (m simMessage) delivered() time.Time { return m.publish.Add(m.trace.Total()) }

// at says which rung holds the message at instant now, and since when:
// rungs hold a message for exactly their TTL, [enter, enter+TTL), and
// dead-lettering moves it on at once.
func (m simMessage) at(now time.Time) (queue string, entered time.Time, ok bool) {
	for _, h := range m.trace.Hops {
		in, out := m.publish.Add(h.Start), m.publish.Add(h.End)
		if !now.Before(in) && now.Before(out) {
			return h.Queue, in, true
		}
	}
	return "", time.Time{}, false
}

// observe is what the management API reports of the ladder's rungs at now:
// each rung's depth, and the age of its head (the message that entered
// first) from its whole-second timestamp property, as broker.Stats works
// it out; no age when the head has no timestamp.
func observe(msgs []simMessage, now time.Time) map[string]QueueStats {
	type head struct {
		entered time.Time
		m       simMessage
	}
	stats := map[string]QueueStats{}
	heads := map[string]head{}
	for _, m := range msgs {
		q, entered, ok := m.at(now)
		if !ok {
			continue
		}
		s := stats[q]
		s.Ready++
		stats[q] = s
		if h, seen := heads[q]; !seen || entered.Before(h.entered) {
			heads[q] = head{entered, m}
		}
	}
	for q, h := range heads {
		if !h.m.stamped {
			continue
		}
		s := stats[q]
		if age := now.Sub(time.Unix(h.m.publish.Unix(), 0)); age > 0 {
			s.HeadAge = age
		}
		stats[q] = s
	}
	return stats
}

// TestForecastBracketsSimulatedLadder simulates random traffic through a
// random ladder with exact TTL semantics, samples what the broker would
// report at one instant, and checks the forecast against the truth: every
// message in flight arrives within its rung's bounds, and the counts due
// by each horizon bracket the number that really arrive by then.
func TestForecastBracketsSimulatedLadder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLadder(t)
		dest := ""
		if _, err := l.Trace(0, ""); err != nil {
			dest = "w"
		}
		now := time.Unix(1_800_000_000, rapid.Int64Range(0, int64(time.Second)-1).Draw(t, "now-ns"))
		n := rapid.IntRange(0, 40).Draw(t, "messages")
		var msgs []simMessage
		for i := 0; i < n; i++ {
			tr, err := l.Trace(drawDelay(t, l), dest)
			if err != nil {
				t.Fatalf("trace: %v", err)
			}
			// Publish at most its whole path ago (plus a little, so that
			// some have arrived), at any sub-second offset.
			back := rapid.Int64Range(0, int64(tr.Total())+int64(time.Second)).Draw(t, "age")
			msgs = append(msgs, simMessage{
				publish: now.Add(-time.Duration(back)),
				stamped: rapid.IntRange(0, 4).Draw(t, "stamped") > 0,
				trace:   tr,
			})
		}
		stats := observe(msgs, now)
		// Timestamps are truncated to the second: one second of margin.
		f := l.Forecast(stats, ForecastOptions{Margin: time.Second})

		byQueue := map[string]RungForecast{}
		for _, r := range f.Rungs {
			byQueue[r.Rung.Queue] = r
		}
		var future []time.Duration
		for _, m := range msgs {
			q, _, ok := m.at(now)
			if !ok {
				continue
			}
			due := m.delivered().Sub(now)
			future = append(future, due)
			r := byQueue[q]
			if r.Unknown {
				t.Fatalf("rung %s judged unknown (head age %s), but it expires on time", q, stats[q].HeadAge)
			}
			if due < r.Earliest || due > r.Latest {
				t.Fatalf("message in %s arrives in %s, outside the forecast [%s, %s] (head age %s)", q, due, r.Earliest, r.Latest, stats[q].HeadAge)
			}
		}
		if f.Messages != int64(len(future)) {
			t.Fatalf("forecast covers %d messages, %d are in flight", f.Messages, len(future))
		}
		sort.Slice(future, func(i, j int) bool { return future[i] < future[j] })
		for _, d := range f.Due {
			truth := int64(sort.Search(len(future), func(i int) bool { return future[i] > d.By }))
			if truth < d.Min || truth > d.Max || d.Estimate < d.Min || d.Estimate > d.Max {
				t.Fatalf("due by %s: %d arrive, forecast min %d max %d estimate %d", d.By, truth, d.Min, d.Max, d.Estimate)
			}
		}
		last := Horizons[len(Horizons)-1]
		later := int64(len(future) - sort.Search(len(future), func(i int) bool { return future[i] > last }))
		if later < f.Later.Min || later > f.Later.Max {
			t.Fatalf("later than %s: %d arrive, forecast min %d max %d", last, later, f.Later.Min, f.Later.Max)
		}
		if f.Messages > 0 && f.Unknown == 0 && (future[0] < f.Earliest || future[len(future)-1] > f.Latest) {
			t.Fatalf("arrivals span [%s, %s], forecast [%s, %s]", future[0], future[len(future)-1], f.Earliest, f.Latest)
		}
	})
}

// TestForecastHeadAgeNarrowsEarliest pins the arithmetic on a small ladder.
func TestForecastHeadAgeNarrowsEarliest(t *testing.T) {
	l, err := Ladder{Name: "d", Unit: time.Second, Levels: 3, Radix: 2}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	// Rungs: level 2 (4s), 1 (2s), 0 (1s).
	stats := map[string]QueueStats{}
	for _, r := range l.Rungs() {
		if r.Level == 2 {
			stats[r.Queue] = QueueStats{Ready: 5, HeadAge: 3 * time.Second}
		}
		if r.Level == 0 {
			stats[r.Queue] = QueueStats{Ready: 2, Unacked: 1}
		}
	}
	f := l.Forecast(stats, ForecastOptions{})
	for _, r := range f.Rungs {
		switch r.Rung.Level {
		case 2:
			if r.Earliest != time.Second || r.Latest != 7*time.Second {
				t.Errorf("level 2: [%s, %s], want [1s, 7s]", r.Earliest, r.Latest)
			}
		case 0:
			if r.Earliest != 0 || r.Latest != time.Second || r.Held != 1 {
				t.Errorf("level 0: [%s, %s] held %d, want [0, 1s] held 1", r.Earliest, r.Latest, r.Held)
			}
		}
	}
	if f.Messages != 7 || f.Held != 1 || f.Due[0].Min != 7 || f.Later.Max != 0 {
		t.Errorf("totals: %+v", f)
	}
	if f.Dest != "d.done" {
		t.Errorf("dest %q, want the done queue", f.Dest)
	}
}

// TestForecastImpossibleHeadIsUnknown: a head older than any message can be
// in its rung means the rung does not expire; no upper bound holds.
func TestForecastImpossibleHeadIsUnknown(t *testing.T) {
	l, _ := Ladder{Name: "d", Unit: time.Second, Levels: 2, Radix: 2}.Normalize()
	rs := l.Rungs()
	stats := map[string]QueueStats{rs[1].Queue: {Ready: 3, HeadAge: time.Hour}}
	f := l.Forecast(stats, ForecastOptions{Margin: 10 * time.Second})
	if f.Unknown != 3 || f.Latest != 0 || f.Due[3].Min != 0 || f.Due[0].Max != 3 || f.Later.Max != 3 {
		t.Errorf("forecast %+v", f)
	}
	f = l.Forecast(map[string]QueueStats{rs[0].Queue: {Ready: 1}}, ForecastOptions{Stuck: func(q string) bool { return q == rs[0].Queue }})
	if f.Unknown != 1 {
		t.Errorf("a rung the caller judged stuck is not unknown: %+v", f)
	}
}

func TestUniformSumCDF(t *testing.T) {
	for _, c := range []struct{ a1, b1, a2, b2, t, want float64 }{
		{0, 1, 0, 0, 0.5, 0.5},
		{0, 1, 0, 1, 1, 0.5},
		{0, 2, 0, 1, 1.5, 0.5},
		{0, 1, 0, 1, 0.5, 0.125},
		{0, 1, 0, 1, 1.5, 0.875},
		{2, 2, 3, 3, 5, 1},
		{2, 2, 3, 3, 4.9, 0},
	} {
		if got := uniformSumCDF(c.a1, c.b1, c.a2, c.b2, c.t); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("uniformSumCDF%v = %v", c, got)
		}
	}
}

// Expired messages waiting to be dead-lettered (quorum rungs) have served
// their TTL: they are covered, and may move on at once.
func TestForecastExpiredMayLeaveNow(t *testing.T) {
	l, _ := Ladder{Name: "d", Unit: time.Second, Levels: 2, Radix: 2}.Normalize()
	top := l.Rungs()[0]
	f := l.Forecast(map[string]QueueStats{top.Queue: {Ready: 2, Expired: 3, HeadAge: time.Second}}, ForecastOptions{})
	if r := f.Rungs[0]; r.Messages != 5 || r.Earliest != 0 || r.Latest != top.TTL+time.Second {
		t.Errorf("rung forecast %+v", r)
	}
}
