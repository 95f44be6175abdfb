package topology

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestCostCounts(t *testing.T) {
	cases := map[string]struct {
		l    Ladder
		want Cost
	}{
		// 24 rungs + done + unroutable; ingest, deliver, unroutable and one
		// expired exchange per level; ingest binds 24 rungs + deliver, level
		// i's exchange binds i rungs + deliver, plus deliver→done and the
		// unroutable queue: 25 + (1+...+24) + 2 = 327.
		"prefix binary 24": {
			Ladder{Layout: "prefix", Unit: time.Millisecond, Levels: 24, Radix: 2},
			Cost{Exchanges: 27, Queues: 26, Rungs: 24, Bindings: 327, MeanHops: 12, MaxHops: 24},
		},
		"prefix radix 16, 6 levels": {
			Ladder{Layout: "prefix", Unit: time.Millisecond, Levels: 6, Radix: 16},
			Cost{Exchanges: 9, Queues: 92, Rungs: 90, Bindings: 15*6 + 1 + 15*15 + 6 + 2, MeanHops: 6 * 15.0 / 16, MaxHops: 6},
		},
		// 24 rungs + done; ingest and one done exchange per rung; 24 ingest
		// bindings, 276 rung→rung, 24 rung→done, 1 zero-delay binding.
		"suffix 24": {
			Ladder{Layout: "suffix", Unit: time.Millisecond, Levels: 24},
			Cost{Exchanges: 25, Queues: 25, Rungs: 24, Bindings: 24 + 276 + 24 + 1, MeanHops: 12, MaxHops: 24},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l, err := tc.l.Normalize()
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Cost(); got != tc.want {
				t.Fatalf("Cost() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRadixCostsSameRange(t *testing.T) {
	l, err := Ladder{Layout: "prefix", Unit: time.Millisecond, Levels: 24, Radix: 2}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	got := l.RadixCosts()
	want := []struct{ radix, levels, rungs int }{{2, 24, 24}, {4, 12, 36}, {8, 8, 56}, {16, 6, 90}}
	if len(got) != len(want) {
		t.Fatalf("RadixCosts() has %d entries, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Radix != w.radix || g.Levels != w.levels || g.Cost.Rungs != w.rungs || g.MaxDelay != l.MaxDelay() {
			t.Errorf("radix %d: got %+v, want %d levels, %d rungs, max %s", w.radix, g, w.levels, w.rungs, l.MaxDelay())
		}
	}
	s, _ := Ladder{Layout: "suffix", Unit: time.Millisecond, Levels: 10}.Normalize()
	if rc := s.RadixCosts(); len(rc) != 1 || rc[0].Radix != 2 {
		t.Fatalf("suffix RadixCosts() = %+v, want radix 2 only", rc)
	}
}

// TestCostHopsProperty checks MeanHops and MaxHops against the traces of
// every delay of small ladders: the mean over all delays in [0, MaxDelay] is
// exact, and no trace is longer than MaxHops while the largest reaches it.
func TestCostHopsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := Ladder{Layout: "prefix", Unit: time.Millisecond,
			Radix: rapid.SampledFrom([]int{2, 4, 8, 16}).Draw(t, "radix"), Levels: rapid.IntRange(1, 4).Draw(t, "levels")}
		if rapid.Bool().Draw(t, "suffix") {
			l.Layout, l.Radix = "suffix", 2
		}
		l, err := l.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		c := l.Cost()
		maxU, _ := l.maxUnits()
		total, longest := 0, 0
		for u := uint64(0); u <= maxU; u++ {
			tr, err := l.Trace(time.Duration(u)*l.Unit, "")
			if err != nil {
				t.Fatal(err)
			}
			total += len(tr.Hops)
			longest = max(longest, len(tr.Hops))
		}
		if mean := float64(total) / float64(maxU+1); mean < c.MeanHops-1e-9 || mean > c.MeanHops+1e-9 {
			t.Fatalf("mean hops over every delay %.6f, Cost says %.6f", mean, c.MeanHops)
		}
		if longest != c.MaxHops {
			t.Fatalf("longest trace %d hops, Cost says %d", longest, c.MaxHops)
		}
		p := l.Plan()
		if c.Queues != len(p.Queues) || c.Bindings != len(p.Bindings) || c.Exchanges != len(p.Exchanges) {
			t.Fatalf("Cost %+v disagrees with the plan", c)
		}
		for _, rc := range l.RadixCosts() {
			if rc.MaxDelay < l.MaxDelay() {
				t.Fatalf("radix %d holds %s < %s", rc.Radix, rc.MaxDelay, l.MaxDelay())
			}
		}
	})
}
