package broker

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/topology"
)

func TestAssessPeek(t *testing.T) {
	classic, _ := topology.Ladder{Name: "c", Levels: 3, Radix: 2, Targets: []string{"work"}}.Normalize()
	quorum, _ := topology.Ladder{Name: "q", Levels: 3, Radix: 2, QueueType: topology.Quorum}.Normalize()
	ladders := []topology.Ladder{classic, quorum}
	qq := topology.Args{"x-queue-type": "quorum"}
	cases := map[string]struct {
		q            topology.Queue
		limit        int
		known        bool
		force, write bool
	}{
		"classic rung":               {q: topology.Queue{Name: "c.rung.01"}, known: true},
		"classic work queue":         {q: topology.Queue{Name: "work"}, known: true},
		"quorum rung, limit 20":      {q: topology.Queue{Name: "q.rung.01", Args: qq}, limit: 20, known: true, force: true, write: true},
		"quorum rung, no limit":      {q: topology.Queue{Name: "q.rung.01", Args: qq}, known: true, write: true},
		"quorum rung, limit unknown": {q: topology.Queue{Name: "q.rung.00", Args: qq}, force: true, write: true},
		"quorum queue with a limit":  {q: topology.Queue{Name: "dlq", Args: qq}, limit: 5, known: true, force: true, write: true},
		"quorum queue, no limit":     {q: topology.Queue{Name: "dlq", Args: qq}, known: true, write: true},
		"quorum queue, 3.x negative": {q: topology.Queue{Name: "dlq", Args: qq}, limit: -1, known: true, force: true, write: true},
		"quorum by statistics":       {q: topology.Queue{Name: "dlq", Stats: topology.QueueStats{Type: "quorum"}}, known: true, write: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// The zero Version is unknown: the careful, pre-4.3 rules.
			r := AssessPeek(tc.q, ladders, PeekFacts{Limit: tc.limit, LimitKnown: tc.known})
			if r.NeedsForce != tc.force || r.ChangesBroker != tc.write {
				t.Errorf("AssessPeek() = force %v, changes %v; want %v, %v (%s)", r.NeedsForce, r.ChangesBroker, tc.force, tc.write, r.Why)
			}
			if (tc.force || tc.write) && r.Why == "" {
				t.Error("no explanation")
			}
			if len(r.Effects) == 0 {
				t.Error("no effects listed")
			}
		})
	}
}

// TestAssessPeekByRelease checks the rules of 4.3, where a peek's nack
// does not count as a delivery but delayed retry holds what it returns.
func TestAssessPeekByRelease(t *testing.T) {
	quorum, _ := topology.Ladder{Name: "q", Levels: 3, Radix: 2, QueueType: topology.Quorum}.Normalize()
	ladders := []topology.Ladder{quorum}
	rung := topology.Queue{Name: "q.rung.01", Args: topology.Args{"x-queue-type": "quorum"}}
	dlq := topology.Queue{Name: "dlq", Args: topology.Args{"x-queue-type": "quorum"}}
	v40, v43 := topology.Version{Major: 4, Minor: 0, Patch: 5}, topology.Version{Major: 4, Minor: 3, Patch: 6}
	all := []topology.DelayedRetry{{Source: "policy", Name: "slow", Type: "all", Min: 3 * time.Second}}
	failed := []topology.DelayedRetry{{Source: "argument", Type: "failed", Min: 3 * time.Second}}
	cases := map[string]struct {
		q            topology.Queue
		f            PeekFacts
		force, write bool
	}{
		"4.0 rung":                            {q: rung, f: PeekFacts{Version: v40, Limit: 20, LimitKnown: true}, force: true, write: true},
		"4.0 rung as rungs declares it":       {q: rung, f: PeekFacts{Version: v40, LimitKnown: true}, write: true},
		"4.3 rung":                            {q: rung, f: PeekFacts{Version: v43, Limit: 20, LimitKnown: true}},
		"4.3 rung, limit 1":                   {q: rung, f: PeekFacts{Version: v43, Limit: 1, LimitKnown: true}},
		"4.3 rung, delayed retry of returns":  {q: rung, f: PeekFacts{Version: v43, Limit: 20, LimitKnown: true, DelayedRetries: all}, force: true, write: true},
		"4.3 rung, delayed retry of failures": {q: rung, f: PeekFacts{Version: v43, Limit: 20, LimitKnown: true, DelayedRetries: failed}},
		"4.3 queue, delayed retry":            {q: dlq, f: PeekFacts{Version: v43, LimitKnown: true, DelayedRetries: all}, write: true},
		"4.0 rung, delayed retry ignored":     {q: rung, f: PeekFacts{Version: v40, Limit: 20, LimitKnown: true, DelayedRetries: all}, force: true, write: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := AssessPeek(tc.q, ladders, tc.f)
			if r.NeedsForce != tc.force || r.ChangesBroker != tc.write {
				t.Errorf("AssessPeek() = force %v, changes %v; want %v, %v (%s)", r.NeedsForce, r.ChangesBroker, tc.force, tc.write, r.Why)
			}
			if (tc.force || tc.write) && r.Why == "" {
				t.Error("no explanation")
			}
			if tc.f.DelayedRetries != nil && tc.f.Version.QuorumDelayedRetry() && tc.force && !strings.Contains(r.Why, "policy slow") {
				t.Errorf("the risk does not name the delayed retry's source: %s", r.Why)
			}
		})
	}
}

