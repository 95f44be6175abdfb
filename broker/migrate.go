package broker

import (
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// MigrateRung returns o set up to move the messages of rung, a rung queue
// of g.From, into g.To with the delay each has left there (see
// topology.Migration.Place): o's Source, Route and Stamp are replaced. A
// message that cannot be placed is routed to the parking queue with the
// reason (Route.Park), so o should name one.
func MigrateRung(o MoveOptions, g topology.Migration, rung string) MoveOptions {
	o.Source = rung
	o.Route = func(d Delivery) (Route, error) {
		_, r := MigrateRoute(g, rung, d)
		return r, nil
	}
	o.Stamp = func(d Delivery, _ Route) map[string]any {
		p, _ := MigrateRoute(g, rung, d)
		return MigrateHeaders(g, rung, d, p)
	}
	return o
}

// MigrateRoute works out one message's placement and the route that
// carries it out. The remaining delay is measured at d.Received, when the
// message left the rung: a message held longer before it is republished
// arrives later for it, never earlier. Routes into the target save x-death
// aside (see Route.SaveDeath).
func MigrateRoute(g topology.Migration, rung string, d Delivery) (topology.Placement, Route) {
	p := g.Place(topology.InFlight{Queue: rung, Key: d.RoutingKey, Headers: d.Headers, Timestamp: d.Timestamp}, received(d))
	if p.Park != "" {
		return p, Route{Park: p.Park}
	}
	return p, Route{Exchange: p.Trace.Exchange, RoutingKey: p.Trace.Key, SaveDeath: true, BCC: p.Trace.BCC}
}

// MigrateHeaders are the headers a migrated copy gains: x-rungs-migrated
// for one placed in the target, x-rungs-remaining-ms for one parked whose
// delay could be worked out.
func MigrateHeaders(g topology.Migration, rung string, d Delivery, p topology.Placement) map[string]any {
	est := p.Estimate
	if p.Park != "" {
		if est.Rung.Queue == "" {
			return nil
		}
		return map[string]any{topology.HeaderRemainingMS: est.Remaining.Milliseconds()}
	}
	return map[string]any{topology.HeaderMigrated: map[string]any{
		"from": g.From.Name, "from-layout": g.From.Layout, "from-queue": rung,
		"to": g.To.Name, "to-layout": g.To.Layout,
		"at":       received(d).UTC().Truncate(time.Second),
		"delay-ms": est.Total.Milliseconds(), "remaining-ms": p.Trace.Delay.Milliseconds(),
		"basis": string(est.Basis),
	}}
}

func received(d Delivery) time.Time {
	if d.Received.IsZero() {
		return time.Now()
	}
	return d.Received
}
