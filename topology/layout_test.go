package topology

import (
	"bufio"
	"errors"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

func mustLadder(t testing.TB, l Ladder) Ladder {
	t.Helper()
	n, err := l.Normalize()
	if err != nil {
		t.Fatalf("Normalize(%+v): %v", l, err)
	}
	return n
}

// The suffix layout must create exactly the bindings of the seed's Terraform
// module; the expected list was written by hand from the seed.
func TestSuffixMatchesSeedTerraform(t *testing.T) {
	f, err := os.Open("../testdata/seed003-15s-bindings.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		want = append(want, Binding{Source: c[0], DestinationType: c[1], Destination: c[2], RoutingKey: c[3]}.ID())
	}
	levels, err := LevelsFor(15*time.Second, time.Second, 2)
	if err != nil || levels != 4 {
		t.Fatalf("LevelsFor(15s) = %d, %v; want 4 (the module's ceil(log2(15+1)))", levels, err)
	}
	l := mustLadder(t, Ladder{Name: "example", Layout: "suffix", Levels: levels, QueueType: Classic})
	var got []string
	for _, b := range l.Plan().Bindings {
		got = append(got, b.ID())
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("bindings differ from the seed\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// And the module's queues: TTL in ms, dead-lettering to <queue>.done.
	q, _ := l.Plan().Snapshot().Queue("example.delay.8")
	if ttl, _ := q.TTL(); ttl != 8*time.Second || q.Args["x-dead-letter-exchange"] != "example.delay.8.done" || len(q.Args) != 2 {
		t.Fatalf("example.delay.8 args = %v", q.Args)
	}
}

// The module's default max_delay (one week) gives 20 rungs.
func TestSuffixDefaultModuleSize(t *testing.T) {
	levels, _ := LevelsFor(7*24*time.Hour, time.Second, 2)
	if levels != 20 {
		t.Fatalf("levels for a week = %d; want 20", levels)
	}
}

// The NServiceBus documentation's example: 10 seconds to "destination".
func TestNSBKeyMatchesDocumentation(t *testing.T) {
	l := mustLadder(t, Ladder{Layout: "nsb"})
	key, err := l.Key(10*time.Second, "destination")
	if err != nil {
		t.Fatal(err)
	}
	want := "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.1.0.destination"
	if key != want {
		t.Fatalf("key = %s\nwant  %s", key, want)
	}
	if l.Name != "nsb.v2" || l.QueueType != Quorum || l.MaxDelay() != 268435455*time.Second {
		t.Fatalf("nsb ladder = %+v, max %v", l, l.MaxDelay())
	}
	ex, _ := l.Entry(10 * time.Second)
	if ex != "nsb.v2.delay-level-03" {
		t.Fatalf("entry = %s; want the highest set bit's level", ex)
	}
	if _, err := l.Key(time.Second, ""); !errors.Is(err, ErrBadDest) {
		t.Fatalf("nsb key without destination: %v", err)
	}
}

func TestPrefixKeysAndBindings(t *testing.T) {
	l := mustLadder(t, Ladder{Name: "r", Layout: "prefix", Levels: 4, Radix: 2})
	key, err := l.Key(5*time.Second, "orders.retry")
	if err != nil || key != "0.1.0.1.orders.retry" {
		t.Fatalf("key = %q, %v", key, err)
	}
	ids := map[string]bool{}
	for _, b := range l.Plan().Bindings {
		ids[b.ID()] = true
	}
	for _, want := range []string{
		"r.ingest -> queue:r.rung.02 [0.1.*.*.#]",
		"r.ingest -> exchange:r.deliver [0.0.0.0.#]",
		"r.rung.03.expired -> queue:r.rung.01 [*.0.1.*.#]",
		"r.rung.02.expired -> exchange:r.deliver [*.*.0.0.#]",
		"r.rung.00.expired -> exchange:r.deliver [*.*.*.*.#]",
		"r.deliver -> queue:r.done [*.*.*.*]",
		"r.unroutable -> queue:r.unroutable []",
	} {
		if !ids[want] {
			t.Errorf("missing binding %s", want)
		}
	}
	for _, x := range l.Plan().Exchanges {
		if x.Type == "topic" && x.Args["alternate-exchange"] != "r.unroutable" {
			t.Errorf("exchange %s has no alternate exchange", x.Name)
		}
	}
}

func TestQuorumLaddersDeadLetterAtLeastOnce(t *testing.T) {
	for _, layout := range LayoutNames() {
		levels := 8
		switch layout {
		case "nsb", "celery":
			levels = 0 // fixed at 28
		case "nsb1":
			continue // classic by definition (TestNSB1IsClassicAndLazy)
		}
		l := mustLadder(t, Ladder{Layout: layout, QueueType: Quorum, Levels: levels})
		for _, q := range l.Plan().Queues {
			if _, ok := q.TTL(); !ok {
				continue
			}
			if q.Args["x-queue-type"] != "quorum" || q.Args["x-dead-letter-strategy"] != "at-least-once" || q.Args["x-overflow"] != "reject-publish" {
				t.Errorf("%s: queue %s args %v", layout, q.Name, q.Args)
			}
		}
	}
}

func TestUnitsRoundUpAndLimits(t *testing.T) {
	l := mustLadder(t, Ladder{Unit: 10 * time.Millisecond, Levels: 4, Radix: 2}) // max 150ms
	cases := map[time.Duration]uint64{0: 0, 1: 1, 10 * time.Millisecond: 1, 11 * time.Millisecond: 2, 150 * time.Millisecond: 15}
	for d, want := range cases {
		if got, err := l.Units(d); err != nil || got != want {
			t.Errorf("Units(%v) = %d, %v; want %d", d, got, err, want)
		}
	}
	if _, err := l.Units(151 * time.Millisecond); !errors.Is(err, ErrDelayTooLong) {
		t.Errorf("151ms on a 150ms ladder: %v", err)
	}
	if _, err := l.Units(-time.Millisecond); !errors.Is(err, ErrNegativeDelay) {
		t.Errorf("negative delay: %v", err)
	}
	long := strings.Repeat("w.", 130) + "w"
	if _, err := l.Key(time.Millisecond, long); !errors.Is(err, ErrKeyTooLong) && !errors.Is(err, ErrBadDest) {
		t.Errorf("long destination: %v", err)
	}
}

func TestNormalizeRejects(t *testing.T) {
	bad := map[string]Ladder{
		"layout":       {Layout: "spiral"},
		"queue type":   {QueueType: "stream"},
		"unit":         {Unit: time.Microsecond},
		"unit ms":      {Unit: 1500 * time.Microsecond},
		"radix":        {Radix: 3},
		"levels":       {Levels: 65},
		"overflow":     {Levels: 64, Radix: 16},
		"wildcard":     {Name: "a.*"},
		"space":        {Name: " a"},
		"suffix radix": {Layout: "suffix", Radix: 4},
		"suffix dest":  {Layout: "suffix", Targets: []string{"q"}},
		"nsb unit":     {Layout: "nsb", Unit: time.Millisecond},
		"nsb name":     {Layout: "nsb", Name: "mine"},
		"target":       {Targets: []string{"a.#"}},
	}
	for name, l := range bad {
		if _, err := l.Normalize(); err == nil {
			t.Errorf("%s: Normalize(%+v) accepted", name, l)
		}
	}
}

func TestDecodeRejectsForeignKeys(t *testing.T) {
	l := mustLadder(t, Ladder{Name: "s", Layout: "suffix", Levels: 4})
	for _, key := range []string{"1.0.1", "1.0.1.1.1", "2.0.0.0", "a.b.c.d", ""} {
		if _, _, err := l.Decode(key); !errors.Is(err, ErrBadKey) {
			t.Errorf("suffix Decode(%q) = %v", key, err)
		}
	}
	p := mustLadder(t, Ladder{Name: "p", Levels: 4, Radix: 4})
	if d, dest, err := p.Decode("0.3.0.1.q"); err != nil || d != 49*time.Second || dest != "q" {
		t.Errorf("prefix Decode = %v %q %v", d, dest, err)
	}
	if _, _, err := p.Decode("0.4.0.1"); !errors.Is(err, ErrBadKey) {
		t.Errorf("digit 4 in radix 4 accepted: %v", err)
	}
}

func TestDiffFindsDrift(t *testing.T) {
	l := mustLadder(t, Ladder{Name: "d", Levels: 3, Radix: 2, QueueType: Classic})
	plan := l.Plan()
	s := plan.Snapshot()
	// A deleted binding, a queue with another TTL, a left-over rung, a
	// worker's destination binding (not drift), and another app's queue.
	s.Bindings = s.Bindings[1:]
	for i := range s.Queues {
		if s.Queues[i].Name == "d.rung.01" {
			s.Queues[i].Args = Args{"x-message-ttl": float64(999), "x-dead-letter-exchange": "d.rung.01.expired"}
		}
	}
	s.Queues = append(s.Queues, Queue{Name: "d.rung.07", Durable: true}, Queue{Name: "work"}, Queue{Name: "other"})
	s.Bindings = append(s.Bindings, Binding{Source: "d.deliver", Destination: "work", DestinationType: ToQueue, RoutingKey: "*.*.*.work"})
	drift := Diff(plan, s)
	var got []string
	for _, d := range drift {
		got = append(got, d.String())
	}
	want := []string{
		"missing binding " + plan.Bindings[0].ID(),
		"different queue d.rung.01: argument x-message-ttl is 999, plan has 2000",
		"extra queue d.rung.07",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("drift:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDiffTreatsExplicitClassicAsClassic(t *testing.T) {
	if d := ArgsDiff(Args{"a": int64(1)}, Args{"a": float64(1), "x-queue-type": "classic"}); len(d) != 0 {
		t.Fatalf("ArgsDiff = %v", d)
	}
}

// A rung whose TTL was changed by hand is drift of a ladder that is still
// found, not a reason to lose the ladder.
func TestDiscoverSurvivesOneEditedRung(t *testing.T) {
	for _, layout := range []string{"prefix", "suffix"} {
		l := mustLadder(t, Ladder{Name: "jobs", Layout: layout, Levels: 6, Radix: 2})
		s := l.Plan().Snapshot()
		for i, q := range s.Queues {
			if ttl, ok := q.TTL(); ok && ttl == 4*time.Second {
				args := Args{}
				for k, v := range q.Args {
					args[k] = v
				}
				args["x-message-ttl"] = int64(4500)
				s.Queues[i].Args = args
			}
		}
		found := Discover(s)
		if len(found) != 1 || found[0].Ladder.Unit != time.Second || found[0].Ladder.Levels != 6 {
			t.Fatalf("%s: found %+v", layout, found)
		}
		if len(found[0].Drift) != 1 || !strings.Contains(found[0].Drift[0].String(), "x-message-ttl is 4500, plan has 4000") {
			t.Fatalf("%s: drift %v", layout, found[0].Drift)
		}
	}
}

// A layout name rungs does not know is an error wherever a routing
// decision is made, never a silent prefix ladder.
func TestUnknownLayoutIsAnError(t *testing.T) {
	l := Ladder{Name: "jobs", Layout: "bogus", Unit: time.Second, Levels: 4, Radix: 2}
	if _, err := l.Normalize(); !errors.Is(err, ErrInvalidLadder) {
		t.Errorf("Normalize: %v", err)
	}
	if _, err := l.Trace(5*time.Second, ""); !errors.Is(err, ErrInvalidLadder) || !strings.Contains(err.Error(), `unknown layout "bogus"`) {
		t.Errorf("Trace: %v", err)
	}
	if _, err := l.Key(time.Second, ""); !errors.Is(err, ErrInvalidLadder) {
		t.Errorf("Key: %v", err)
	}
	if _, err := l.Entry(time.Second); !errors.Is(err, ErrInvalidLadder) {
		t.Errorf("Entry: %v", err)
	}
	if _, _, err := l.Decode("0.1.0.1"); !errors.Is(err, ErrInvalidLadder) {
		t.Errorf("Decode: %v", err)
	}
	if p := l.Plan(); len(p.Queues)+len(p.Exchanges)+len(p.Bindings) != 0 || len(l.Rungs()) != 0 {
		t.Errorf("an unknown layout planned %d queues", len(p.Queues))
	}
	// The empty name is the default, as Normalize reads it.
	if _, err := (Ladder{Name: "jobs", Unit: time.Second, Levels: 4, Radix: 2}).Trace(5*time.Second, ""); err != nil {
		t.Errorf("empty layout: %v", err)
	}
}
