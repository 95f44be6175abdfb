package topology

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// kombu's calculate_routing_key(10, "celery"): 28 binary digits of the
// countdown in seconds, then the task's routing key; Celery publishes it to
// celery_delayed_27 whatever the delay.
func TestCeleryKeyMatchesKombu(t *testing.T) {
	l := mustLadder(t, Ladder{Layout: "celery"})
	if l.Name != "celery" || l.QueueType != DefaultQueueType || l.MaxDelay() != 268435455*time.Second {
		t.Fatalf("celery ladder = %+v", l)
	}
	tr, err := l.Trace(10*time.Second, "celery")
	if err != nil {
		t.Fatal(err)
	}
	if want := "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.1.0.celery"; tr.Key != want {
		t.Fatalf("key = %s\nwant  %s", tr.Key, want)
	}
	if tr.Exchange != "celery_delayed_27" || tr.String() != "10s via "+tr.Key+": celery_delayed_3(8s) → celery_delayed_1(2s) → celery" {
		t.Fatalf("trace = %s (publish to %s)", tr, tr.Exchange)
	}
	if _, err := l.Key(time.Second, ""); !errors.Is(err, ErrBadDest) {
		t.Fatalf("celery key without routing key: %v", err)
	}
}

// Names, arguments and binding keys as kombu's
// declare_native_delayed_delivery_exchanges_and_queues declares them.
func TestCeleryPlanMatchesKombu(t *testing.T) {
	l := mustLadder(t, Ladder{Layout: "celery", Name: "billing_celery", QueueType: Quorum, Targets: []string{"invoices"}})
	plan := l.Plan()
	if len(plan.Exchanges) != 29 || len(plan.Queues) != 28 {
		t.Fatalf("%d exchanges, %d queues", len(plan.Exchanges), len(plan.Queues))
	}
	snap := plan.Snapshot()
	q, ok := snap.Queue("billing_celery_delayed_5")
	want := Args{"x-queue-type": "quorum", "x-overflow": "reject-publish", "x-message-ttl": int64(32000),
		"x-dead-letter-exchange": "billing_celery_delayed_4", "x-dead-letter-strategy": "at-least-once"}
	if !ok || len(ArgsDiff(want, q.Args)) != 0 {
		t.Fatalf("billing_celery_delayed_5 = %v, want %v", q.Args, want)
	}
	q, _ = snap.Queue("billing_celery_delayed_0")
	if q.Args["x-dead-letter-exchange"] != "billing_celery_delayed_delivery" {
		t.Fatalf("level 0 dead-letters to %v", q.Args["x-dead-letter-exchange"])
	}
	ids := map[string]bool{}
	for _, b := range plan.Bindings {
		ids[b.ID()] = true
	}
	stars := func(n int) string { return strings.Repeat("*.", n) }
	for _, id := range []string{
		"billing_celery_delayed_27 -> queue:billing_celery_delayed_27 [1.#]",
		"billing_celery_delayed_27 -> exchange:billing_celery_delayed_26 [0.#]",
		"billing_celery_delayed_5 -> queue:billing_celery_delayed_5 [" + stars(22) + "1.#]",
		"billing_celery_delayed_1 -> exchange:billing_celery_delayed_0 [" + stars(26) + "0.#]",
		"billing_celery_delayed_0 -> exchange:billing_celery_delayed_delivery [" + stars(27) + "0.#]",
		"billing_celery_delayed_delivery -> exchange:invoices [#.invoices]",
		"invoices -> queue:invoices [#.invoices]",
	} {
		if !ids[id] {
			t.Errorf("missing binding %s", id)
		}
	}
	classic := mustLadder(t, Ladder{Layout: "celery", QueueType: Classic})
	q, _ = classic.Plan().Snapshot().Queue("celery_delayed_27")
	if q.Args["x-queue-type"] != "classic" || q.Args["x-overflow"] != "reject-publish" || q.Args["x-dead-letter-strategy"] != nil {
		t.Fatalf("classic celery queue args %v", q.Args)
	}
}

// Celery binds each worker queue with "#.<routing key>". Two routing keys
// where one is a dotted suffix of the other both match a delayed message
// for the longer one: RabbitMQ delivers it twice, and rungs says so rather
// than hiding it. This is why the property test draws routing keys that are
// not suffixes of each other: the "exactly one route" property holds for
// Celery only under that condition, a limit of Celery's wiring, not of the
// model.
func TestCeleryOverlappingKeysAreAmbiguous(t *testing.T) {
	l := mustLadder(t, Ladder{Layout: "celery", Targets: []string{"retry", "orders.retry"}})
	tr, err := l.Trace(3*time.Second, "orders.retry")
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewGraph(withWorkers(l, "")).Walk(tr.Exchange, tr.Key)
	if !errors.Is(err, ErrAmbiguousRoute) || !strings.Contains(err.Error(), "orders.retry, retry") {
		t.Fatalf("Walk = %v; want both queues, ambiguous", err)
	}
}

