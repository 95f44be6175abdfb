package topology

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// The README's worked example, key for key.
func TestDirectKeysOfTheWorkedExample(t *testing.T) {
	l := mustLadder(t, Ladder{Name: "jobs", Layout: "direct", Targets: []string{"orders"}})
	if l.Radix != 16 || l.Levels != 7 || l.Unit != time.Second {
		t.Fatalf("default direct ladder: radix %d, %d levels, unit %s; want 16, 7, 1s", l.Radix, l.Levels, l.Unit)
	}
	cases := map[string]struct {
		delay time.Duration
		dest  string
		key   string
		bcc   []string
	}{
		"90s to orders":      {90 * time.Second, "orders", "0.0.0.0.0.5.a.orders", []string{"i>01.5", "01>00.a", "00>=orders"}},
		"90s to done":        {90 * time.Second, "", "0.0.0.0.0.5.a", []string{"i>01.5", "01>00.a", "00>="}},
		"zero":               {0, "", "0.0.0.0.0.0.0", []string{"i>="}},
		"one hop, no digits": {4096 * time.Second, "orders", "0.0.0.1.0.0.0.orders", []string{"i>03.1", "03>=orders"}},
		"rounded up":         {1500 * time.Millisecond, "", "0.0.0.0.0.0.2", []string{"i>00.2", "00>="}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tr, err := l.Trace(c.delay, c.dest)
			if err != nil {
				t.Fatal(err)
			}
			if tr.Exchange != "jobs.ingest" || tr.Key != c.key || !reflect.DeepEqual(tr.BCC, c.bcc) {
				t.Fatalf("trace = %s %q %v; want jobs.ingest %q %v", tr.Exchange, tr.Key, tr.BCC, c.key, c.bcc)
			}
			if got, err := l.KeyBCC(tr.Key); err != nil || !reflect.DeepEqual(got, c.bcc) {
				t.Fatalf("KeyBCC(%q) = %v, %v; want %v", tr.Key, got, err, c.bcc)
			}
			if h := tr.Headers(); !reflect.DeepEqual(h, map[string]any{"BCC": BCCValue(c.bcc)}) {
				t.Fatalf("Headers() = %v", h)
			}
		})
	}
	// Radix 2 names rungs without a digit, and so do the keys.
	b := mustLadder(t, Ladder{Name: "b", Layout: "direct", Radix: 2, Levels: 4})
	if bcc, _ := b.BCC(5*time.Second, ""); !reflect.DeepEqual(bcc, []string{"i>02", "02>00", "00>="}) {
		t.Fatalf("radix 2 BCC = %v", bcc)
	}
}

func TestDirectPlan(t *testing.T) {
	l := mustLadder(t, Ladder{Name: "r", Layout: "direct", Levels: 3, Radix: 4, Targets: []string{"w"}, QueueType: Quorum})
	p := l.Plan()
	for _, x := range p.Exchanges {
		switch {
		case x.Name == "r.unroutable":
			if x.Type != "fanout" {
				t.Errorf("r.unroutable is %s", x.Type)
			}
		case x.Type != "direct" || x.Args["alternate-exchange"] != "r.unroutable" || !x.Durable:
			t.Errorf("exchange %s: %s %v", x.Name, x.Type, x.Args)
		}
	}
	ids := map[string]bool{}
	for _, b := range p.Bindings {
		ids[b.ID()] = true
		if b.Source != "r.unroutable" && !strings.HasPrefix(b.RoutingKey, "i>") {
			// Each exchange binds only its own keys.
			from, _, _ := strings.Cut(b.RoutingKey, ">")
			if b.Source != "r.rung."+from+".expired" {
				t.Errorf("binding %s is on an exchange its key does not name", b.ID())
			}
		}
	}
	for _, want := range []string{
		"r.ingest -> queue:r.rung.02.3 [i>02.3]",
		"r.ingest -> queue:r.done [i>=]",
		"r.ingest -> queue:w [i>=w]",
		"r.rung.02.expired -> queue:r.rung.00.1 [02>00.1]",
		"r.rung.02.expired -> queue:w [02>=w]",
		"r.rung.00.expired -> queue:r.done [00>=]",
		"r.unroutable -> queue:r.unroutable []",
	} {
		if !ids[want] {
			t.Errorf("missing binding %s", want)
		}
	}
	// Nothing binds from a level to a rung of the same or a higher level.
	if ids["r.rung.01.expired -> queue:r.rung.01.1 [01>01.1]"] || ids["r.rung.01.expired -> queue:r.rung.02.1 [01>02.1]"] {
		t.Error("a level binds a rung at or above itself")
	}
	for _, q := range p.Queues {
		if q.Args["x-queue-type"] != "quorum" || (q.Args["x-message-ttl"] != nil && q.Args["x-dead-letter-strategy"] != "at-least-once") {
			t.Errorf("queue %s: %v", q.Name, q.Args)
		}
	}
	if c := l.Cost(); c.Bindings != len(p.Bindings) || c.Rungs != 9 {
		t.Errorf("cost %+v", c)
	}
}

