package ops

import "github.com/rungs-dev/rungs/broker"

// Route is where a previewed message that moves is published, as
// broker.Route words it.
func (v ReplayVerdict) Route() string {
	return broker.Route{Exchange: v.Exchange, RoutingKey: v.RoutingKey}.String()
}
