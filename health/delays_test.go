package health

import (
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/topology"
)

func v(s string) topology.Version {
	out, _ := topology.ParseVersion(s)
	return out
}

// delayVhost holds one delay queue of each risky kind, a plugin exchange
// and a quorum destination.
func delayVhost() topology.Snapshot {
	return topology.Snapshot{
		Vhost:     "/",
		Exchanges: []topology.Exchange{{Name: "work", Type: "fanout", Durable: true}, {Name: "slow", Type: topology.PluginExchangeType, Args: topology.Args{"x-delayed-type": "direct"}}},
		Queues: []topology.Queue{
			{Name: "jobs", Durable: true, Args: topology.Args{"x-queue-type": "quorum"}},
			{Name: "jobs-retry", Durable: false, Args: topology.Args{"x-message-ttl": int64(60000), "x-dead-letter-exchange": "jobs-retry-requeue"}},
			{Name: "default.delay.5000", Durable: true, Args: topology.Args{"x-queue-type": "quorum", "x-message-ttl": int64(5000), "x-expires": int64(10000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "default"}},
			{Name: "wait", Durable: true, Args: topology.Args{"x-message-ttl": int64(1000), "x-dead-letter-exchange": "work", "x-dead-letter-routing-key": ""}},
		},
		Bindings: []topology.Binding{{Source: "work", Destination: "jobs", DestinationType: topology.ToQueue}},
	}
}

func findings(running, target string) []DelayFinding {
	snap := delayVhost()
	inv := topology.TakeInventory(snap, nil)
	return DelayFindings(inv, snap, nil, v(running), v(target))
}

func has(fs []DelayFinding, object, risk string) (DelayFinding, bool) {
	for _, f := range fs {
		if strings.HasPrefix(f.Object, object) && strings.Contains(f.Risk, risk) {
			return f, true
		}
	}
	return DelayFinding{}, false
}

func TestDelayFindingsByRelease(t *testing.T) {
	cases := map[string]struct {
		running, target string
		object, risk    string
		want            bool
		today, onTarget bool
	}{
		"plugin on 3.10 alone":         {"3.10.8", "", "exchange slow", "Mnesia", false, false, false},
		"plugin on 3.10 to 4.3":        {"3.10.8", "4.3", "exchange slow", "Mnesia", true, false, true},
		"plugin to 4.0":                {"3.10.8", "4.0", "exchange slow", "Mnesia", false, false, false},
		"transient today":              {"3.10.8", "", "queue jobs-retry", "transient", true, true, false},
		"transient to 4.3":             {"4.0.5", "4.3.6", "queue jobs-retry", "deprecated", true, true, true},
		"quorum expires today":         {"3.10.8", "", "queue default.delay.5000", "x-expires", true, true, false},
		"delivery limit from 4.0":      {"4.0.5", "", "queue jobs", "delivery limit", true, true, false},
		"no delivery limit on 3.10":    {"3.10.8", "", "queue jobs", "delivery limit", false, false, false},
		"delivery limit on the way up": {"3.10.8", "4.3", "queue jobs", "delivery limit", true, false, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f, ok := has(findings(tc.running, tc.target), tc.object, tc.risk)
			if ok != tc.want {
				t.Fatalf("found %v, want %v: %+v", ok, tc.want, findings(tc.running, tc.target))
			}
			if ok && (f.Today != tc.today || f.OnTarget != tc.onTarget || f.Fix == "") {
				t.Fatalf("%+v: want today %v, on target %v, a fix", f, tc.today, tc.onTarget)
			}
		})
	}
}

func TestDelayFindingsCelery(t *testing.T) {
	l, err := topology.Ladder{Name: "celery", Layout: "celery", Targets: []string{"emails"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	snap := l.Plan().Snapshot()
	// The worker's exchange and queue: kombu declares them, not the plan.
	snap.Queues = append(snap.Queues, topology.Queue{Name: "emails", Durable: true})
	snap.Exchanges = append(snap.Exchanges, topology.Exchange{Name: "emails", Type: "topic", Durable: true})
	found := topology.Discover(snap)
	if fs := DelayFindings(topology.TakeInventory(snap, found), snap, found, v("4.3.6"), topology.Version{}); len(fs) != 0 {
		t.Fatalf("a whole Celery ladder has findings: %+v", fs)
	}
	// kombu #2252: the worker's queue bound without "#.".
	broken := snap
	broken.Bindings = nil
	for _, b := range snap.Bindings {
		if b.Source == "emails" && b.Destination == "emails" {
			b.RoutingKey = "emails"
		}
		broken.Bindings = append(broken.Bindings, b)
	}
	broken.Bindings = append(broken.Bindings, topology.Binding{Source: "celery_delayed_delivery", Destination: "emails", DestinationType: topology.ToExchange, RoutingKey: "#.*"})
	fs := DelayFindings(topology.Inventory{}, broken, topology.Discover(broken), v("4.3.6"), topology.Version{})
	if _, ok := has(fs, "exchange celery_delayed_delivery", "reaches no queue"); !ok {
		t.Errorf("missing #.emails binding not found: %+v", fs)
	}
	if _, ok := has(fs, "exchange celery_delayed_delivery", `"#.*"`); !ok {
		t.Errorf("over-broad binding not found: %+v", fs)
	}
}

func TestDelayFindingsNServiceBus(t *testing.T) {
	l, err := topology.Ladder{Layout: "nsb", Targets: []string{"sales"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	snap := l.Plan().Snapshot()
	found := topology.Discover(snap)
	if _, ok := has(DelayFindings(topology.Inventory{}, snap, found, v("3.13.7"), topology.Version{}), "ladder", "NServiceBus"); ok {
		t.Error("NServiceBus delivery limit on 3.13")
	}
	f, ok := has(DelayFindings(topology.Inventory{}, snap, found, v("3.13.7"), v("4.3")), "ladder", "NServiceBus")
	if !ok || f.Today || !f.OnTarget {
		t.Errorf("NServiceBus upgrading to 4.3: %+v %v", f, ok)
	}
}
