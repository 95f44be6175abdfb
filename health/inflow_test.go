package health

import (
	"strings"
	"testing"
	"time"
)

// inflowStorm is a synthetic storm in the default direct ladder: the 16s
// rung holds held messages, all expired, and forwards out a second to the
// 4s rung, which passes as many on to the done queue; clients publish in
// a second into the 16s rung from the start (burst a second for the first
// burstFor). Each reading is a second apart, for secs seconds.
func inflowStorm(t *testing.T, held, in, out, burst int64, burstFor, secs int64) Recording {
	t.Helper()
	l, err := RecordedLadder{Name: "s", Layout: "direct", Radix: 16, Levels: 2, UnitMS: 1000, QueueType: "quorum"}.Ladder("/")
	if err != nil {
		t.Fatal(err)
	}
	top, low, done := l.Name+".rung.01.1", l.Name+".rung.00.4", l.Name+".done"
	rec := Recording{Ladder: RecordedLadderOf(l)}
	depth, arrived := held, int64(0)
	for i := int64(0); i <= secs; i++ {
		pub := in
		if i < burstFor {
			pub = burst
		}
		rec.Samples = append(rec.Samples, RecordedSample{MS: i * 1000, Queues: map[string][5]int64{
			top:  {0, 0, depth, 0, pub * 1000},
			low:  {0, 0, 2000 - 100*(i%2), 0, 0},
			done: {arrived, 0, 0, 0, 0},
		}})
		depth += pub - out
		arrived += out
	}
	return rec
}

// A storm that keeps coming: clients publish 2,700 a second while the
// ladder drains 1,500. The rate is measured while they publish, the
// backlog is said to grow by the difference, with both rates, and no
// finish is given: the rate at which they stop decides it.
func TestStormWithInflowGrows(t *testing.T) {
	var last LadderReport
	if err := inflowStorm(t, 300_000, 2700, 1500, 0, 0, 60).Replay(DefaultInterval, func(_ time.Duration, lr LadderReport) { last = lr }); err != nil {
		t.Fatal(err)
	}
	d := last.Drain
	if !d.Grows() || d.Finish != 0 {
		t.Fatalf("drain %+v: want growing, no finish", d)
	}
	// Each message makes two hops: 1,500 a second out is 3,000 hops.
	if d.Capacity < 2990 || d.Capacity > 3010 || d.In < 2690 || d.In > 2710 || d.Out < 1490 || d.Out > 1510 {
		t.Errorf("capacity %.0f hops/s, in %.0f/s, out %.0f/s: want 3,000, 2,700, 1,500", d.Capacity, d.In, d.Out)
	}
	want := "backlog grows 1200/s: 2700/s in, 1500/s drained"
	if s := DrainSummary(d); !strings.HasPrefix(s, want) {
		t.Errorf("summary %q, want it to start %q", s, want)
	}
	for _, r := range last.Rows {
		if r.Backlogged && !strings.Contains(r.Status, "backlog grows: 2700/s in, 1500/s drained") {
			t.Errorf("%s: %s", r.Queue, r.Status)
		}
		if r.Stalled {
			t.Errorf("%s judged stalled: %s", r.Queue, r.Status)
		}
	}
}

// The same ladder with 600 a second coming in shrinks: its finish is a
// range around what the hops left take at the measured 3,000 hops/s.
func TestStormWithInflowShrinks(t *testing.T) {
	var last LadderReport
	if err := inflowStorm(t, 300_000, 600, 1500, 0, 0, 60).Replay(DefaultInterval, func(_ time.Duration, lr LadderReport) { last = lr }); err != nil {
		t.Fatal(err)
	}
	d := last.Drain
	if d.Grows() || d.Finish == 0 || d.FinishFast == 0 || d.FinishFast > d.Finish {
		t.Fatalf("drain %+v: want shrinking, with a finish range", d)
	}
	at := time.Duration(float64(d.Hops) / 3000 * float64(time.Second))
	if d.FinishFast > at || d.Finish < at-time.Second {
		t.Errorf("finish %s–%s, want it to hold %s (the hops left at 3,000/s)", d.FinishFast, d.Finish, at)
	}
	if s := DrainSummary(d); !strings.HasPrefix(s, "backlog shrinks 900/s: 600/s in, 1500/s drained") || !strings.Contains(s, "done in ~") {
		t.Errorf("summary %q", s)
	}
}

// A storm's own burst (13,000 a second for 40s) is not a steady inflow:
// its lagging publish rates would put the burst's last seconds on the
// wrong side of the span. While it lasts the backlog grows; the rate
// after it is measured a RateSpan after the publishing settled at the
// steady 600 a second, not before.
func TestStormBurstThenInflow(t *testing.T) {
	var firstAt time.Duration
	err := inflowStorm(t, 0, 600, 1500, 13000, 40, 100).Replay(DefaultInterval, func(at time.Duration, lr LadderReport) {
		d := lr.Drain
		switch {
		case d.Capacity == 0:
		case at <= 41*time.Second:
			if !d.Grows() || d.Finish != 0 {
				t.Errorf("%s, in the burst: %s, want growing and no finish", at, DrainSummary(d))
			}
		case firstAt == 0:
			firstAt = at
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if firstAt < 40*time.Second+RateSpan || firstAt > 40*time.Second+RateSpan+2*time.Second {
		t.Errorf("first rate at %s, want a RateSpan after the burst (at %s)", firstAt, 40*time.Second+RateSpan)
	}
}
