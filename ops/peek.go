package ops

import (
	"fmt"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// PeekRequest is what the peek gate weighs: the queue (its type is in its
// arguments and stats), the vhost's ladders, the broker's version, the
// queue's delivery limit as read, and what the operator asked.
type PeekRequest struct {
	Queue   topology.Queue
	Ladders []topology.Ladder
	// Version is the broker's; the zero Version when unknown. Release
	// rules about peeking (how a delivery limit acts) are decided here.
	Version topology.Version
	// Limit is the queue's delivery limit and LimitKnown whether it could
	// be read (see broker.Management.DeliveryLimit); a classic queue has
	// none.
	Limit      int
	LimitKnown bool
	// DelayedRetries are the sources of delayed retry on the queue (4.3+;
	// see broker.PeekFacts).
	DelayedRetries []topology.DelayedRetry
	// Unchecked, when set, says why the queue could not be looked up (the
	// management API's error): its type is unknown.
	Unchecked error
	Force     bool
	ReadOnly  bool
}

// PeekVerdict is the gate's answer.
type PeekVerdict int

// Verdicts, from "go ahead" to "refused".
const (
	// PeekOK: peek. PeekGate.Note, if set, says what the peek changes.
	PeekOK PeekVerdict = iota
	// PeekNeedsForce: peeking can dead-letter messages early; refuse
	// unless the operator insists.
	PeekNeedsForce
	// PeekReadOnly: peeking changes what consumers see; read-only mode
	// refuses it even with force.
	PeekReadOnly
)

// PeekGate is the one decision whether a peek may go ahead, for rungs peek
// and the console.
type PeekGate struct {
	Verdict PeekVerdict
	Risk    broker.PeekRisk
	// Checked says the queue was looked up (its type is known).
	Checked bool
	// Why is the risk in words: why force is needed or read-only refuses.
	Why string
	// Note is said when a peek goes ahead but changes the broker, or was
	// not checked.
	Note string
}

// GatePeek weighs a peek: the risk broker.AssessPeek describes, then
// read-only mode, then force, in that order, so that read-only always
// wins and force only ever overrides the risk.
func GatePeek(req PeekRequest) PeekGate {
	name := req.Queue.Name
	if req.Unchecked != nil {
		// Without the management API the queue type is unknown, and a
		// quorum rung must not be peeked by accident.
		g := PeekGate{Risk: broker.PeekRisk{Queue: name}}
		switch {
		case !req.Force:
			g.Verdict, g.Why = PeekNeedsForce, fmt.Sprintf("cannot tell whether %s is a quorum queue, where peeking raises delivery counts (management API: %v)", name, req.Unchecked)
		case req.ReadOnly:
			g.Verdict, g.Why = PeekReadOnly, "the queue type is unknown and quorum queues count peeks as deliveries"
		default:
			g.Note = fmt.Sprintf("queue type not checked (management API: %v)", req.Unchecked)
		}
		return g
	}
	limit, known := req.Limit, req.LimitKnown
	if req.Queue.QueueType() != topology.Quorum {
		// A classic queue has no delivery limit to read.
		limit, known = 0, true
	}
	facts := broker.PeekFacts{Version: req.Version, Limit: limit, LimitKnown: known, DelayedRetries: req.DelayedRetries}
	g := PeekGate{Risk: broker.AssessPeek(req.Queue, req.Ladders, facts), Checked: true}
	g.Why = g.Risk.Why
	switch {
	case req.ReadOnly && g.Risk.ChangesBroker:
		g.Verdict = PeekReadOnly
	case g.Risk.NeedsForce && !req.Force:
		g.Verdict = PeekNeedsForce
	case g.Risk.ChangesBroker && !g.Risk.NeedsForce:
		g.Note = g.Risk.Why
	}
	return g
}

// PeekStories reads the story of each peeked message, once, for every
// view of the peek to draw.
func PeekStories(res broker.PeekResult, ladders []topology.Ladder) []topology.Story {
	out := make([]topology.Story, len(res.Messages))
	for i, m := range res.Messages {
		out[i] = topology.StoryOf(m.Headers, m.Exchange, m.RoutingKey, ladders)
	}
	return out
}
