package ops

import (
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// ReplayToOrigin describes a replay that sends each message back where it
// came from; it reads as the end of "replay N messages from Q ...".
const ReplayToOrigin = "back where each came from (its latest x-death entry, or x-rungs-queue)"

// ReplayTo is where a replay sends a queue's messages: straight to Queue,
// back to their Origin, or into Ladder after Delay (to Dest, "" for the
// ladder's done queue). Exactly one is set.
type ReplayTo struct {
	Queue  string
	Origin bool
	Ladder *topology.Ladder
	Delay  time.Duration
	Dest   string
}

// ReplayRoute is a planned replay: how each message is routed, and the
// route in words ("to queue X", "into ladder L: ...").
type ReplayRoute struct {
	Router   broker.Router
	Describe string
	// Trace is the path into the ladder, for a replay into one.
	Trace *topology.Trace
}

// RouteError says a replay or publish into a ladder would not be
// delivered as traced; nothing has been sent.
type RouteError struct {
	Trace topology.Trace
	Err   error
}

func (e *RouteError) Error() string {
	return fmt.Sprintf("would not reach %s: %v", e.Trace.Target, e.Err)
}

func (e *RouteError) Unwrap() error { return e.Err }

// PlanReplay works out how a replay from source routes its messages. It
// refuses a replay that would loop (into a ladder that delivers back to
// the source) and, when g is not nil, one whose route the broker's
// bindings would not deliver (a *RouteError). found are the vhost's
// ladders: a message sent back to one of their exchanges keeps its
// x-death aside (see broker.Route.SaveDeath). With g nil (no management
// API) nothing is checked and the mandatory flag catches the rest.
func PlanReplay(source string, to ReplayTo, found []topology.Found, g *topology.Graph) (ReplayRoute, error) {
	switch {
	case to.Queue != "":
		return ReplayRoute{Router: broker.ToQueue(to.Queue), Describe: "to queue " + to.Queue}, nil
	case to.Origin:
		// Back into a direct ladder, a message also needs the BCC keys the
		// broker stripped; ToOriginIn rebuilds them from its routing key.
		var ladders []topology.Ladder
		if g != nil {
			for _, f := range found {
				ladders = append(ladders, f.Ladder)
			}
		}
		return ReplayRoute{Router: broker.ToOriginIn(ladders), Describe: ReplayToOrigin}, nil
	case to.Ladder == nil:
		return ReplayRoute{}, fmt.Errorf("no ladder to replay into")
	}
	tr, err := to.Ladder.Trace(to.Delay, to.Dest)
	if err != nil {
		return ReplayRoute{}, err
	}
	if tr.Target == source {
		return ReplayRoute{}, fmt.Errorf("the ladder delivers to %s, the source queue: replay would never end", source)
	}
	if g != nil {
		if err := g.CheckRoute(tr); err != nil {
			return ReplayRoute{}, &RouteError{Trace: tr, Err: err}
		}
	}
	r, err := broker.ToLadder(*to.Ladder, to.Delay, to.Dest)
	if err != nil {
		return ReplayRoute{}, err
	}
	return ReplayRoute{Router: r, Trace: &tr, Describe: fmt.Sprintf("into ladder %s: %s later to %s (exchange %s, key %s)",
		tr.Ladder.Name, topology.FormatDelay(tr.Delay), tr.Target, tr.Exchange, tr.Key)}, nil
}
