package topology

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// ttlQueue is a queue as the libraries declare theirs: ms is
// x-message-ttl (omitted when 0), extra more arguments.
func ttlQueue(name string, ms int64, dlx string, extra Args) Queue {
	a := Args{"x-dead-letter-exchange": dlx}
	if ms > 0 {
		a["x-message-ttl"] = ms
	}
	for k, v := range extra {
		a[k] = v
	}
	return Queue{Name: name, Durable: true, Args: a}
}

// libraryQueues are the delay queues of each library, named and argued as
// their source declares them (see the App constants).
func libraryQueues() map[string]Queue {
	return map[string]Queue{
		// Symfony: delay_%exchange_name%_%routing_key%_%delay% + _delay,
		// exchange "messages", no routing key.
		AppSymfony: ttlQueue("delay_messages__5000_delay", 5000, "messages", Args{"x-expires": int64(15000), "x-dead-letter-routing-key": ""}),
		AppLaravel: ttlQueue("default.delay.60000", 60000, "", Args{"x-expires": int64(120000), "x-dead-letter-routing-key": "default"}),
		AppEnqueue: ttlQueue("enqueue.orders.3000.delayed", 3000, "", Args{"x-dead-letter-routing-key": "orders"}),
		// machinery: delay.{ms}.{exchange}.{routing_key}, x-expires 2 ms.
		AppMachinery: ttlQueue("delay.2000.machinery_exchange.machinery_tasks", 2000, "machinery_exchange",
			Args{"x-expires": int64(4000), "x-dead-letter-routing-key": "machinery_tasks"}),
		// goqueue: no queue TTL, each retry carries an expiration.
		AppGoqueue:   ttlQueue("orders__retry.2", 0, "orders__retry_dlx", nil),
		AppSneakers:  ttlQueue("jobs-retry", 60000, "jobs-retry-requeue", nil),
		AppSpring:    ttlQueue("events.group1.dlq", 5000, "", Args{"x-dead-letter-routing-key": "events.group1"}),
		AppTTL:       ttlQueue("my.wait.30s", 30000, "work", nil),
		"not-delays": {Name: "plain", Durable: true},
	}
}

func TestInventoryRecognisesEachLibrary(t *testing.T) {
	for app, q := range libraryQueues() {
		t.Run(app, func(t *testing.T) {
			inv := TakeInventory(Snapshot{Vhost: "/", Queues: []Queue{q}}, nil)
			if app == "not-delays" {
				if !inv.Empty() {
					t.Fatalf("a queue without dead-lettering is in the inventory: %+v", inv)
				}
				return
			}
			if len(inv.Groups) != 1 || inv.Groups[0].App != app {
				t.Fatalf("%s: got %+v, want one %s group", q.Name, inv.Groups, app)
			}
		})
	}
}

func TestInventoryNeedsTheLibrarysArguments(t *testing.T) {
	// Named like Symfony's but without its x-expires; named like
	// machinery's with another TTL than its name: plain TTL queues.
	cases := map[string]Queue{
		"symfony without x-expires": ttlQueue("delay_messages__5000_delay", 5000, "messages", nil),
		"machinery name, other ttl": ttlQueue("delay.2000.x.y", 3000, "x", Args{"x-expires": int64(6000)}),
		"laravel name, other ttl":   ttlQueue("default.delay.60000", 1000, "", nil),
	}
	for name, q := range cases {
		t.Run(name, func(t *testing.T) {
			inv := TakeInventory(Snapshot{Queues: []Queue{q}}, nil)
			if len(inv.Groups) != 1 || inv.Groups[0].App != AppTTL {
				t.Fatalf("got %+v, want a ttl-queues group", inv.Groups)
			}
		})
	}
	// A TTL queue with consumers is a work queue, not a delay.
	q := ttlQueue("w", 1000, "x", nil)
	q.Stats.Consumers = 1
	if inv := TakeInventory(Snapshot{Queues: []Queue{q}}, nil); !inv.Empty() {
		t.Fatalf("a consumed queue is in the inventory: %+v", inv)
	}
	// A library's own delay queue stays in its group with a consumer
	// counted: the management API counts one that left for a while.
	for name, lq := range libraryQueues() {
		lq.Stats.Consumers = 1
		inv := TakeInventory(Snapshot{Queues: []Queue{lq}}, nil)
		if name == AppTTL || name == "not-delays" {
			continue
		}
		if len(inv.Groups) != 1 || len(inv.Groups[0].Queues) != 1 || inv.Groups[0].Queues[0].Consumers != 1 {
			t.Errorf("%s's delay queue with a consumer: %+v", name, inv.Groups)
		}
	}
	// No TTL and no library that sets one per message: not a delay.
	if inv := TakeInventory(Snapshot{Queues: []Queue{ttlQueue("x", 0, "dlx", nil)}}, nil); !inv.Empty() {
		t.Fatalf("a queue without TTL is in the inventory: %+v", inv)
	}
}

