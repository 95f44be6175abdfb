package topology

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func amoLadder(t *testing.T, layout string, amo bool) Ladder {
	t.Helper()
	l, err := Ladder{Name: "bursts", Vhost: "/", Layout: layout, Unit: time.Second, Levels: 3, QueueType: Quorum, AtMostOnce: amo}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// An at-most-once ladder differs from the default in one argument of
// each rung: the strategy. Queues that dead-letter nowhere get none, and
// overflow stays reject-publish.
func TestAtMostOnceRungArgs(t *testing.T) {
	for _, layout := range ownLayouts {
		t.Run(layout, func(t *testing.T) {
			amo, alo := amoLadder(t, layout, true).Plan(), amoLadder(t, layout, false).Plan()
			if len(amo.Queues) != len(alo.Queues) {
				t.Fatalf("%d queues against %d", len(amo.Queues), len(alo.Queues))
			}
			rungs := 0
			for i, q := range amo.Queues {
				_, dlx := q.Args["x-dead-letter-exchange"]
				want := alo.Queues[i].Args
				if dlx {
					rungs++
					if q.Args["x-dead-letter-strategy"] != AtMostOnce || want["x-dead-letter-strategy"] != AtLeastOnce {
						t.Errorf("%s: strategy %v (default ladder %v)", q.Name, q.Args["x-dead-letter-strategy"], want["x-dead-letter-strategy"])
					}
				} else if _, ok := q.Args["x-dead-letter-strategy"]; ok {
					t.Errorf("%s dead-letters nowhere but has a strategy", q.Name)
				}
				for k, v := range want {
					if k != "x-dead-letter-strategy" && q.Args[k] != v {
						t.Errorf("%s: %s = %v, want %v as the default ladder", q.Name, k, q.Args[k], v)
					}
				}
				if len(q.Args) != len(want) {
					t.Errorf("%s: %v against %v", q.Name, q.Args, want)
				}
			}
			if rungs == 0 {
				t.Fatal("no rung dead-letters")
			}
		})
	}
}

// Discovery reads the strategy back: the same ladder, with no drift; a
// ladder described without it against the broker's shows the argument
// changed on every rung.
func TestAtMostOnceDiscovered(t *testing.T) {
	for _, layout := range ownLayouts {
		t.Run(layout, func(t *testing.T) {
			l := amoLadder(t, layout, true)
			snap := l.Plan().Snapshot()
			found := Discover(snap)
			if len(found) != 1 {
				t.Fatalf("found %d ladders", len(found))
			}
			got := found[0]
			if !got.Ladder.AtMostOnce || !got.Ladder.SameShape(l) {
				t.Errorf("discovered %s, want %s", got.Ladder.Describe(), l.Describe())
			}
			if len(got.Drift) != 0 {
				t.Errorf("drift on an at-most-once ladder: %v", got.Drift)
			}
			if !strings.Contains(got.Ladder.Describe(), "at-most-once") || got.Ladder.RungKind() != "quorum at-most-once" {
				t.Errorf("described as %q, %q", got.Ladder.Describe(), got.Ladder.RungKind())
			}
			alo := amoLadder(t, layout, false)
			drift := Diff(alo.Plan(), snap)
			if len(drift) != len(l.Rungs()) {
				t.Errorf("%d drifts for %d rungs: %v", len(drift), len(l.Rungs()), drift)
			}
			for _, d := range drift {
				if d.Kind != Different || !strings.Contains(d.Detail, "x-dead-letter-strategy") {
					t.Errorf("drift %s", d)
				}
			}
			if c := alo.Plan().Conflicts(snap); len(c) == 0 {
				t.Error("re-declaring at least once is no conflict")
			}
		})
	}
}

// A default ladder is discovered at least once, as before; one rung
// changed by hand is drift, not another ladder.
func TestAtLeastOnceDiscovered(t *testing.T) {
	l := amoLadder(t, "direct", false)
	snap := l.Plan().Snapshot()
	for i, q := range snap.Queues {
		if q.Args["x-dead-letter-strategy"] == AtLeastOnce {
			a := Args{}
			for k, v := range q.Args {
				a[k] = v
			}
			a["x-dead-letter-strategy"] = AtMostOnce
			snap.Queues[i].Args = a
			break
		}
	}
	found := Discover(snap)
	if len(found) != 1 || found[0].Ladder.AtMostOnce || len(found[0].Drift) != 1 {
		t.Fatalf("found %+v", found)
	}
	if got := found[0].Ladder.DeadLetterStrategy(); got != AtLeastOnce {
		t.Errorf("strategy %s", got)
	}
}

func TestAtMostOnceRefused(t *testing.T) {
	for _, l := range []Ladder{
		{Name: "c", QueueType: Classic, AtMostOnce: true},
		{Name: "n", Layout: "nsb", AtMostOnce: true},
		{Name: "k", Layout: "celery", AtMostOnce: true},
	} {
		if _, err := l.Normalize(); !errors.Is(err, ErrInvalidLadder) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v", l, err)
		}
	}
	if c, _ := (Ladder{Name: "c", QueueType: Classic}).Normalize(); c.DeadLetterStrategy() != AtMostOnce {
		t.Errorf("classic rungs dead-letter %s", c.DeadLetterStrategy())
	}
}

