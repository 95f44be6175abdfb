package topology

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// drawLadder draws a valid ladder of any layout, small enough to simulate.
func drawLadder(t *rapid.T) Ladder {
	layout := rapid.SampledFrom(LayoutNames()).Draw(t, "layout")
	l := Ladder{Layout: layout, Vhost: rapid.SampledFrom([]string{"/", "test"}).Draw(t, "vhost")}
	switch layout {
	case "nsb", "nsb1":
		l.Targets = rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"sales", "billing.retry", "a"}), 0, 2, rapid.ID[string]).Draw(t, "targets")
	case "celery":
		// "rungs" (the default name) becomes "celery"; the others are
		// kombu's prefixed names. The routing keys are never dotted
		// suffixes of each other: Celery's "#.KEY" bindings would send a
		// message to both (see TestCeleryOverlappingKeysAreAmbiguous).
		l.Name = rapid.SampledFrom([]string{"rungs", "celery", "app_celery", "a.b_celery"}).Draw(t, "name")
		l.QueueType = rapid.SampledFrom([]QueueType{Classic, Quorum}).Draw(t, "qtype")
		l.Targets = rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"celery", "emails.high", "z"}), 0, 2, rapid.ID[string]).Draw(t, "targets")
	default:
		l.Name = rapid.SampledFrom([]string{"rungs", "delay", "app.retry", "x"}).Draw(t, "name")
		l.Unit = time.Duration(rapid.SampledFrom([]int{1, 10, 250, 1000, 60000}).Draw(t, "unitms")) * time.Millisecond
		l.QueueType = rapid.SampledFrom([]QueueType{Classic, Quorum}).Draw(t, "qtype")
		if layout == "prefix" || layout == "direct" {
			l.Radix = rapid.SampledFrom([]int{2, 4, 8, 16}).Draw(t, "radix")
			l.Targets = rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"work", "orders.retry", "z"}), 0, 2, rapid.ID[string]).Draw(t, "targets")
		}
		maxLevels := 28
		for maxLevels > 1 {
			if _, ok := (Ladder{Unit: l.Unit, Radix: max(l.Radix, 2), Levels: maxLevels}).maxUnits(); ok {
				break
			}
			maxLevels--
		}
		l.Levels = rapid.IntRange(1, maxLevels).Draw(t, "levels")
	}
	n, err := l.Normalize()
	if err != nil {
		t.Fatalf("drawn ladder %+v: %v", l, err)
	}
	return n
}

// drawDelay draws a delay up to the ladder's maximum, often not a multiple
// of the unit, so that rounding is exercised.
func drawDelay(t *rapid.T, l Ladder) time.Duration {
	max, _ := l.maxUnits()
	u := rapid.Uint64Range(0, max).Draw(t, "units")
	d := time.Duration(u) * l.Unit
	if u > 0 {
		d -= time.Duration(rapid.Int64Range(0, int64(l.Unit)-1).Draw(t, "under"))
	}
	return d
}

func drawDest(t *rapid.T, l Ladder) string {
	switch l.Layout {
	case "suffix":
		return ""
	case "nsb", "nsb1", "celery":
		if len(l.Targets) == 0 {
			return "unbound"
		}
		return rapid.SampledFrom(l.Targets).Draw(t, "dest")
	}
	return rapid.SampledFrom(append([]string{""}, l.Targets...)).Draw(t, "dest")
}

// Every delay up to the maximum follows exactly one route through the
// simulated bindings, that route is the trace's, its TTLs add up to the
// rounded delay (never less than asked, less than a unit more), and it ends
// at the target.
func TestEveryDelayHasExactlyOneRoute(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLadder(t)
		d := drawDelay(t, l)
		dest := drawDest(t, l)
		tr, err := l.Trace(d, dest)
		if err != nil {
			t.Fatalf("Trace(%v, %q): %v", d, dest, err)
		}
		if tr.Delay < d || tr.Delay-d >= l.Unit || tr.Total() != tr.Delay {
			t.Fatalf("delay %v rounded to %v, hops total %v (unit %v)", d, tr.Delay, tr.Total(), l.Unit)
		}
		snap := withWorkers(l, dest)
		g := NewGraph(snap)
		steps, err := g.Walk(tr.Exchange, tr.Key, tr.BCC...)
		if err != nil {
			t.Fatalf("Walk(%s, %s): %v", tr.Exchange, tr.Key, err)
		}
		if len(steps) != len(tr.Hops)+1 {
			t.Fatalf("simulated %d steps, trace has %d hops + target\n%v\n%v", len(steps), len(tr.Hops), steps, tr)
		}
		for i, h := range tr.Hops {
			if steps[i].Queue != h.Queue || steps[i].TTL != h.TTL {
				t.Fatalf("step %d: simulated %s(%v), trace %s(%v)", i, steps[i].Queue, steps[i].TTL, h.Queue, h.TTL)
			}
		}
		if last := steps[len(steps)-1]; last.Queue != tr.Target {
			t.Fatalf("simulation ends in %s, trace in %s", last.Queue, tr.Target)
		}
		// No exchange on the way matches two of its bindings for the
		// message's keys.
		keys := append([]string{tr.Key}, tr.BCC...)
		for _, st := range steps {
			for _, ex := range st.Exchanges {
				x, _ := snap.Exchange(ex)
				n := 0
				for _, b := range snap.Bindings {
					for _, k := range keys {
						if b.Source == ex && bindingMatches(x.Type, b.RoutingKey, k) {
							n++
						}
					}
				}
				if n > 1 {
					t.Fatalf("exchange %s matches %d bindings for %v", ex, n, keys)
				}
			}
		}
		// Only the direct layout routes by BCC, and then by nothing else.
		if (len(tr.BCC) > 0) != (l.Layout == "direct") {
			t.Fatalf("%s ladder traced with BCC %v", l.Layout, tr.BCC)
		}
	})
}

