package ops

import "testing"

func TestReplayVerdictRoute(t *testing.T) {
	cases := map[string]struct {
		v    ReplayVerdict
		want string
	}{
		"an exchange":          {ReplayVerdict{Exchange: "x", RoutingKey: "k"}, `"x" key "k"`},
		"the default exchange": {ReplayVerdict{RoutingKey: "q"}, `the default exchange key "q"`},
	}
	for name, tc := range cases {
		if got := tc.v.Route(); got != tc.want {
			t.Errorf("%s: Route() = %q, want %q", name, got, tc.want)
		}
	}
}
