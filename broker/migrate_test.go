package broker_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// TestMoveParkRouteAndStamp checks the two hooks migrate uses: a route can
// send a message to the parking queue with its own reason (Route.Park), and
// Stamp adds headers to the copy that takes the route, but not to a copy
// parked because the broker returned it.
func TestMoveParkRouteAndStamp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	declare(t, e, topology.Queue{Name: "src"}, topology.Queue{Name: "target"})
	if _, err := e.conn.Apply(ctxFor(t, 10*time.Second), topology.Plan{Exchanges: []topology.Exchange{{Name: "nowhere", Type: "topic", Durable: true}}}); err != nil {
		t.Fatal(err)
	}
	fill(t, e, "src", "p", 30, nil)
	// p-0, p-3...: parked by the route; p-1, p-4...: moved; p-2, p-5...:
	// returned by the broker.
	route := func(d broker.Delivery) (broker.Route, error) {
		n, _ := strconv.Atoi(strings.TrimPrefix(d.MessageID, "p-"))
		switch n % 3 {
		case 0:
			return broker.Route{Park: "cannot place it"}, nil
		case 1:
			return broker.Route{RoutingKey: "target"}, nil
		}
		return broker.Route{Exchange: "nowhere", RoutingKey: "x"}, nil
	}
	stamp := func(d broker.Delivery, r broker.Route) map[string]any {
		return map[string]any{"x-stamp": map[string]any{"id": d.MessageID, "park": r.Park}}
	}
	// Without a parking queue, the route's reason keeps them on the source.
	parkAll := func(broker.Delivery) (broker.Route, error) { return broker.Route{Park: "cannot place it"}, nil }
	res, err := e.conn.Move(ctxFor(t, 30*time.Second), broker.MoveOptions{Source: "src", Route: parkAll, Stamp: stamp, MaxHeld: 100})
	if err != nil || res.Kept != 30 || res.Reasons["cannot place it"] != 30 || res.Stopped != broker.StopEmpty {
		t.Fatalf("Move() without a parking queue = %+v, %v", res, err)
	}
	res, err = e.conn.Move(ctxFor(t, 30*time.Second), broker.MoveOptions{Source: "src", Route: route, Stamp: stamp, Park: "parked"})
	if err != nil || res.Moved != 10 || res.Parked != 20 || res.Reasons["cannot place it"] != 10 {
		t.Fatalf("Move() = %+v, %v", res, err)
	}
	for _, d := range drainAll(t, e, "target") {
		s, _ := d.Headers["x-stamp"].(map[string]any)
		if s["id"] != d.MessageID || s["park"] != "" {
			t.Errorf("moved %s: stamp %v", d.MessageID, d.Headers["x-stamp"])
		}
	}
	for _, d := range drainAll(t, e, "parked") {
		reason, _ := d.Headers[topology.HeaderReason].(string)
		s, stamped := d.Headers["x-stamp"].(map[string]any)
		switch {
		case strings.HasPrefix(reason, "cannot place"):
			if !stamped || s["park"] != reason {
				t.Errorf("parked by the route %s: stamp %v", d.MessageID, d.Headers["x-stamp"])
			}
		case strings.Contains(reason, "NO_ROUTE"):
			if stamped {
				t.Errorf("returned %s was stamped: %v", d.MessageID, s)
			}
		default:
			t.Errorf("parked %s: reason %q", d.MessageID, reason)
		}
	}
}
