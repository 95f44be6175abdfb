package broker

import (
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// MigrateDelayQueue returns o set up to move the messages of a delay queue
// outside ladders into g.To with the delay each has left (see
// topology.DelayMove.PlaceDelay): o's Source, Route and Stamp are replaced.
// route is where dead-lettering and publishes lead on the broker
// (topology.DeadLetterRoute of a snapshot). A message that cannot be placed
// goes to the parking queue with the reason, so o should name one.
func MigrateDelayQueue(o MoveOptions, g topology.DelayMove, q topology.DelayQueue, route func(exchange, key string) []string) MoveOptions {
	o.Source = q.Name
	place := func(d Delivery) topology.Placement {
		return g.PlaceDelay(topology.DelayMessage{Queue: q, Key: d.RoutingKey, Headers: d.Headers, Timestamp: d.Timestamp, Expiration: d.Expiration}, received(d), route)
	}
	o.Route = func(d Delivery) (Route, error) {
		p := place(d)
		if p.Park != "" {
			return Route{Park: p.Park}, nil
		}
		return Route{Exchange: p.Trace.Exchange, RoutingKey: p.Trace.Key, SaveDeath: true, BCC: p.Trace.BCC}, nil
	}
	o.Stamp = func(d Delivery, _ Route) map[string]any {
		p := place(d)
		est := p.Estimate
		if p.Park != "" {
			if est.Rung.Queue == "" {
				return nil
			}
			return map[string]any{topology.HeaderRemainingMS: est.Remaining.Milliseconds()}
		}
		return map[string]any{topology.HeaderMigrated: map[string]any{
			"from-queue": q.Name, "from-app": q.App, "from-group": q.Group,
			"to": g.To.Name, "to-layout": g.To.Layout,
			"at":       received(d).UTC().Truncate(time.Second),
			"delay-ms": est.Total.Milliseconds(), "remaining-ms": p.Trace.Delay.Milliseconds(),
			"basis": string(est.Basis),
		}}
	}
	return o
}