// A message published without its BCC header is not lost: the ingest
// exchange's alternate exchange keeps it in the unroutable queue.
func TestDirectWithoutBCCIsUnroutable(t *testing.T) {
	l := mustLadder(t, Ladder{Name: "jobs", Layout: "direct", Levels: 3, Radix: 16})
	tr, _ := l.Trace(300*time.Second, "")
	steps, err := NewGraph(l.Plan().Snapshot()).Walk(tr.Exchange, tr.Key)
	if err != nil || len(steps) != 1 || steps[0].Queue != "jobs.unroutable" {
		t.Fatalf("without BCC: %v, %v", steps, err)
	}
	// With the key of one exchange missing, the message stops at that one.
	steps, err = NewGraph(l.Plan().Snapshot()).Walk(tr.Exchange, tr.Key, tr.BCC[0], tr.BCC[2])
	if err != nil || len(steps) != 2 || steps[1].Queue != "jobs.unroutable" {
		t.Fatalf("without the second key: %v, %v", steps, err)
	}
}

// The properties for the direct layout: for random delays the
// simulated route's TTLs add up to the rounded delay, never less than the
// delay asked for, and every key fits AMQP's limit; a destination too long
// for a key is refused, never truncated.
func TestDirectRoutesAreExactAndKeysFit(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := Ladder{Name: rapid.SampledFrom([]string{"jobs", "a.b", strings.Repeat("n", 200)}).Draw(t, "name"), Layout: "direct",
			Radix:     rapid.SampledFrom([]int{2, 4, 8, 16}).Draw(t, "radix"),
			Unit:      time.Duration(rapid.SampledFrom([]int{1, 7, 1000}).Draw(t, "unitms")) * time.Millisecond,
			QueueType: rapid.SampledFrom([]QueueType{Classic, Quorum}).Draw(t, "qtype")}
		l.Levels = rapid.IntRange(1, DefaultLevelsFor(l.Radix)).Draw(t, "levels")
		dest := rapid.SampledFrom([]string{"", "w", strings.Repeat("d", rapid.IntRange(240, 256).Draw(t, "destlen"))}).Draw(t, "dest")
		if dest != "" {
			l.Targets = []string{dest}
		}
		l, err := l.Normalize()
		if err != nil {
			if dest != "" && errors.Is(err, ErrBadDest) {
				t.Skip("destination over 255 bytes")
			}
			t.Fatal(err)
		}
		d := drawDelay(t, l)
		tr, err := l.Trace(d, dest)
		if err != nil {
			// The routing key spends 2 bytes a level, a delivery key at
			// most 4 ("NN>=") before the destination.
			if errors.Is(err, ErrKeyTooLong) && len(dest) > min(MaxKeyBytes-2*l.Levels, MaxKeyBytes-4) {
				return
			}
			t.Fatalf("Trace(%s, %d-byte dest): %v", d, len(dest), err)
		}
		for _, k := range append([]string{tr.Key}, tr.BCC...) {
			if len(k) > MaxKeyBytes || k == "" {
				t.Fatalf("key of %d bytes", len(k))
			}
		}
		if len(tr.BCC) != len(tr.Hops)+1 {
			t.Fatalf("%d BCC keys for %d hops", len(tr.BCC), len(tr.Hops))
		}
		steps, err := NewGraph(withWorkers(l, dest)).Walk(tr.Exchange, tr.Key, tr.BCC...)
		if err != nil {
			t.Fatal(err)
		}
		var sum time.Duration
		for _, s := range steps {
			sum += s.TTL
		}
		if sum != tr.Delay || sum < d || steps[len(steps)-1].Queue != tr.Target {
			t.Fatalf("delay %s: simulated %s to %s, trace %s to %s", d, sum, steps[len(steps)-1].Queue, tr.Delay, tr.Target)
		}
	})
}

