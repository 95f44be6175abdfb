package ops

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// ReplayToOrigin describes a replay that sends each message back where it
// came from; it reads as the end of "replay N messages from Q ...".
const ReplayToOrigin = "back where each came from (its latest x-death entry, or x-rungs-queue)"

// ReplayTo is where a replay sends a queue's messages: straight to Queue,
// back to their Origin, or into Ladder after Delay (to Dest, "" for the
// ladder's done queue). Exactly one is set. Into names the ladder for
// Replay to resolve from what it reads, when the front end does not hold
// it (the CLI's --to-ladder); Replay sets Ladder from it.
type ReplayTo struct {
	Queue  string
	Origin bool
	Ladder *topology.Ladder
	Into   *ReplayInto
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
	tr, err := Route(*to.Ladder, to.Delay, to.Dest, g)
	var re *RouteError
	if err != nil && !errors.As(err, &re) {
		return ReplayRoute{}, err
	}
	if tr.Target == source {
		return ReplayRoute{}, fmt.Errorf("the ladder delivers to %s, the source queue: replay would never end", source)
	}
	if re != nil {
		return ReplayRoute{}, re
	}
	r, err := broker.ToLadder(*to.Ladder, to.Delay, to.Dest)
	if err != nil {
		return ReplayRoute{}, err
	}
	return ReplayRoute{Router: r, Trace: &tr, Describe: fmt.Sprintf("into ladder %s: %s later to %s (exchange %s, key %s)",
		tr.Ladder.Name, topology.FormatDelay(tr.Delay), tr.Target, tr.Exchange, tr.Key)}, nil
}

// ReplayRequest is a replay as an operator asks for it, from rungs replay
// or the console's dialog (see Replay).
type ReplayRequest struct {
	Vhost  string
	Source string
	To     ReplayTo
	// Park, if set, takes unroutable messages instead of the source.
	Park string
	// Limit is the most messages to move; 0 means no limit (see
	// ParseLimit: the one spelling of "no limit").
	Limit int
	// Rate caps messages a second (topology.ParseRate); 0: no cap.
	Rate float64
	// Where keeps on the source every message whose headers do not match
	// all of these HEADER=VALUE terms (see Where).
	Where []string
	// Window and MaxHeld tune the Move (broker.MoveOptions); 0: defaults.
	Window, MaxHeld int
	// DryRun asks for a preview: the plan carries the peek gate's
	// request, and read-only mode allows it. ReadOnly refuses any other
	// replay.
	DryRun, ReadOnly bool
	// Scope is what the front end already read to check the request
	// against (the console's snapshot, with the queues it looked up):
	// Replay then reads nothing. Unreadable says why a front end without
	// it has no reader either.
	Scope      *BrokerView
	Unreadable error
}

// ReplayPlan is a checked replay: the Move to run and how it reads
// ("replay N messages from Q " + Describe).
type ReplayPlan struct {
	Options  broker.MoveOptions
	Describe string
	// Ready is the source's depth in the scope's snapshot; -1 unknown.
	Ready int64
	// Scope is what the plan was checked against, nil when nothing was
	// read (Unchecked says why): the dry run's verdicts route through it.
	Scope     *BrokerView
	Unchecked error
	// Peek is what the peek gate weighs before a dry run peeks the source.
	Peek PeekRequest
}

// whereMaxHeld is how many filtered-out messages a --where replay may keep
// back: most of a dead-letter queue can be someone else's.
const whereMaxHeld = 10000