// withWorkers is what a broker holds when the ladder runs with its workers:
// the plan, a queue for every destination (destination queues are the
// workers', not the plan's) and, in Celery's wiring, the queue's exchange of
// the same name. A destination the ladder does not list is attached the way
// its layout attaches one, as the worker would have done.
func withWorkers(l Ladder, dest string) Snapshot {
	if dest != "" && !slices.Contains(l.Targets, dest) {
		l.Targets = append(append([]string(nil), l.Targets...), dest)
	}
	snap := l.Plan().Snapshot()
	for _, q := range l.Targets {
		snap.Queues = append(snap.Queues, Queue{Name: q, Durable: true})
		if l.Layout == "celery" {
			snap.Exchanges = append(snap.Exchanges, Exchange{Name: q, Type: "topic", Durable: true})
		}
	}
	return snap
}

func TestKeyDecodeRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLadder(t)
		d := drawDelay(t, l)
		dest := drawDest(t, l)
		key, err := l.Key(d, dest)
		if err != nil {
			t.Fatal(err)
		}
		got, gotDest, err := l.Decode(key)
		u, _ := l.Units(d)
		if err != nil || got != time.Duration(u)*l.Unit || gotDest != dest {
			t.Fatalf("Decode(%q) = %v %q %v; want %v %q", key, got, gotDest, err, time.Duration(u)*l.Unit, dest)
		}
	})
}

func TestDelayOverMaximumIsAnError(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLadder(t)
		over := l.MaxDelay() + time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "over"))
		if _, err := l.Trace(over, drawDest(t, l)); err == nil {
			t.Fatalf("delay %v over max %v accepted", over, l.MaxDelay())
		}
	})
}

func TestDiffOfPlanWithItselfIsEmpty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLadder(t)
		if d := Diff(l.Plan(), l.Plan().Snapshot()); len(d) != 0 {
			t.Fatalf("Diff(plan, plan) = %v", d)
		}
	})
}

func TestDiscoverGivesBackTheLadder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLadder(t)
		found := Discover(l.Plan().Snapshot())
		if len(found) != 1 {
			t.Fatalf("Discover found %d ladders: %v", len(found), found)
		}
		if !reflect.DeepEqual(found[0].Ladder, l) || len(found[0].Drift) != 0 {
			t.Fatalf("Discover = %+v\nwant     %+v", found[0], l)
		}
	})
}

// Two ladders side by side in one vhost are both found, each without the
// other's objects showing as its drift.
func TestDiscoverSeparatesNeighbours(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := drawLadder(t), drawLadder(t)
		b.Vhost = a.Vhost
		if a.Name == b.Name && (a.Layout == b.Layout || a.Layout != "nsb" && b.Layout != "nsb") {
			t.Skip("same name: the second would overwrite the first")
		}
		found := Discover(a.Plan().Snapshot().Merge(b.Plan().Snapshot()))
		if len(found) != 2 {
			t.Fatalf("found %d ladders, want 2: %v", len(found), found)
		}
		for _, f := range found {
			if len(f.Drift) != 0 {
				t.Fatalf("%s drifts next to a neighbour: %v", f.Ladder, f.Drift)
			}
		}
	})
}

