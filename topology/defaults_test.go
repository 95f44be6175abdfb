package topology

import (
	"testing"
	"time"
)

// A new ladder is direct (issue 12: the measured best on 3.10 and 4.0), and
// the direct and prefix layouts default to radix 16, with the fewest levels
// that hold the range of the old default, 28 binary levels: 16^7 = 2^28.
func TestDefaultLadderIsDirectRadix16(t *testing.T) {
	binary := mustLadder(t, Ladder{Radix: 2})
	if binary.Levels != 28 {
		t.Fatalf("binary default ladder has %d levels, want 28", binary.Levels)
	}
	if l := mustLadder(t, Ladder{}); l.Layout != "direct" {
		t.Fatalf("a ladder with no layout is %s, want direct", l.Layout)
	}
	for _, layout := range []string{"", "direct", "prefix"} {
		l := mustLadder(t, Ladder{Layout: layout})
		if l.Radix != 16 || l.Levels != 7 {
			t.Fatalf("default ladder (layout %q) = %s, radix %d, %d levels; want radix 16, 7 levels", layout, l.Layout, l.Radix, l.Levels)
		}
		if l.Unit != time.Second || l.MaxDelay() != binary.MaxDelay() || l.MaxDelay() != (1<<28-1)*time.Second {
			t.Fatalf("default ladder holds %s, want %s (28 binary levels of 1s)", l.MaxDelay(), binary.MaxDelay())
		}
		rungs := l.Rungs()
		if len(rungs) != 7*15 {
			t.Fatalf("default ladder has %d rungs, want 105 (7 levels of 15 digits)", len(rungs))
		}
		if first, last := rungs[0], rungs[len(rungs)-1]; first.Queue != "rungs.rung.06.f" || first.TTL != 15<<24*time.Second ||
			last.Queue != "rungs.rung.00.1" || last.TTL != time.Second {
			t.Fatalf("default ladder's rungs run from %+v to %+v; want rungs.rung.06.f (15×16^6 s) to rungs.rung.00.1 (1s)", first, last)
		}
		key, err := l.Key(5*time.Second, "work")
		if err != nil || key != "0.0.0.0.0.0.5.work" {
			t.Fatalf("default ladder's key for 5s = %q, %v; want 0.0.0.0.0.0.5.work", key, err)
		}
	}
	// A radix without levels gets the fewest holding the default range.
	for radix, levels := range map[int]int{2: 28, 4: 14, 8: 10, 16: 7} {
		if l := mustLadder(t, Ladder{Radix: radix}); l.Levels != levels || l.MaxDelay() < binary.MaxDelay() {
			t.Errorf("radix %d default: %d levels holding %s; want %d levels, at least %s", radix, l.Levels, l.MaxDelay(), levels, binary.MaxDelay())
		}
	}
	// Explicit levels are kept.
	if l := mustLadder(t, Ladder{Levels: 4}); l.Radix != 16 || l.Levels != 4 {
		t.Errorf("Ladder{Levels: 4} = radix %d, %d levels; want radix 16, 4 levels", l.Radix, l.Levels)
	}
}

// The other layouts stay binary by default.
func TestDefaultRadixOfOtherLayoutsIsBinary(t *testing.T) {
	for _, layout := range []string{"suffix", "nsb", "nsb1", "celery"} {
		if r := DefaultRadixFor(layout); r != 2 {
			t.Errorf("DefaultRadixFor(%q) = %d, want 2", layout, r)
		}
		l := mustLadder(t, Ladder{Layout: layout})
		if l.Radix != 2 || l.Levels != 28 || l.MaxDelay() != (1<<28-1)*time.Second {
			t.Errorf("%s default ladder: radix %d, %d levels, max %s; want radix 2, 28 levels, max %s", layout, l.Radix, l.Levels, l.MaxDelay(), (1<<28-1)*time.Second)
		}
	}
	for _, layout := range []string{"", "prefix", "direct"} {
		if r := DefaultRadixFor(layout); r != 16 {
			t.Errorf("DefaultRadixFor(%q) = %d, want 16", layout, r)
		}
	}
}

func TestDefaultLevelsFor(t *testing.T) {
	want := map[int]int{2: 28, 4: 14, 8: 10, 16: 7, 0: 0, 1: 0, 3: 0, 6: 0, 10: 0}
	for radix, levels := range want {
		if got := DefaultLevelsFor(radix); got != levels {
			t.Errorf("DefaultLevelsFor(%d) = %d, want %d", radix, got, levels)
		}
	}
}
