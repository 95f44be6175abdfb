package ops

import (
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

func TestTraceInput(t *testing.T) {
	l := topology.Ladder{Name: "jobs"}
	cases := map[string]struct {
		in       TraceInput
		checkErr string
		reqErr   bool
		want     TraceRequest
	}{
		"a delay":       {in: TraceInput{Args: []string{"90s"}, Dest: "q"}, want: TraceRequest{Ladder: l, Delay: 90 * time.Second, Dest: "q"}},
		"a routing key": {in: TraceInput{Key: "0.1.q"}, want: TraceRequest{Ladder: l, Key: "0.1.q"}},
		"both":          {in: TraceInput{Args: []string{"90s"}, Key: "0.1.q"}, checkErr: "trace needs a DELAY or --routing-key, not both"},
		"neither":       {in: TraceInput{}, checkErr: "trace needs a DELAY or --routing-key, not both"},
		"a bad delay":   {in: TraceInput{Args: []string{"soon"}}, reqErr: true},
	}
	for name, tc := range cases {
		err := tc.in.Check()
		if tc.checkErr != "" {
			if err == nil || err.Error() != tc.checkErr || !IsInputError(err) {
				t.Errorf("%s: Check() = %v, want input error %q", name, err, tc.checkErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: Check() = %v", name, err)
		}
		req, err := tc.in.Request(l)
		switch {
		case tc.reqErr:
			if err == nil || !IsInputError(err) {
				t.Errorf("%s: Request() = %v, want an input error", name, err)
			}
		case err != nil || req.Ladder.Name != tc.want.Ladder.Name || req.Delay != tc.want.Delay || req.Dest != tc.want.Dest || req.Key != tc.want.Key:
			t.Errorf("%s: Request() = %+v, %v; want %+v", name, req, err, tc.want)
		}
	}
}