func TestEffectiveDeliveryLimit(t *testing.T) {
	q := topology.Queue{Name: "orders.dlq", Args: topology.Args{"x-queue-type": "quorum"}}
	pol := func(name, pattern string, prio int, limit any) topology.Policy {
		return topology.Policy{Name: name, Pattern: pattern, ApplyTo: "queues", Priority: prio, Definition: map[string]any{"delivery-limit": limit}}
	}
	cases := map[string]struct {
		q        topology.Queue
		policies []topology.Policy
		operator []topology.Policy
		want     int
	}{
		"nothing":                   {q: q},
		"argument":                  {q: topology.Queue{Name: "x", Args: topology.Args{"x-delivery-limit": int64(7)}}, want: 7},
		"matching policy":           {q: q, policies: []topology.Policy{pol("a", `\.dlq$`, 0, json.Number("4"))}, want: 4},
		"other queue":               {q: q, policies: []topology.Policy{pol("a", `^billing`, 0, json.Number("4"))}},
		"highest priority wins":     {q: q, policies: []topology.Policy{pol("low", ".*", 1, json.Number("2")), pol("high", "orders", 5, json.Number("9"))}, want: 9},
		"high priority without one": {q: q, policies: []topology.Policy{pol("low", ".*", 1, json.Number("2")), {Name: "high", Pattern: ".*", Priority: 5, Definition: map[string]any{"max-length": 1}}}},
		"operator policy is lower":  {q: q, policies: []topology.Policy{pol("a", ".*", 0, json.Number("9"))}, operator: []topology.Policy{pol("op", ".*", 0, json.Number("3"))}, want: 3},
		"argument is lower":         {q: topology.Queue{Name: "x", Args: topology.Args{"x-delivery-limit": int64(2)}}, policies: []topology.Policy{pol("a", ".*", 0, float64(9))}, want: 2},
		"exchanges only":            {q: q, policies: []topology.Policy{{Name: "x", Pattern: ".*", ApplyTo: "exchanges", Definition: map[string]any{"delivery-limit": 1}}}},
		"pcre pattern counts":       {q: q, policies: []topology.Policy{pol("a", `(?<=x)y`, 0, json.Number("6"))}, want: 6},
	}
	v310, v40 := topology.Version{Major: 3, Minor: 10, Patch: 8}, topology.Version{Major: 4, Minor: 0, Patch: 5}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := EffectiveDeliveryLimit(tc.q, tc.policies, tc.operator, v310); got != tc.want {
				t.Errorf("3.10: EffectiveDeliveryLimit() = %d, want %d", got, tc.want)
			}
			// 4.0 gives a quorum queue that nothing limits a limit of 20.
			want := tc.want
			if want == 0 {
				want = 20
			}
			if got := EffectiveDeliveryLimit(tc.q, tc.policies, tc.operator, v40); got != want {
				t.Errorf("4.0: EffectiveDeliveryLimit() = %d, want %d", got, want)
			}
		})
	}
	// A negative limit turns 4.0's default off, but on 3.x dead-letters
	// at the first hand-back (both measured).
	neg := topology.Queue{Name: "x", Args: topology.Args{"x-queue-type": "quorum", "x-delivery-limit": int64(-1)}}
	withPolicy := []topology.Policy{pol("a", ".*", 0, json.Number("5"))}
	for _, c := range []struct {
		v        topology.Version
		policies []topology.Policy
		want     int
	}{{v310, nil, -1}, {v40, nil, 0}, {v310, withPolicy, -1}, {v40, withPolicy, 5}} {
		if got := EffectiveDeliveryLimit(neg, c.policies, nil, c.v); got != c.want {
			t.Errorf("%v, x-delivery-limit -1, %d policies: %d, want %d", c.v, len(c.policies), got, c.want)
		}
	}
}

