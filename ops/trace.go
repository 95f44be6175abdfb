package ops

import (
	"fmt"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// TraceRequest asks where a delay goes through Ladder: Delay to Dest (""
// for the ladder's done queue), or, with Key set, the delay and
// destination that routing key spells.
type TraceRequest struct {
	Ladder topology.Ladder
	Delay  time.Duration
	Dest   string
	Key    string
}

// ParseTraceInput reads "DELAY [DEST]", the console's trace syntax.
func ParseTraceInput(l topology.Ladder, input string) (TraceRequest, error) {
	fields := strings.Fields(input)
	switch {
	case len(fields) == 0:
		return TraceRequest{}, fmt.Errorf("type a delay, e.g. 90s")
	case len(fields) > 2:
		return TraceRequest{}, fmt.Errorf("expected a delay and at most one destination, got %q", strings.Join(fields, " "))
	}
	d, err := topology.ParseDelay(fields[0])
	if err != nil {
		return TraceRequest{}, err
	}
	req := TraceRequest{Ladder: l, Delay: d}
	if len(fields) == 2 {
		req.Dest = fields[1]
	}
	return req, nil
}

// RouteCheck is a trace walked over the broker's bindings, TTLs included.
type RouteCheck struct {
	// Checked says the bindings were read; Err, that they route the
	// message differently or not at all.
	Checked bool
	Err     error
	// Unchecked says why the route was not checked, when it was not.
	Unchecked string
}

// Exit is how a trace ends: with drift when the bindings route the
// message otherwise, so a deploy script can gate on it; an unchecked
// route is no drift, since nothing was seen to differ.
func (c RouteCheck) Exit() int {
	if c.Err != nil {
		return ExitDrift
	}
	return ExitOK
}

// Traced is a trace and its route check: what rungs trace prints and the
// console's trace pane draws.
type Traced struct {
	Trace topology.Trace
	Check RouteCheck
}

// Trace traces the request and checks the route over g, the graph of the
// vhost's bindings; with g nil, why says why there is none (the
// management API's error) and the route is not checked. A request the
// ladder cannot trace is an error; a broken route is not: it is the
// answer.
func Trace(req TraceRequest, g *topology.Graph, why error) (Traced, error) {
	d, dest := req.Delay, req.Dest
	if req.Key != "" {
		var err error
		if d, dest, err = req.Ladder.Decode(req.Key); err != nil {
			return Traced{}, err
		}
	}
	tr, err := req.Ladder.Trace(d, dest)
	if err != nil {
		return Traced{}, err
	}
	return Traced{Trace: tr, Check: CheckRoute(tr, g, why)}, nil
}

// CheckRoute walks tr over g, the vhost's bindings; with g nil it says
// why nothing was checked.
func CheckRoute(tr topology.Trace, g *topology.Graph, why error) RouteCheck {
	if g == nil {
		return RouteCheck{Unchecked: fmt.Sprintf("not checked against the broker: %v", why)}
	}
	if err := g.CheckRoute(tr); err != nil {
		return RouteCheck{Checked: true, Err: err}
	}
	return RouteCheck{Checked: true}
}

// Route traces delay d through l to dest and checks the route over g, the
// broker's bindings (nil: not checked): the one "trace, then check the
// route" of every operation that sends into a ladder (publish, replay,
// migrate), which refuses a route rather than report it as Trace does. A
// request the ladder cannot trace is that error; a route the bindings
// would not deliver, a *RouteError.
func Route(l topology.Ladder, d time.Duration, dest string, g *topology.Graph) (topology.Trace, error) {
	tr, err := l.Trace(d, dest)
	if err != nil {
		return tr, err
	}
	return tr, RouteErr(tr, g)
}

// RouteErr is a *RouteError when g, the broker's bindings, would not
// deliver tr as traced; nil when they would or g is nil.
func RouteErr(tr topology.Trace, g *topology.Graph) error {
	if c := CheckRoute(tr, g, nil); c.Err != nil {
		return &RouteError{Trace: tr, Err: c.Err}
	}
	return nil
}
