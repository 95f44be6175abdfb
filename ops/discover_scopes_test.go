package ops

import (
	"errors"
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

func TestDiscoverRequest(t *testing.T) {
	hidden := errors.New("user may not read vhost x")
	cases := []struct {
		req           DiscoverRequest
		vhosts        string
		warning, fail bool
		where         string
	}{
		{DiscoverRequest{Vhost: "jobs"}, "[jobs]", false, true, "jobs"},
		{DiscoverRequest{Vhost: "jobs", AllVhosts: true}, "[]", true, false, "any vhost ops may read"},
	}
	for _, tc := range cases {
		if v := fmt.Sprint(tc.req.Vhosts()); v != tc.vhosts {
			t.Errorf("%+v: vhosts %s, want %s", tc.req, v, tc.vhosts)
		}
		warning, err := tc.req.Hidden(hidden)
		if (warning != nil) != tc.warning || (err != nil) != tc.fail {
			t.Errorf("%+v: hidden gave warning %v, error %v", tc.req, warning, err)
		}
		if w, err := tc.req.Hidden(nil); w != nil || err != nil {
			t.Errorf("%+v: nothing hidden gave %v %v", tc.req, w, err)
		}
		if w := tc.req.Where("ops"); w != tc.where {
			t.Errorf("%+v: where %q, want %q", tc.req, w, tc.where)
		}
	}
}