func TestBucket(t *testing.T) {
	start := time.Unix(1000, 0)
	b := newBucket(100, start)
	took := 0
	// Over one simulated second, a 100/s bucket hands out about 100.
	for now := start; now.Before(start.Add(time.Second)); now = now.Add(time.Millisecond) {
		for b.take(now) {
			took++
		}
	}
	if took < 95 || took > 106 {
		t.Errorf("a 100/s bucket gave %d in a second", took)
	}
	b = newBucket(2, start)
	b.take(start)
	if w := b.wait(start); w < 400*time.Millisecond || w > 500*time.Millisecond {
		t.Errorf("wait after the burst = %s, want ~500ms", w)
	}
}

func TestToOrigin(t *testing.T) {
	at := time.Unix(1700000000, 0)
	ladderX := func(x string) bool { return x == "jobs.rung.00.expired" }
	cases := map[string]struct {
		headers       map[string]any
		exchange, key string // as delivered
		want          Route
		err           error
	}{
		"parked by the retry library": {headers: map[string]any{topology.HeaderQueue: "work"}, want: Route{RoutingKey: "work"}},
		"parked by a replay": {headers: map[string]any{topology.HeaderQueue: "dlq", topology.HeaderParkedAt: at, topology.HeaderDeath: []any{
			map[string]any{"queue": "work", "reason": "rejected", "exchange": "orders", "routing-keys": []any{"order.created"}, "time": at},
		}}, want: Route{RoutingKey: "dlq"}},
		"parked, then dead-lettered elsewhere": {headers: map[string]any{topology.HeaderQueue: "work", topology.HeaderParkedAt: at, topology.HeaderDeath: []any{
			map[string]any{"queue": "audit", "reason": "rejected", "exchange": "", "routing-keys": []any{"audit"}, "time": at.Add(time.Minute)},
		}}, want: Route{RoutingKey: "audit"}},
		"rejected from a work queue": {headers: map[string]any{topology.HeaderDeath: []any{
			map[string]any{"queue": "work", "reason": "rejected", "exchange": "orders", "routing-keys": []any{"order.created", "cc"}, "count": int64(1), "time": at},
		}}, want: Route{Exchange: "orders", RoutingKey: "order.created"}},
		"out of a ladder's done queue": {headers: map[string]any{topology.HeaderDeath: []any{
			map[string]any{"queue": "jobs.done", "reason": "expired", "exchange": "jobs.rung.00.expired", "routing-keys": []any{"0.0.1"}},
			map[string]any{"queue": "jobs.rung.00", "reason": "expired", "exchange": "jobs.ingest", "routing-keys": []any{"0.0.1"}},
		}}, want: Route{Exchange: "jobs.rung.00.expired", RoutingKey: "0.0.1", SaveDeath: true}},
		"default exchange": {headers: map[string]any{topology.HeaderDeath: []any{
			map[string]any{"queue": "work", "reason": "rejected", "exchange": "", "routing-keys": []any{"work"}},
		}}, want: Route{RoutingKey: "work"}},
		"never dead-lettered": {headers: map[string]any{"tenant": "acme"}, err: ErrNoOrigin},
		"published to another exchange, never dead-lettered": {headers: map[string]any{"tenant": "acme"},
			exchange: "orders", key: "order.created", err: ErrNoOrigin},
		"a ladder's exchange had no binding for its key": {exchange: "jobs.rung.00.expired", key: "1.0.1",
			want: Route{Exchange: "jobs.rung.00.expired", RoutingKey: "1.0.1", SaveDeath: true}},
		"x-death wins over the exchange it was delivered from": {exchange: "jobs.rung.00.expired", key: "0.0.1",
			headers: map[string]any{topology.HeaderDeath: []any{
				map[string]any{"queue": "work", "reason": "rejected", "exchange": "orders", "routing-keys": []any{"order.created"}},
			}}, want: Route{Exchange: "orders", RoutingKey: "order.created"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ToOrigin(ladderX)(Delivery{Headers: tc.headers, Exchange: tc.exchange, RoutingKey: tc.key})
			if !errors.Is(err, tc.err) || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ToOrigin() = %+v, %v; want %+v, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// Back into a direct ladder, a message needs the BCC keys its routing key
// spells: the broker stripped the ones it was published with.
func TestToOriginInRebuildsBCC(t *testing.T) {
	direct, err := topology.Ladder{Name: "jobs", Layout: "direct", Levels: 3, Radix: 2, Targets: []string{"work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	prefix, _ := topology.Ladder{Name: "p", Layout: "prefix", Levels: 3, Radix: 2}.Normalize()
	route := ToOriginIn([]topology.Ladder{direct, prefix})
	death := func(queue, exchange, key string) map[string]any {
		return map[string]any{topology.HeaderDeath: []any{
			map[string]any{"queue": queue, "reason": "rejected", "exchange": exchange, "routing-keys": []any{key}},
		}}
	}
	cases := map[string]struct {
		headers map[string]any
		want    Route
	}{
		// A worker's queue rejected it: it arrived from level 0's exchange.
		"from a destination": {death("work", "jobs.rung.00.expired", "1.0.1.work"),
			Route{Exchange: "jobs.rung.00.expired", RoutingKey: "1.0.1.work", SaveDeath: true, BCC: []string{"i>02", "02>00", "00>=work"}}},
		// Over a rung's delivery limit: back into the rung it left.
		"from a rung": {death("jobs.rung.00", "jobs.rung.02.expired", "1.0.1"),
			Route{Exchange: "jobs.rung.02.expired", RoutingKey: "1.0.1", SaveDeath: true, BCC: []string{"i>02", "02>00", "00>="}}},
		"into a prefix ladder": {death("p.done", "p.rung.00.expired", "0.0.1"),
			Route{Exchange: "p.rung.00.expired", RoutingKey: "0.0.1", SaveDeath: true}},
		"not a ladder": {death("work", "orders", "order.created"), Route{Exchange: "orders", RoutingKey: "order.created"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := route(Delivery{Headers: tc.headers})
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ToOriginIn() = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	if _, err := route(Delivery{Headers: death("work", "jobs.ingest", "not.a.key")}); err == nil {
		t.Error("a key that is not the ladder's routed back without BCC")
	}
}

func TestReplayedCopy(t *testing.T) {
	m := &mover{o: MoveOptions{Source: "dlq", Park: "parked"}, run: "r1", c: &Conn{ep: endpoint{amqpURI: amqp.URI{Username: "guest"}}}}
	d := amqp.Delivery{
		Headers: amqp.Table{
			"tenant": "acme", topology.HeaderDeliveryCount: int64(4), topology.HeaderReplayed: int64(1),
			topology.HeaderDeath: []any{amqp.Table{"queue": "jobs.rung.00", "reason": "expired"}},
		},
		Body: []byte("x"), CorrelationId: "c1", ReplyTo: "r", Priority: 3, DeliveryMode: 2, UserId: "alice", AppId: "app",
	}
	e := &entry{d: d, route: Route{Exchange: "jobs.ingest", RoutingKey: "0.1", SaveDeath: true}, id: "r1.7"}
	p := m.copyOf(e)
	h := p.Headers
	if _, ok := h[topology.HeaderDeath]; ok {
		t.Error("x-death kept on a route into a ladder")
	}
	if saved, ok := h[topology.HeaderSavedDeath].([]any); !ok || len(saved) != 1 {
		t.Errorf("x-death not saved: %v", h[topology.HeaderSavedDeath])
	}
	if _, ok := h[topology.HeaderDeliveryCount]; ok {
		t.Error("x-delivery-count kept")
	}
	if h[topology.HeaderReplayed] != int64(2) || h[topology.HeaderReplayedFrom] != "dlq" || h[topology.HeaderReplayID] != "r1.7" || h["tenant"] != "acme" {
		t.Errorf("headers %v", h)
	}
	if p.CorrelationId != "c1" || p.ReplyTo != "r" || p.Priority != 3 || p.DeliveryMode != 2 || p.AppId != "app" || string(p.Body) != "x" {
		t.Errorf("properties lost: %+v", p)
	}
	if p.UserId != "" || h["x-rungs-user-id"] != "alice" {
		t.Errorf("a foreign user-id would close the channel: %q, %v", p.UserId, h["x-rungs-user-id"])
	}
	if _, ok := d.Headers[topology.HeaderReplayID]; ok {
		t.Error("copyOf modified the delivery's headers")
	}
	e.park, e.why = true, "unroutable: nowhere"
	p = m.copyOf(e)
	if p.Headers[topology.HeaderReason] != "unroutable: nowhere" || p.Headers[topology.HeaderQueue] != "dlq" {
		t.Errorf("parked copy headers %v", p.Headers)
	}
}
