package topology

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestMatchTopic(t *testing.T) {
	cases := []struct {
		pattern, key string
		want         bool
	}{
		{"#", "", true},
		{"#", "a.b.c", true},
		{"*", "", false},
		{"*", "a", true},
		{"*", "a.b", false},
		{"a.*", "a.b", true},
		{"a.#", "a", true},
		{"#.a", "a", true},
		{"#.0.1.*", "1.1.0.1.0", true},
		{"#.0.1.*", "0.1", false},
		{"*.*.0.1.#", "1.0.0.1.1.orders", true},
		{"*.*.0.1.#", "1.0.0.1", true},
		{"*.*.0.1.#", "1.0.1.1", false},
		{"#.#", "x", true},
		{"a.#.b", "a.b", true},
		{"a.#.b", "a.x.y.b", true},
		{"a.#.b", "a.x.y.c", false},
		{"a..b", "a..b", true},
		{"a.*.b", "a..b", true},
	}
	for _, c := range cases {
		if got := MatchTopic(c.pattern, c.key); got != c.want {
			t.Errorf("MatchTopic(%q, %q) = %v; want %v", c.pattern, c.key, got, c.want)
		}
	}
}

// refMatch is a deliberately naive recursive matcher, the specification that
// the iterative MatchTopic must agree with.
func refMatch(p, k []string) bool {
	if len(p) == 0 {
		return len(k) == 0
	}
	switch p[0] {
	case "#":
		for i := 0; i <= len(k); i++ {
			if refMatch(p[1:], k[i:]) {
				return true
			}
		}
		return false
	case "*":
		return len(k) > 0 && refMatch(p[1:], k[1:])
	default:
		return len(k) > 0 && k[0] == p[0] && refMatch(p[1:], k[1:])
	}
}

func TestMatchTopicAgreesWithReference(t *testing.T) {
	word := rapid.SampledFrom([]string{"0", "1", "a", "", "x"})
	pword := rapid.SampledFrom([]string{"0", "1", "a", "*", "#", "x"})
	rapid.Check(t, func(t *rapid.T) {
		p := rapid.SliceOfN(pword, 0, 7).Draw(t, "pattern")
		k := rapid.SliceOfN(word, 0, 7).Draw(t, "key")
		ps, ks := strings.Join(p, "."), strings.Join(k, ".")
		want := refMatch(splitWords(ps), splitWords(ks))
		if got := MatchTopic(ps, ks); got != want {
			t.Fatalf("MatchTopic(%q, %q) = %v; reference says %v", ps, ks, got, want)
		}
	})
}

func TestRouteFollowsExchangeBindingsAndAlternates(t *testing.T) {
	s := Snapshot{
		Exchanges: []Exchange{
			{Name: "in", Type: "topic", Args: Args{"alternate-exchange": "ae"}},
			{Name: "mid", Type: "direct"},
			{Name: "ae", Type: "fanout"},
		},
		Queues: []Queue{{Name: "q1"}, {Name: "q2"}, {Name: "lost"}},
		Bindings: []Binding{
			{Source: "in", Destination: "mid", DestinationType: ToExchange, RoutingKey: "a.#"},
			{Source: "mid", Destination: "q1", DestinationType: ToQueue, RoutingKey: "a.b"},
			{Source: "in", Destination: "q2", DestinationType: ToQueue, RoutingKey: "*.c"},
			{Source: "ae", Destination: "lost", DestinationType: ToQueue},
		},
	}
	g := NewGraph(s)
	cases := map[string][]string{
		"a.b": {"q1"},
		"a.c": {"q2"}, // matches both a.# (mid routes nowhere) and *.c
		"z":   {"lost"},
	}
	for key, want := range cases {
		got, _, err := g.Route("in", key)
		if err != nil || strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("Route(in, %q) = %v, %v; want %v", key, got, err, want)
		}
	}
	if _, _, err := g.Route("nope", "x"); err == nil {
		t.Error("Route from a missing exchange did not fail")
	}
}