func TestParseDeadLetterStrategy(t *testing.T) {
	for in, want := range map[string]bool{AtLeastOnce: false, AtMostOnce: true} {
		if got, err := ParseDeadLetterStrategy(in); err != nil || got != want {
			t.Errorf("%s: %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "at-most-twice", "AT-MOST-ONCE"} {
		if _, err := ParseDeadLetterStrategy(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// At most once below a TTL: the limit is spelled as the shortest rung it
// leaves at least once, only the shorter rungs get at-most-once, and
// discovery reads the same ladder back without drift.
func TestAtMostOnceBelow(t *testing.T) {
	base := Ladder{Name: "bursts", Vhost: "/", Layout: "direct", Unit: time.Second, Levels: 3, Radix: 4, QueueType: Quorum}
	for _, tc := range []struct {
		below, want time.Duration
		err         bool
	}{
		{10 * time.Second, 12 * time.Second, false}, // rungs 1s 2s 3s 4s 8s
		{12 * time.Second, 12 * time.Second, false},
		{2 * time.Second, 2 * time.Second, false},
		{time.Minute, 0, false}, // every rung: the whole ladder
		{time.Second, 0, true},  // no rung is shorter
		{-time.Second, 0, true},
	} {
		l := base
		l.AtMostOnceBelow = tc.below
		n, err := l.Normalize()
		if tc.err {
			if !errors.Is(err, ErrInvalidLadder) {
				t.Errorf("below %s: %v", tc.below, err)
			}
			continue
		}
		if err != nil || !n.AtMostOnce || n.AtMostOnceBelow != tc.want {
			t.Errorf("below %s: %+v, %v; want below %s", tc.below, n, err, tc.want)
			continue
		}
		snap := n.Plan().Snapshot()
		for _, r := range n.Rungs() {
			q, _ := snap.Queue(r.Queue)
			want := AtLeastOnce
			if tc.want == 0 || r.TTL < tc.want {
				want = AtMostOnce
			}
			if q.Args["x-dead-letter-strategy"] != want {
				t.Errorf("below %s: rung %s of %s: %v", tc.below, r.Queue, r.TTL, q.Args["x-dead-letter-strategy"])
			}
		}
		found := Discover(snap)
		if len(found) != 1 || found[0].Ladder.AtMostOnceBelow != n.AtMostOnceBelow || !found[0].Ladder.AtMostOnce || len(found[0].Drift) != 0 {
			t.Errorf("below %s: found %+v", tc.below, found)
		}
		if tc.want > 0 {
			if got := n.DeadLetterStrategy(); got != "at-most-once below "+FormatDelay(tc.want) || n.EveryRungAtMostOnce() {
				t.Errorf("below %s: strategy %q", tc.below, got)
			}
			whole := base
			whole.AtMostOnce = true
			if drift := Diff(whole.Plan(), snap); len(drift) == 0 || n.SameStrategy(whole) {
				t.Errorf("below %s: no drift against the whole ladder at most once", tc.below)
			}
		}
	}
}