func FuzzDecode(f *testing.F) {
	f.Add("0.1.0.1.orders", "prefix")
	f.Add("#.1.*", "suffix")
	f.Add("..", "nsb")
	f.Add("0.0.1.f.orders", "direct")
	f.Fuzz(func(t *testing.T, key, layout string) {
		l, err := Ladder{Layout: layout, Levels: 4, Radix: 2}.Normalize()
		if err != nil {
			l, err = Ladder{Layout: "nsb"}.Normalize()
			if err != nil {
				t.Fatal(err)
			}
		}
		d, dest, err := l.Decode(key)
		if err != nil {
			return
		}
		// What decodes must encode back to the same key, but for the
		// stacked prefixes of a Celery key, which decode to the routing
		// key after them.
		want := key
		if l.Layout == "celery" {
			words := strings.Split(key, ".")
			if n, rk := CeleryStacked(strings.Join(words[l.Levels:], "."), l.Levels); n > 0 {
				want = strings.Join(words[:l.Levels], ".") + "." + rk
			}
		}
		again, err := l.Key(d, dest)
		if err != nil || again != want {
			t.Fatalf("Decode(%q) = %v %q, re-encoded as %q (%v)", key, d, dest, again, err)
		}
	})
}

// A Celery key with any number of stacked delay prefixes (kombu before
// the fix for celery/kombu#2556) decodes to its first prefix's delay and
// the routing key after the last one, which is where "#.<routing key>"
// delivers it.
func TestCeleryStackedPrefixesPeel(t *testing.T) {
	l, err := Ladder{Layout: "celery"}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		rk := rapid.StringMatching(`[a-z][a-z0-9_]{0,8}(\.[a-z0-9_]{1,8}){0,2}`).Draw(t, "routing key")
		first := rapid.Uint64Range(1, 1<<28-1).Draw(t, "delay")
		key, err := l.Key(time.Duration(first)*time.Second, rk)
		if err != nil {
			t.Fatal(err)
		}
		stacked := rapid.IntRange(0, 3).Draw(t, "stacked")
		for i := 0; i < stacked; i++ {
			older, err := l.Key(time.Duration(rapid.Uint64Range(0, 1<<28-1).Draw(t, "older"))*time.Second, rk)
			if err != nil {
				t.Fatal(err)
			}
			words := strings.Split(key, ".")
			key = strings.Join(words[:l.Levels], ".") + "." + strings.TrimSuffix(older, "."+rk) + "." + strings.Join(words[l.Levels:], ".")
		}
		if len(key) > MaxKeyBytes {
			t.Skip("past AMQP's limit: kombu could not have published it")
		}
		units, dest, err := l.Decode(key)
		if err != nil || units != time.Duration(first)*time.Second || dest != rk {
			t.Fatalf("Decode(%q) = %d %q %v, want %d %q", key, units, dest, err, first, rk)
		}
		words := strings.Split(key, ".")
		if n, left := CeleryStacked(strings.Join(words[l.Levels:], "."), l.Levels); n != stacked || left != rk {
			t.Fatalf("CeleryStacked = %d %q, want %d %q", n, left, stacked, rk)
		}
		if got := CeleryRetriesLeft(len(key), l.Levels); len(key)+got*2*l.Levels > MaxKeyBytes || len(key)+(got+1)*2*l.Levels <= MaxKeyBytes {
			t.Fatalf("%d bytes: %d retries left", len(key), got)
		}
	})
	// A routing key that only starts like a prefix is the routing key.
	if n, rk := CeleryStacked("0.1.orders", l.Levels); n != 0 || rk != "0.1.orders" {
		t.Errorf("CeleryStacked(0.1.orders) = %d %q", n, rk)
	}
}

func ExampleLadder_Trace() {
	l, _ := Ladder{Name: "jobs", Levels: 4, Radix: 2}.Normalize()
	tr, _ := l.Trace(5*time.Second, "work")
	fmt.Println(tr)
	// Output: 5s via 0.1.0.1.work: jobs.rung.02(4s) → jobs.rung.00(1s) → work
}

// A closed plan declares both ends of every binding, adds nothing a plan
// already declares, and is still the ladder's plan: it does not drift.
func TestClosedPlanDeclaresEveryEnd(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLadder(t)
		c := l.Plan().Closed()
		snap := c.Snapshot()
		for _, b := range c.Bindings {
			_, okSrc := snap.Exchange(b.Source)
			okDst := false
			if b.DestinationType == ToExchange {
				_, okDst = snap.Exchange(b.Destination)
			} else {
				_, okDst = snap.Queue(b.Destination)
			}
			if !okSrc || !okDst {
				t.Fatalf("binding %s has an undeclared end", b.ID())
			}
		}
		if d := Diff(l.Plan(), snap); len(d) != 0 {
			t.Fatalf("closed plan drifts: %v", d)
		}
		if len(c.Exchanges)+len(c.Queues) > len(l.Plan().Exchanges)+len(l.Plan().Queues)+2*len(l.Targets) {
			t.Fatalf("closed plan adds more than the destinations")
		}
	})
}