// A destination is bound from every exchange of a direct ladder, and each
// binding matters: one missing is drift, not excused by the others.
func TestDirectTargetBindingsAreEachNeeded(t *testing.T) {
	l := mustLadder(t, Ladder{Name: "r", Layout: "direct", Levels: 3, Radix: 2, Targets: []string{"w"}})
	snap := l.Plan().Snapshot()
	var kept []Binding
	for _, b := range snap.Bindings {
		if b.ID() != "r.rung.01.expired -> queue:w [01>=w]" {
			kept = append(kept, b)
		}
	}
	snap.Bindings = kept
	d := Diff(l.Plan(), snap)
	if len(d) != 1 || d[0].Kind != Missing || d[0].Name != "r.rung.01.expired -> queue:w [01>=w]" {
		t.Fatalf("drift = %v", d)
	}
	// Discovery still finds the destination from its other bindings.
	found := Discover(snap)
	if len(found) != 1 || found[0].Ladder.Layout != "direct" || !reflect.DeepEqual(found[0].Ladder.Targets, []string{"w"}) {
		t.Fatalf("found %+v", found)
	}
	for key, ok := range map[string]bool{"i>=w": true, "02>=w": true, "03>=w": false, "i>=": false, "i>02": false, "x>=w": false, "2>=w": false} {
		src := "r.ingest"
		if !strings.HasPrefix(key, "i") {
			src = "r.rung." + strings.SplitN(key, ">", 2)[0] + ".expired"
		}
		if _, got := l.layout().IsTargetBinding(l, Binding{Source: src, Destination: "w", DestinationType: ToQueue, RoutingKey: key}); got != ok {
			t.Errorf("IsTargetBinding(%s [%s]) = %v", src, key, got)
		}
	}
}

// A direct ladder and a prefix ladder have the same names; discovery tells
// them apart by their exchanges' type, even with the ingest exchange gone.
func TestDiscoverTellsDirectFromPrefix(t *testing.T) {
	for _, layout := range []string{"prefix", "direct"} {
		l := mustLadder(t, Ladder{Name: "jobs", Layout: layout, Levels: 3, Radix: 4})
		snap := l.Plan().Snapshot()
		var xs []Exchange
		for _, x := range snap.Exchanges {
			if x.Name != "jobs.ingest" {
				xs = append(xs, x)
			}
		}
		snap.Exchanges = xs
		found := Discover(snap)
		if len(found) != 1 || found[0].Ladder.Layout != layout {
			t.Fatalf("%s without ingest: found %v", layout, found)
		}
		if len(found[0].Drift) != 1 || found[0].Drift[0].Name != "jobs.ingest" {
			t.Fatalf("%s without ingest: drift %v", layout, found[0].Drift)
		}
	}
}

// Route simulation routes by every key and delivers once to the union.
func TestRouteByEveryKey(t *testing.T) {
	snap := Snapshot{
		Exchanges: []Exchange{{Name: "x", Type: "direct"}},
		Queues:    []Queue{{Name: "a"}, {Name: "b"}},
		Bindings: []Binding{
			{Source: "x", Destination: "a", DestinationType: ToQueue, RoutingKey: "ka"},
			{Source: "x", Destination: "b", DestinationType: ToQueue, RoutingKey: "kb"},
		},
	}
	g := NewGraph(snap)
	if qs, _, _ := g.Route("x", "none", "kb", "ka", "ka"); !reflect.DeepEqual(qs, []string{"a", "b"}) {
		t.Fatalf("Route = %v", qs)
	}
	if qs, _, _ := g.Route("", "none", "b"); !reflect.DeepEqual(qs, []string{"b"}) {
		t.Fatalf("default exchange Route = %v", qs)
	}
}

// A message resting in a direct ladder's queue shows the exchange that
// routed it there and its routing key; that is enough to rebuild its path.
func TestRestingPath(t *testing.T) {
	d := mustLadder(t, Ladder{Name: "jobs", Layout: "direct", Levels: 3, Radix: 16, Targets: []string{"w"}})
	p := mustLadder(t, Ladder{Name: "p", Layout: "prefix", Levels: 3, Radix: 2})
	tr, ok := RestingPath([]Ladder{p, d}, "jobs.rung.01.expired", "0.5.a.w")
	if !ok || !reflect.DeepEqual(tr.BCC, []string{"i>01.5", "01>00.a", "00>=w"}) || tr.Target != "w" || len(tr.Hops) != 2 {
		t.Fatalf("RestingPath = %+v, %v", tr, ok)
	}
	if tr, ok := RestingPath([]Ladder{p, d}, "p.ingest", "0.1.1"); !ok || tr.BCC != nil || len(tr.Hops) != 2 {
		t.Fatalf("prefix RestingPath = %+v, %v", tr, ok)
	}
	for ex, key := range map[string]string{"orders": "0.5.a", "jobs.ingest": "not.a.key", "jobs.rung.01.expired": "0.5"} {
		if _, ok := RestingPath([]Ladder{p, d}, ex, key); ok {
			t.Errorf("RestingPath(%s, %s) found a path", ex, key)
		}
	}
}
