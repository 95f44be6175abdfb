package topology

import "slices"

// Reading a quorum rung (a peek, a scheduled scan, a partial move) hands
// its messages back. Before RabbitMQ 4.3 every hand-back counts toward the
// queue's delivery limit, and 4.0 gave every quorum queue a default limit
// of 20: a message read once too often is dead-lettered on, which from a
// rung is early, and from the unroutable queue (no dead-letter exchange)
// is a message dropped. Nothing consumes those queues of rungs' own
// layouts but rungs itself, so apply declares them with no limit where the
// release has a default. 4.0 and 4.3 read x-delivery-limit -1 as none
// (measured on 4.0.5 and 4.3.6: 25 rejects with requeue, nothing
// dead-lettered). 3.x reads a negative limit as "dead-letter at the first
// hand-back" (measured on 3.10.8: one reject moved the message on), and
// has no default to turn off, so the argument is never declared there, nor
// where the release is unknown.
//
// A hand-back in the rung does not follow the message: after 25 peeks in
// a rung, the destination's own limit of 3 still allowed 3 redeliveries
// there (measured on 3.10.8, 4.0.5 and 4.3.6).
//
// The libraries' layouts (nsb, nsb1, celery) are declared by their
// libraries too, with arguments of their own; a queue rungs declared
// differently would make the library's declaration fail, so their plans
// stay as the library has them.

// In a cluster, a quorum queue's leader does the queue's work (every
// expiry and dead-lettering of a rung), and by default it is placed on the
// node the declaring client is connected to: a ladder applied through one
// node leads from that node alone. x-queue-leader-locator "balanced" places
// each new queue's leader on the node that leads the fewest (a random node
// beyond 1,000 queues). Measured on 3.10.8, 4.0.5 and 4.3.6: each accepts
// the argument, and each refuses to declare an existing queue again with
// it added, removed or changed (PRECONDITION_FAILED), so a queue keeps what
// it was created with and neither way is drift.

const (
	deliveryLimitArg = "x-delivery-limit"
	// noDeliveryLimit is the x-delivery-limit that 4.0 on read as none.
	noDeliveryLimit  = int64(-1)
	leaderLocatorArg = "x-queue-leader-locator"
	balancedLeaders  = "balanced"
)

// releaseArgs are the arguments ForRelease may add, with their values.
var releaseArgs = map[string]any{deliveryLimitArg: noDeliveryLimit, leaderLocatorArg: balancedLeaders}

// ForRelease is the plan as apply declares it on release v, for a quorum
// ladder of rungs' own layouts: every queue gets x-queue-leader-locator
// balanced (3.10 on), and where the release gives quorum queues a default
// delivery limit (4.0 on), every rung and the unroutable queue get
// x-delivery-limit -1. Any other plan, or an unknown release, is returned
// as is.
func (p Plan) ForRelease(v Version) Plan {
	l := p.Ladder
	if !l.ReleaseDependent() || !v.AtLeast(3, 10, 0) {
		return p
	}
	qs := make([]Queue, len(p.Queues))
	copy(qs, p.Queues)
	for i, q := range qs {
		if q.Args["x-queue-type"] != string(Quorum) {
			continue
		}
		a := make(Args, len(q.Args)+2)
		for k, v := range q.Args {
			a[k] = v
		}
		a[leaderLocatorArg] = balancedLeaders
		if role, _, ok := l.QueueRole(q.Name); ok && (role == RoleRung || role == RoleUnroutable) && v.QuorumDefaultDeliveryLimit() > 0 {
			a[deliveryLimitArg] = noDeliveryLimit
		}
		qs[i].Args = a
	}
	p.Queues = qs
	return p
}

// ownLayout reports whether rungs alone declares a layout's queues.
func ownLayout(name string) bool {
	return name == "" || slices.Contains(ownLayouts, name)
}

// ownLayouts are the layouts rungs declares as it likes; the others are
// declared as their libraries do.
var ownLayouts = []string{"direct", "prefix", "suffix"}

// releaseQueueArg reports whether the difference in key between a plan's
// queue (want) and the broker's (got) is only whether one of ForRelease's
// arguments was declared: a ladder applied by a rungs before this one, or
// on 3.x and upgraded, lacks it; one applied on this release has it where
// a plan made without the release lacks it. Neither is drift, and apply
// keeps what the queue has: the broker refuses to declare it again with
// the argument added or removed.
func releaseQueueArg(want, got Args, key string) bool {
	value, ours := releaseArgs[key]
	if !ours || want["x-queue-type"] != string(Quorum) {
		return false
	}
	w, wok := want[key]
	g, gok := got[key]
	if wok == gok {
		return false
	}
	if wok {
		return NormalizeArg(w) == value
	}
	return NormalizeArg(g) == value
}

// ReleaseDependent reports whether the ladder's plan depends on the
// broker's release (ForRelease changes it on some).
func (l Ladder) ReleaseDependent() bool {
	return l.QueueType == Quorum && ownLayout(l.Layout)
}

// KeptDefaultLimit lists the queues for which p (a ForRelease plan) turns
// the default delivery limit off but which exist in s without that:
// declared by an earlier rungs, or before an upgrade from 3.x. Apply keeps
// them as they are (KeepingLegacyArgs).
func (p Plan) KeptDefaultLimit(s Snapshot) []string {
	var out []string
	for _, q := range p.Queues {
		if NormalizeArg(q.Args[deliveryLimitArg]) != noDeliveryLimit {
			continue
		}
		if got, ok := s.Queue(q.Name); ok && releaseQueueArg(q.Args, got.Args, deliveryLimitArg) {
			out = append(out, q.Name)
		}
	}
	return out
}
