package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// statusBridge is a bridge with an intake backlog, its due queue and no
// parked queue found.
func statusBridge() topology.Bridge {
	return topology.Bridge{
		Exchange: "orders.delayed",
		Intake:   topology.Queue{Name: "orders.delayed.bridge.intake", Stats: topology.QueueStats{Ready: 3, Consumers: 1}},
		Due:      topology.Queue{Name: "orders.delayed.bridge.due", Stats: topology.QueueStats{Ready: 2}},
		HasDue:   true,
	}
}

func statusReport(t *testing.T, snap topology.Snapshot, names ...string) health.Report {
	t.Helper()
	var found []topology.Found
	for _, n := range names {
		f, ok := fixture.Found(snap, n)
		if !ok {
			t.Fatalf("no ladder %s in the fixture", n)
		}
		found = append(found, f)
	}
	return health.NewReport(found, snap, health.Watch{})
}

func TestStatusText(t *testing.T) {
	busy := fixture.Busy()
	one := statusReport(t, busy, "orders")
	two := statusReport(t, busy, "orders", "billing")
	ladder := func(lr health.LadderReport) string { return statusLadderText(lr, false, 80) }
	bridge := "\n" + statusBridge().Describe() + "\n"
	for _, tc := range []struct {
		name    string
		rep     health.Report
		bridges []topology.Bridge
		want    string
	}{
		{"no ladders", health.Report{}, nil, "no ladders in vhost shop\n"},
		{"no ladders, a bridge", health.Report{}, []topology.Bridge{statusBridge()}, "no ladders in vhost shop\n" + bridge},
		{"one ladder", one, nil, ladder(one.Ladders[0])},
		{"two ladders, a blank line between", two, nil, ladder(two.Ladders[0]) + "\n" + ladder(two.Ladders[1])},
		{"a ladder and a bridge", one, []topology.Bridge{statusBridge()}, ladder(one.Ladders[0]) + bridge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StatusText(tc.rep, tc.bridges, "shop", false, 80); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestStatusTextRetry(t *testing.T) {
	rep := health.Report{Retry: retryHold()}
	want := "no ladders in vhost shop\n\n" + RetryText(rep.Retry, 80) + RetryScopeText(rep.Retry, 80)
	if got := StatusText(rep, nil, "shop", false, 80); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestStatusLadderText(t *testing.T) {
	busy := fixture.Busy()
	lr := statusReport(t, busy, "orders").Ladders[0]
	rows, folded := health.StatusRows(lr, true)
	out := statusLadderText(lr, true, 80)
	if !strings.HasPrefix(out, LadderText(lr, rows, folded, 80)) {
		t.Errorf("does not open with the ladder's table:\n%s", out)
	}
	if lr.Forecast.Messages > 0 && !strings.Contains(out, ForecastText(lr.Forecast, 80)) {
		t.Errorf("a busy ladder's forecast is missing:\n%s", out)
	}
	// A forecast covering no message is not shown.
	quiet := lr
	quiet.Forecast.Messages = 0
	if strings.Contains(statusLadderText(quiet, true, 80), ForecastText(lr.Forecast, 80)) {
		t.Errorf("a forecast of no message is shown:\n%s", statusLadderText(quiet, true, 80))
	}
}

func TestBridgeLinesText(t *testing.T) {
	b := statusBridge()
	for _, tc := range []struct {
		name string
		bs   []topology.Bridge
		want string
	}{
		{"none", nil, ""},
		{"one", []topology.Bridge{b}, "\nbridge orders.delayed: intake 3 messages, 1 bridge consuming; 2 due not yet out\n"},
		{"two", []topology.Bridge{b, b}, "\n" + b.Describe() + "\n" + b.Describe() + "\n"},
	} {
		if got := BridgeLinesText(tc.bs); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestDelaysText(t *testing.T) {
	group := topology.DelayGroup{App: "masstransit", Name: "orders", Messages: 1200, Oldest: 90*time.Second + 300*time.Millisecond,
		DeadLetterTo: []string{"orders", "orders.error"},
		Queues: []topology.DelayQueue{
			{Name: "orders.delay.1s", TTL: time.Second},
			{Name: "orders.delay.5s", TTL: 5 * time.Second, Consumers: 1},
		}}
	many := topology.DelayGroup{App: "nservicebus", Name: "billing", Queues: []topology.DelayQueue{
		{Name: "a", TTL: time.Second}, {Name: "b", TTL: 2 * time.Second}, {Name: "c", TTL: 3 * time.Second},
		{Name: "d", TTL: 4 * time.Second}, {Name: "e", PerMessage: true},
	}}
	for _, tc := range []struct {
		name string
		invs []topology.Inventory
		want string
	}{
		{"nothing", []topology.Inventory{{Vhost: "shop"}}, "\nno delays outside ladders in vhost shop\n"},
		{"a group, a consumer on a delay queue", []topology.Inventory{{Vhost: "shop", Groups: []topology.DelayGroup{group}}},
			"\ndelays outside ladders in vhost shop: 2 queues\n" +
				"  group               queues  delays  waiting  oldest  dead-letter to\n" +
				"  masstransit/orders  2       1s 5s   1200     1m30s   orders; orders.error\n" +
				"  warning: orders.delay.5s has 1 consumer: they take its messages before their delay (or left less than a statistics interval ago)\n"},
		{"more than four delays are three and a count", []topology.Inventory{{Vhost: "shop", Groups: []topology.DelayGroup{many}}},
			"\ndelays outside ladders in vhost shop: 5 queues\n" +
				"  group                queues  delays       waiting  oldest  dead-letter to\n" +
				"  nservicebus/billing  5       1s 2s 3s +2  0        -\n"},
		{"plugin exchanges, reported or not", []topology.Inventory{{Vhost: "shop", Plugins: []topology.PluginExchange{
			{Name: "orders.plugin", DelayedType: "direct", Delayed: 7, Reported: true}, {Name: "old.plugin"}}}},
			"\ndelays outside ladders in vhost shop: 0 queues\n" +
				"  group  queues  delays  waiting  oldest  dead-letter to\n" +
				"  plugin exchange orders.plugin (x-delayed-message, routes as direct): 7 delayed\n" +
				"  plugin exchange old.plugin (x-delayed-message, routes as -): messages_delayed not reported\n"},
		{"delayed retry after every vhost", []topology.Inventory{{Vhost: "a"}, {Vhost: "b", Retry: retryHold().Queues, RetryRead: true}},
			"\nno delays outside ladders in vhost a\n\nno delays outside ladders in vhost b\n\nin vhost b:\n" + RetryText(health.NewRetryHold(retryHold().Queues, true), 80)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DelaysText(tc.invs, 80); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestChecksText(t *testing.T) {
	for _, tc := range []struct {
		name     string
		checks   []ops.Finding
		problems int
		want     string
	}{
		{"none", nil, 0, "no problems found\n"},
		{"areas in the order they first came up", []ops.Finding{
			{Area: "broker", Status: ops.FindingOK, Text: "management API answers"},
			{Area: "ladder jobs", Status: ops.FindingWarn, Text: "a consumer on a rung"},
			{Area: "broker", Status: ops.FindingInfo, Text: "RabbitMQ 4.3.0"},
			{Area: "ladder jobs", Status: ops.FindingProblem, Text: "drift"},
		}, 1, "broker\n  ✓ management API answers\n  · RabbitMQ 4.3.0\nladder jobs\n  ! a consumer on a rung\n  ✗ drift\n1 problem found\n"},
		{"problems counted", []ops.Finding{{Area: "plugins", Status: ops.FindingProblem, Text: "x"}, {Area: "plugins", Status: ops.FindingProblem, Text: "y"}}, 2,
			"plugins\n  ✗ x\n  ✗ y\n2 problems found\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ChecksText(tc.checks, tc.problems); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// jsonText is v as --json writes it, compact.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestForecastJSON(t *testing.T) {
	rung := topology.Rung{Queue: "jobs.rung.01.1"}
	for _, tc := range []struct {
		name string
		fc   topology.Forecast
		want string
	}{
		{"empty: later only, latest known", topology.Forecast{},
			`{"due":[{"within":"later","within_ms":null,"min":0,"max":0,"estimate":0}],"earliest_ms":0,"held":0,"latest_ms":0,"messages":0,"rungs":[],"unknown":0}`},
		{"an unknown rung: latest null, an idle rung left out, a destination", topology.Forecast{Messages: 4, Unknown: 4, Dest: "jobs.work",
			Rungs: []topology.RungForecast{{Rung: rung, Messages: 4, Earliest: time.Second, Unknown: true}, {Rung: topology.Rung{Queue: "idle"}}}},
			`{"destination":"jobs.work","due":[{"within":"later","within_ms":null,"min":0,"max":0,"estimate":0}],"earliest_ms":0,"held":0,"latest_ms":null,"messages":4,"rungs":[{"queue":"jobs.rung.01.1","messages":4,"held":0,"earliest_ms":1000,"latest_ms":null,"unknown":true}],"unknown":4}`},
		{"a known rung and a horizon", topology.Forecast{Messages: 2, Latest: 3 * time.Second,
			Due:   []topology.DueBy{{By: time.Minute, Min: 1, Max: 2, Estimate: 2}},
			Rungs: []topology.RungForecast{{Rung: rung, Held: 2, Latest: 3 * time.Second}}},
			`{"due":[{"within":"1m","within_ms":60000,"min":1,"max":2,"estimate":2},{"within":"later","within_ms":null,"min":0,"max":0,"estimate":0}],"earliest_ms":0,"held":0,"latest_ms":3000,"messages":2,"rungs":[{"queue":"jobs.rung.01.1","messages":0,"held":2,"earliest_ms":0,"latest_ms":3000,"unknown":false}],"unknown":0}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := jsonText(t, ForecastJSON(tc.fc)); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestRetryScopeJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    health.RetryHold
		want string
	}{
		{"not read", health.RetryHold{}, `null`},
		{"the vhost, policies unread", health.RetryHold{Read: true, Scope: health.RetryScope{PoliciesUnread: true}},
			`{"ladder_queues":0,"policies_read":false,"policy_named":[],"reach":"vhost","whole_vhost":"rungs discover --delays"}`},
		{"the ladders and a policy's queue", health.RetryHold{Read: true, Scope: health.RetryScope{Ladders: true, Queues: 12, Named: []string{"orders"}}},
			`{"ladder_queues":12,"policies_read":true,"policy_named":["orders"],"reach":"ladders","whole_vhost":"rungs discover --delays"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := jsonText(t, RetryScopeJSON(tc.h)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestBridgesJSON(t *testing.T) {
	parked := statusBridge()
	parked.HasDue, parked.HasParked = false, true
	parked.Parked = topology.Queue{Name: "orders.delayed.bridge.parked", Stats: topology.QueueStats{Ready: 1, Unacked: 1}}
	for _, tc := range []struct {
		name string
		bs   []topology.Bridge
		want string
	}{
		{"none", nil, `[]`},
		{"due", []topology.Bridge{statusBridge()},
			`[{"exchange":"orders.delayed","intake_queue":"orders.delayed.bridge.intake","intake_messages":3,"intake_consumers":1,"lag_ms":0,"due_queue":"orders.delayed.bridge.due","due_messages":2}]`},
		{"parked", []topology.Bridge{parked},
			`[{"exchange":"orders.delayed","intake_queue":"orders.delayed.bridge.intake","intake_messages":3,"intake_consumers":1,"lag_ms":0,"parked_queue":"orders.delayed.bridge.parked","parked_messages":2}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := jsonText(t, BridgesJSON(tc.bs)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRetryJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		qs   []topology.RetryQueue
		want string
	}{
		{"none", nil, `[]`},
		{"unreported, limit unknown", []topology.RetryQueue{{Name: "q", Type: "all", Min: time.Second, Source: "policy", Policy: "p", Ignored: true}},
			`[{"name":"q","type":"all","min_ms":1000,"source":"policy","policy":"p","ignored":true,"messages_delayed":null,"ready":0,"unacked":0,"delivery_limit":null,"consumers":0}]`},
		{"reported, limit known", []topology.RetryQueue{{Name: "q", Type: "failed", Min: time.Second, Max: 2 * time.Second, Source: "argument", Delayed: 5, Reported: true, LimitKnown: true, DeliveryLimit: 20}},
			`[{"name":"q","type":"failed","min_ms":1000,"max_ms":2000,"source":"argument","messages_delayed":5,"ready":0,"unacked":0,"delivery_limit":20,"consumers":0}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := jsonText(t, RetryJSON(tc.qs)); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDelaysJSON(t *testing.T) {
	inv := topology.Inventory{Vhost: "shop",
		Groups: []topology.DelayGroup{{App: "a", Name: "g", Queues: []topology.DelayQueue{
			{Name: "kept", TTL: time.Second, KeepsKey: true, Type: "classic"},
			{Name: "keyed", TTL: time.Second, DeadLetterKey: "k", Type: "quorum", Destinations: []string{"work"}},
		}}},
		Plugins: []topology.PluginExchange{{Name: "p", DelayedType: "direct"}, {Name: "r", Reported: true, Delayed: 3}},
	}
	want := `[{"delayed_retry":[],"delayed_retry_read":false,"groups":[{"app":"a","dead_letter_to":null,"id":"a/g","messages":0,"name":"g","oldest_ms":0,"queues":[` +
		`{"name":"kept","ttl_ms":1000,"per_message_ttl":false,"dead_letter_exchange":"","dead_letter_routing_key":null,"type":"classic","durable":false,"messages":0,"oldest_ms":0,"destinations":[],"consumers":0},` +
		`{"name":"keyed","ttl_ms":1000,"per_message_ttl":false,"dead_letter_exchange":"","dead_letter_routing_key":"k","type":"quorum","durable":false,"messages":0,"oldest_ms":0,"destinations":["work"],"consumers":0}]}],` +
		`"plugin_exchanges":[{"delayed_type":"direct","durable":false,"messages_delayed":null,"name":"p"},{"delayed_type":"","durable":false,"messages_delayed":3,"name":"r"}],"vhost":"shop"}]`
	if got := jsonText(t, DelaysJSON([]topology.Inventory{inv})); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := jsonText(t, DelaysJSON(nil)); got != `[]` {
		t.Errorf("no inventory: %s", got)
	}
}

func TestStatusJSON(t *testing.T) {
	rep := statusReport(t, fixture.Busy(), "orders")
	ls := StatusJSON(rep.Ladders, func(l topology.Ladder) any { return l.Name }, func(ds []topology.Drift) any { return len(ds) })
	if len(ls) != 1 || ls[0]["ladder"] != "orders" || ls[0]["drift"] != len(rep.Ladders[0].Found.Drift) {
		t.Fatalf("the caller's ladder and drift are not used: %v", ls)
	}
	rungs := ls[0]["rungs"].([]JSONQueue)
	if len(rungs) == 0 || rungs[0].Role != "rung" || rungs[0].Level == nil || rungs[0].TTLMS == nil {
		t.Errorf("rungs: %+v", rungs)
	}
	terms := ls[0]["terminals"].([]JSONQueue)
	var roles []string
	for _, q := range terms {
		roles = append(roles, q.Role)
	}
	if len(roles) == 0 || roles[len(roles)-1] != "target" || terms[len(terms)-1].Level != nil {
		t.Errorf("terminals end with the targets, without level: %v", roles)
	}
	if got := StatusJSON(nil, nil, nil); len(got) != 0 || jsonText(t, got) != `[]` {
		t.Errorf("no ladders: %s", jsonText(t, got))
	}
}

func TestDrainJSON(t *testing.T) {
	if _, ok := DrainJSON(health.Drain{})["destinations"]; ok {
		t.Error("a drain without moving destinations lists them")
	}
	d := DrainJSON(health.Drain{Dests: []health.DestFlow{{Queue: "work", In: 2, Taken: 1}}})
	ds, ok := d["destinations"].([]map[string]any)
	if !ok || len(ds) != 1 || ds[0]["queue"] != "work" || ds[0]["net_per_s"] != 1.0 {
		t.Errorf("destinations: %v", d["destinations"])
	}
}
