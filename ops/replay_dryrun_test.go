package ops

import (
	"testing"

	"github.com/rungs-dev/rungs/broker"
)

func TestReplayVerdictRoute(t *testing.T) {
	for _, v := range []ReplayVerdict{{Exchange: "x", RoutingKey: "k"}, {RoutingKey: "q"}, {Exchange: "x"}} {
		if got, want := v.Route(), (broker.Route{Exchange: v.Exchange, RoutingKey: v.RoutingKey}).String(); got != want {
			t.Errorf("%+v: Route() = %q, want %q", v, got, want)
		}
	}
}
