package ops

import (
	"fmt"
	"testing"

	"github.com/rungs-dev/rungs/topology"
)

func TestScopesByVhost(t *testing.T) {
	found := func(vl ...string) []topology.Found {
		var fs []topology.Found
		for i := 0; i < len(vl); i += 2 {
			fs = append(fs, topology.Found{Ladder: topology.Ladder{Vhost: vl[i], Name: vl[i+1]}})
		}
		return fs
	}
	cases := []struct {
		found []topology.Found
		want  string
	}{
		{nil, "[]"},
		{found("/", "a"), "[{/ [a]}]"},
		{found("/", "a", "/", "b", "jobs", "c"), "[{/ [a b]} {jobs [c]}]"},
		{found("a", "x", "b", "y", "a", "z"), "[{a [x]} {b [y]} {a [z]}]"},
	}
	for _, tc := range cases {
		var got []string
		for _, s := range ScopesByVhost(tc.found) {
			got = append(got, fmt.Sprintf("{%s %v}", s.Vhost, s.Ladders))
		}
		if s := fmt.Sprint(got); s != tc.want {
			t.Errorf("%v: %s, want %s", tc.found, s, tc.want)
		}
	}
}
