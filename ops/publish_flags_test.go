package ops

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

func TestPublishInputRequest(t *testing.T) {
	ok := PublishInput{Delay: "90s", Count: 1, Persistent: true, Body: "hi", Headers: []string{"tenant=acme"}, To: "q", IDPrefix: "p"}
	cases := map[string]struct {
		in   PublishInput
		want string // "" when accepted
	}{
		"accepted":         {ok, ""},
		"bad delay":        {PublishInput{Delay: "soon", Count: 1}, "--delay: "},
		"bad rate":         {PublishInput{Delay: "1s", Rate: "fast", Count: 1}, "(or max: as fast as confirms allow)"},
		"bad header":       {PublishInput{Delay: "1s", Count: 1, Headers: []string{"novalue"}}, "--header: "},
		"missing body":     {PublishInput{Delay: "1s", Count: 1, Body: "@/no/such/file"}, "--body: "},
		"needs a rate":     {PublishInput{Delay: "1s", Count: MaxUnpaced + 1}, fmt.Sprintf("--count %d needs --rate: more than %d messages at once could flood the broker; pass --rate 1000/s", MaxUnpaced+1, MaxUnpaced)},
		"a field refused":  {PublishInput{Delay: "1s", Count: 0}, "--count must be at least 1, got 0"},
		"a field's flag":   {PublishInput{Delay: "1s", Count: 1, ContentType: strings.Repeat("x", 300)}, "--content-type is 300 bytes"},
		"paced, many sent": {PublishInput{Delay: "1s", Count: MaxUnpaced + 1, Rate: "max"}, ""},
	}
	for name, tc := range cases {
		req, err := tc.in.Request()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Request() = %v", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !IsInputError(err)):
			t.Errorf("%s: Request() = %v, want an input error with %q", name, err, tc.want)
		}
		if name == "accepted" && (req.Delay != 90*time.Second || req.Dest != "q" || string(req.Message.Body) != "hi" || req.Message.Headers["tenant"] != "acme" || !req.Message.Persistent) {
			t.Errorf("accepted: Request() = %+v", req)
		}
	}
}

func TestPublishRefusal(t *testing.T) {
	tr := topology.Trace{Delay: 90 * time.Second, Target: "q"}
	cases := map[string]struct {
		err   error
		want  string
		input bool
	}{
		"none":      {nil, "", false},
		"route":     {&RouteError{Trace: tr, Err: errors.New("no binding")}, "nothing published: a message for 1m30s would not reach q: no binding", false},
		"no ladder": {fmt.Errorf("x: %w", ErrLadderNotFound), "no ladder jobs (rungs discover lists the ladders there; rungs apply creates one)", false},
		"other":     {errors.New("bad destination"), "bad destination", true},
	}
	for name, tc := range cases {
		err := PublishRefusal(tc.err, "no ladder jobs")
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: PublishRefusal() = %v", name, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.want || IsInputError(err) != tc.input {
			t.Errorf("%s: PublishRefusal() = %v, want %q (input %v)", name, err, tc.want, tc.input)
		}
	}
}

func TestBurstWarnings(t *testing.T) {
	l, err := topology.Ladder{Name: "jobs", QueueType: topology.Quorum}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := l.Trace(20*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	caps := map[string]broker.DrainCapacity{"quorum": {HopsPerS: float64(6000 * len(tr.Hops)), RabbitMQ: "4.3.6"}}
	cases := map[string]struct {
		n    int
		caps map[string]broker.DrainCapacity
		want int
	}{
		"late":          {360_000, caps, 1},
		"within it":     {3000, caps, 0},
		"nothing saved": {360_000, nil, 0},
	}
	for name, tc := range cases {
		got := BurstWarnings(tc.n, tr, tc.caps, 0)
		if len(got) != tc.want || tc.want == 1 && !strings.Contains(got[0], "late") {
			t.Errorf("%s: BurstWarnings() = %q", name, got)
		}
	}
}