// Check refuses what is wrong in the request itself, before anything is
// read from the broker.
func (r ReplayRequest) Check() (broker.MoveOptions, error) {
	o := broker.MoveOptions{Source: r.Source, Park: r.Park, Limit: r.Limit, Rate: r.Rate, Window: r.Window, MaxHeld: r.MaxHeld}
	switch {
	case r.Source == "":
		return o, fieldErr("from", "name the queue to replay from")
	case r.To.Queue != "" && r.To.Queue == r.Source:
		return o, fieldErr("queue", "%s is the source queue", r.Source)
	case r.Park != "" && r.Park == r.Source:
		return o, fieldErr("park", "%s is the source queue", r.Source)
	case r.Limit < 0:
		return o, fieldErr("limit", "cannot be negative (0: no limit)")
	case r.Rate < 0:
		return o, fieldErr("rate", "cannot be negative")
	}
	if len(r.Where) > 0 {
		match, err := Where(r.Where)
		if err != nil {
			return o, err
		}
		o.Filter = func(d broker.Delivery) bool { return match(d.Headers) }
		if o.MaxHeld == 0 {
			o.MaxHeld = whereMaxHeld
		}
	}
	return o, nil
}

// Plan checks the request and, against scope (nil: unchecked), that its
// queues exist and its route delivers, and works out the Move.
func (r ReplayRequest) Plan(scope *BrokerView) (ReplayPlan, error) {
	p := ReplayPlan{Ready: -1}
	o, err := r.Check()
	if err != nil {
		return p, err
	}
	var found []topology.Found
	if scope != nil {
		q, ok := scope.Snap.Queue(r.Source)
		if !ok {
			return p, &NoQueueError{r.Source, scope.Snap.Vhost}
		}
		p.Ready = q.Stats.Ready
		if r.To.Queue != "" {
			if _, ok := scope.Snap.Queue(r.To.Queue); !ok {
				return p, &FieldError{Field: "queue", Err: &NoQueueError{r.To.Queue, scope.Snap.Vhost}}
			}
		}
		found = scope.Found
	}
	route, err := PlanReplay(r.Source, r.To, found, scope.graph())
	if err != nil {
		return p, err
	}
	o.Route = route.Router
	p.Options, p.Describe = o, route.Describe
	return p, nil
}

// LadderDelay reads the delay of a replay into a ladder, which needs one
// (a replay to a queue or back to the origin has none): as typed in the
// console's form or given as --delay. It returns a *FieldError naming
// "delay".
func LadderDelay(s string) (time.Duration, error) {
	if strings.TrimSpace(s) == "" {
		return 0, fieldErr("delay", "a replay into a ladder needs one, e.g. 5m")
	}
	d, err := topology.ParseDelay(s)
	if err != nil {
		return 0, &FieldError{Field: "delay", Err: err}
	}
	return d, nil
}

// ReplayVerdict is whether one previewed message of a replay moves, and
// where: its route and the queues it reaches, or why it stays.
type ReplayVerdict struct {
	Position   int
	MessageID  string
	Moves      bool
	Exchange   string
	RoutingKey string
	Reaches    []string
	Stays      string
}

// ReplayVerdicts says of each previewed message whether it moves: not
// when the header match (Where) filters it out or it has no route, nor,
// where the vhost was read (scope not nil), when its exchange is missing
// or binds no queue.
func ReplayVerdicts(previews []broker.MovePreview, scope *BrokerView) []ReplayVerdict {
	var out []ReplayVerdict
	for _, p := range previews {
		v := ReplayVerdict{Position: p.Message.Position, MessageID: p.Message.MessageID}
		switch {
		case p.Skipped:
			v.Stays = "filtered out by --where"
		case p.Err != nil:
			v.Stays = "no route: " + p.Err.Error()
		default:
			v.Moves, v.Exchange, v.RoutingKey = true, p.Route.Exchange, p.Route.RoutingKey
			if scope == nil {
				break
			}
			qs, _, err := scope.Graph.Route(p.Route.Exchange, p.Route.RoutingKey, p.Route.BCC...)
			switch {
			case errors.Is(err, topology.ErrUnknownExchange):
				v.Moves, v.Stays = false, fmt.Sprintf("exchange %q does not exist", p.Route.Exchange)
			case err == nil && len(qs) == 0:
				v.Moves, v.Stays = false, "unroutable: no queue is bound for "+p.Route.String()
			case err == nil:
				v.Reaches = qs
			}
		}
		out = append(out, v)
	}
	return out
}