func TestCeleryNames(t *testing.T) {
	for name, ok := range map[string]bool{"celery": true, "rungs": true, "app_celery": true, "a.b_celery": true, "_celery": false, "celerY": false, "mycelery": false, "celery_x": false} {
		_, err := Ladder{Layout: "celery", Name: name}.Normalize()
		if (err == nil) != ok {
			t.Errorf("name %q: %v", name, err)
		}
	}
	if _, err := (Ladder{Layout: "celery", Unit: time.Millisecond}).Normalize(); err == nil {
		t.Error("celery with a 1ms unit accepted")
	}
}

// NServiceBus v1: the same ladder as v2 under other names, with classic
// lazy queues; the two live side by side and are told apart.
func TestNSB1IsClassicAndLazy(t *testing.T) {
	l := mustLadder(t, Ladder{Layout: "nsb1", Targets: []string{"Sales"}})
	if l.Name != "nsb" || l.QueueType != Classic {
		t.Fatalf("nsb1 ladder = %+v", l)
	}
	q, _ := l.Plan().Snapshot().Queue("nsb.delay-level-03")
	want := Args{"x-queue-mode": "lazy", "x-message-ttl": int64(8000), "x-dead-letter-exchange": "nsb.delay-level-02"}
	if len(ArgsDiff(want, q.Args)) != 0 {
		t.Fatalf("nsb.delay-level-03 args %v, want %v", q.Args, want)
	}
	tr, err := l.Trace(10*time.Second, "Sales")
	if err != nil || tr.Exchange != "nsb.delay-level-03" || tr.Key != "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.1.0.Sales" {
		t.Fatalf("trace %v, %v", tr, err)
	}
	if _, err := (Ladder{Layout: "nsb1", QueueType: Quorum}).Normalize(); err == nil {
		t.Error("a quorum nsb1 ladder accepted")
	}
	v2 := mustLadder(t, Ladder{Layout: "nsb", Targets: []string{"Sales"}})
	found := Discover(l.Plan().Snapshot().Merge(v2.Plan().Snapshot()))
	if len(found) != 2 || found[0].Ladder.Layout != "nsb1" || found[1].Ladder.Layout != "nsb" || len(found[0].Drift)+len(found[1].Drift) != 0 {
		t.Fatalf("side by side: %+v", found)
	}
}

// NServiceBus' default (conventional) routing topology attaches an endpoint
// through its exchange, not its queue: that is a destination, not drift.
func TestNSBConventionalEndpointIsATarget(t *testing.T) {
	for _, layout := range []string{"nsb", "nsb1"} {
		l := mustLadder(t, Ladder{Layout: layout})
		s := l.Plan().Snapshot()
		delivery := l.Name + ".delay-delivery"
		s.Exchanges = append(s.Exchanges, Exchange{Name: "Sales", Type: "fanout", Durable: true})
		s.Queues = append(s.Queues, Queue{Name: "Sales", Durable: true})
		s.Bindings = append(s.Bindings,
			Binding{Source: "Sales", Destination: "Sales", DestinationType: ToQueue},
			Binding{Source: delivery, Destination: "Sales", DestinationType: ToExchange, RoutingKey: "#.Sales"})
		found := Discover(s)
		if len(found) != 1 || strings.Join(found[0].Ladder.Targets, ",") != "Sales" || len(found[0].Drift) != 0 {
			t.Fatalf("%s: %+v", layout, found)
		}
		tr, _ := found[0].Ladder.Trace(5*time.Second, "Sales")
		steps, err := NewGraph(s).Walk(tr.Exchange, tr.Key)
		if err != nil || steps[len(steps)-1].Queue != "Sales" || len(steps) != len(tr.Hops)+1 {
			t.Fatalf("%s: walk %v, %v", layout, steps, err)
		}
	}
}

// A ladder that names no queue type gets quorum, except where the layout
// fixes its own (nsb1 is classic by definition); a type given is kept.
func TestDefaultQueueTypeIsQuorum(t *testing.T) {
	cases := []struct {
		in   Ladder
		want QueueType
	}{
		{Ladder{}, Quorum},
		{Ladder{Layout: "suffix", Levels: 4}, Quorum},
		{Ladder{Layout: "nsb1"}, Classic},
		{Ladder{Layout: "nsb"}, Quorum},
		{Ladder{QueueType: Classic}, Classic},
		{Ladder{Layout: "celery", QueueType: Classic}, Classic},
	}
	for _, c := range cases {
		l := mustLadder(t, c.in)
		if l.QueueType != c.want {
			t.Errorf("%s ladder queue type %s, want %s", l.Layout, l.QueueType, c.want)
		}
	}
}