func TestInventoryLeavesLaddersOut(t *testing.T) {
	for _, layout := range LayoutNames() {
		l := Ladder{Name: "jobs", Layout: layout, Unit: time.Second, Levels: 3, Radix: 2}
		switch layout {
		case "celery":
			l = Ladder{Name: "celery", Layout: layout, Targets: []string{"celery"}}
		case "nsb", "nsb1":
			l = Ladder{Layout: layout, Targets: []string{"sales"}}
		}
		n, err := l.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		snap := n.Plan().Snapshot()
		inv := TakeInventory(snap, Discover(snap))
		if !inv.Empty() {
			t.Errorf("%s: a ladder's rungs are in the inventory: %+v", layout, inv.Groups)
		}
	}
}

func TestInventoryGroupsAndDestinations(t *testing.T) {
	snap := Snapshot{
		Vhost:     "/",
		Exchanges: []Exchange{{Name: "messages", Type: "fanout"}, {Name: "delays", Type: "direct"}, {Name: "slow", Type: PluginExchangeType, Args: Args{"x-delayed-type": "direct"}}},
		Queues: []Queue{
			{Name: "messages", Durable: true},
			ttlQueue("delay_messages__1000_delay", 1000, "messages", Args{"x-expires": int64(11000), "x-dead-letter-routing-key": ""}),
			ttlQueue("delay_messages__5000_delay", 5000, "messages", Args{"x-expires": int64(15000), "x-dead-letter-routing-key": ""}),
		},
		Bindings: []Binding{{Source: "messages", Destination: "messages", DestinationType: ToQueue}},
	}
	snap.Queues[1].Stats.Ready, snap.Queues[2].Stats.Ready = 3, 4
	snap.Queues[2].Stats.HeadAge = 2 * time.Second
	inv := TakeInventory(snap, nil)
	if len(inv.Groups) != 1 {
		t.Fatalf("groups: %+v", inv.Groups)
	}
	g := inv.Groups[0]
	if g.ID() != "symfony-messenger/messages" || g.Messages != 7 || g.Oldest != 2*time.Second || len(g.Queues) != 2 {
		t.Fatalf("group: %+v", g)
	}
	if !slices.Equal(g.DeadLetterTo, []string{"messages key "}) && !slices.Equal(g.DeadLetterTo, []string{"messages"}) {
		t.Fatalf("dead-letter to: %q", g.DeadLetterTo)
	}
	if !slices.Equal(g.Queues[0].Destinations, []string{"messages"}) {
		t.Fatalf("destinations: %q", g.Queues[0].Destinations)
	}
	if len(inv.Plugins) != 1 || inv.Plugins[0].Name != "slow" || inv.Plugins[0].DelayedType != "direct" {
		t.Fatalf("plugins: %+v", inv.Plugins)
	}
	if got := inv.WithDelayed(map[string]int64{"slow": 9}).Plugins[0]; !got.Reported || got.Delayed != 9 {
		t.Fatalf("delayed count: %+v", got)
	}
	if _, ok := inv.Group("messages"); !ok {
		t.Fatal("a group is found by its name alone when that is unambiguous")
	}
}

