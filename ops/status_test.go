package ops

import (
	"reflect"
	"testing"

	"github.com/rungs-dev/rungs/topology"
)

func TestStatusRequest(t *testing.T) {
	some := []topology.Found{{Ladder: topology.Ladder{Name: "jobs"}}}
	for _, c := range []struct {
		req     StatusRequest
		ladders []string
		beside  bool
		none    string // CheckFound's error without ladders found
	}{
		{StatusRequest{Vhost: "/"}, nil, true, ""},
		{StatusRequest{Vhost: "/", Ladder: "jobs"}, []string{"jobs"}, false, `no ladder "jobs" in vhost / (rungs discover lists the ladders there)`},
	} {
		if s := c.req.Scope(); s.Vhost != "/" || !reflect.DeepEqual(s.Ladders, c.ladders) || c.req.Beside() != c.beside {
			t.Errorf("%+v: scope %+v, beside %v", c.req, s, c.req.Beside())
		}
		got := ""
		if err := c.req.CheckFound(nil); err != nil {
			got = err.Error()
		}
		if got != c.none {
			t.Errorf("%+v finds none: %q", c.req, got)
		}
		if err := c.req.CheckFound(some); err != nil {
			t.Errorf("%+v finds jobs: %v", c.req, err)
		}
	}
}