// TestInventoryProperties: every queue is listed at most once, only queues
// of the snapshot that dead-letter (and have no consumers, unless a
// library names them as its delay queues) are, none a
// ladder owns, each group's figures are its queues' sums, and the result
// does not depend on the snapshot's order.
func TestInventoryProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lib := libraryQueues()
		var names []string
		for k := range lib {
			names = append(names, k)
		}
		slices.Sort(names)
		var snap Snapshot
		n := rapid.IntRange(0, 12).Draw(t, "n")
		for i := 0; i < n; i++ {
			q := lib[rapid.SampledFrom(names).Draw(t, "app")]
			q.Name += rapid.SampledFrom([]string{"", "x", ".2"}).Draw(t, "suffix")
			if _, dup := snap.Queue(q.Name); dup {
				continue
			}
			q.Stats.Ready = rapid.Int64Range(0, 1000).Draw(t, "ready")
			q.Stats.Consumers = rapid.Int64Range(0, 1).Draw(t, "consumers")
			snap.Queues = append(snap.Queues, q)
		}
		var found []Found
		if rapid.Bool().Draw(t, "ladder") {
			l := drawLadder(t)
			p := l.Plan().Snapshot()
			snap = snap.Merge(p)
			found = Discover(p)
		}
		inv := TakeInventory(snap, found)
		seen := map[string]bool{}
		for _, g := range inv.Groups {
			var sum int64
			for _, d := range g.Queues {
				if seen[d.Name] {
					t.Fatalf("%s listed twice", d.Name)
				}
				seen[d.Name] = true
				q, ok := snap.Queue(d.Name)
				if !ok || q.Stats.Consumers > 0 && g.App == AppTTL || d.Consumers != q.Stats.Consumers {
					t.Fatalf("%s (%s): not a queue of the snapshot, or a consumed TTL queue, or its consumers miscounted", d.Name, g.App)
				}
				if _, ok := q.DeadLetterExchange(); !ok {
					t.Fatalf("%s does not dead-letter", d.Name)
				}
				for _, f := range found {
					if _, _, ok := f.Ladder.QueueRole(d.Name); ok {
						t.Fatalf("%s belongs to ladder %s", d.Name, f.Ladder)
					}
				}
				sum += d.Messages
			}
			if sum != g.Messages {
				t.Fatalf("group %s: %d messages, its queues %d", g.ID(), g.Messages, sum)
			}
		}
		rev := snap
		rev.Queues = slices.Clone(snap.Queues)
		slices.Reverse(rev.Queues)
		if again := TakeInventory(rev, found); !sameInventory(inv, again) {
			t.Fatalf("order-dependent:\n%+v\n%+v", inv, again)
		}
	})
}

func sameInventory(a, b Inventory) bool {
	if len(a.Groups) != len(b.Groups) {
		return false
	}
	for i := range a.Groups {
		x, y := a.Groups[i], b.Groups[i]
		if x.ID() != y.ID() || x.Messages != y.Messages || len(x.Queues) != len(y.Queues) {
			return false
		}
		for j := range x.Queues {
			if x.Queues[j].Name != y.Queues[j].Name {
				return false
			}
		}
	}
	return true
}

// FuzzInventory: any queue name and arguments read without a panic, and a
// queue the inventory lists dead-letters.
func FuzzInventory(f *testing.F) {
	for _, q := range libraryQueues() {
		ttl, _ := q.TTL()
		x, _ := q.Args["x-expires"].(int64)
		f.Add(q.Name, ttl.Milliseconds(), x, true)
	}
	f.Fuzz(func(t *testing.T, name string, ttl, expires int64, dlx bool) {
		a := Args{"x-message-ttl": ttl, "x-expires": expires}
		if dlx {
			a["x-dead-letter-exchange"] = name
		}
		inv := TakeInventory(Snapshot{Queues: []Queue{{Name: name, Args: a}}}, nil)
		if !dlx && !inv.Empty() {
			t.Fatalf("%q without a dead-letter exchange listed", name)
		}
		for _, g := range inv.Groups {
			_ = g.Describe()
		}
	})
}
