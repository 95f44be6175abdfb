package health

import (
	"fmt"

	"github.com/rungs-dev/rungs/topology"
)

// RetryHold is what RabbitMQ 4.3's delayed retry holds back in a vhost,
// across every quorum queue that has it (not only a ladder's): messages
// a consumer handed back, waiting Min to Max before they are ready again.
// They are in none of ready or unacked, so a storm judged from those alone
// misses them; a held message is not stuck and not stalled: it leaves when
// its hold ends, and no remedy applies.
type RetryHold struct {
	// Read says the vhost's queues were read for it: false before 4.3
	// (no release has delayed retry) and where a front end did not ask.
	Read   bool
	Queues []topology.RetryQueue
	// Delayed is the messages held, in Holding queues.
	Delayed int64
	Holding int
	// Scope is what the read looked at where it did not take every
	// queue of the vhost (status); zero for a read of the whole vhost.
	Scope RetryScope
}

// RetryScope is what a read of delayed retry beside the ladders looked
// at (ops.ReadRetryBeside): the queues the ladders' read held, and those
// a delayed-retry policy names, not every queue of the vhost. A queue
// outside both is not seen; the vhost's inventory (rungs discover
// --delays) sees it.
type RetryScope struct {
	// Ladders says the read took the ladders' queues, not the vhost's.
	Ladders bool
	// Queues counts the ladders' queues it looked at, quorum or not.
	Queues int
	// Named are the queues outside them that a policy setting delayed
	// retry names by an anchored literal pattern (^orders$), read by name.
	Named []string
	// PoliciesUnread says the user may not list policies, so the queues
	// a policy names were not looked for.
	PoliciesUnread bool
}

// NewRetryHold sums what the queues hold; read says they were read.
func NewRetryHold(qs []topology.RetryQueue, read bool) RetryHold {
	qs = append([]topology.RetryQueue(nil), qs...)
	topology.SortRetry(qs)
	h := RetryHold{Read: read, Queues: qs}
	h.Delayed, h.Holding = topology.RetryHeld(qs)
	return h
}

// WithRetry is the report with what delayed retry holds in its vhost.
func (r Report) WithRetry(h RetryHold) Report {
	r.Retry = h
	return r
}

// Held is one line for the count: "1200 held by delayed retry in 3
// queues", or "" when nothing is held.
func (h RetryHold) Held() string {
	if h.Delayed == 0 {
		return ""
	}
	return fmt.Sprintf("%s held by delayed retry in %s", topology.FormatCount(h.Delayed), topology.Counted(h.Holding, "queue", "queues"))
}

// RetryFinding is one judgement of a queue under delayed retry, or of the
// release itself (Queue ""), with its evidence and remedy in Text.
type RetryFinding struct {
	Queue    string
	Severity Severity
	// Info is set for a note that is neither a warning nor a problem.
	Info bool
	Text string
}

// RetryFindings judges the queues under delayed retry on release v (the
// oldest node's, whose quorum rules hold). Before 4.3 it finds nothing:
// no release before has delayed retry, and a ladder's own arguments are
// judged by the ladder's checks. The release's sharp edges, each measured
// on 4.3.6:
//
//   - nack versus reject: a basic.nack with requeue is a "return" and a
//     basic.reject a "failure" (so is a consumer that leaves with the
//     message). Type failed delays only rejects, type returned only
//     nacks; a nacked message under type failed is ready again at once.
//   - the delivery limit: from 4.3 a nack no longer counts toward
//     x-delivery-count (rabbitmq-server #15387), so a consumer that nacks
//     with requeue never reaches the limit: the message is retried for
//     ever (after each hold, or at once under type failed).
//   - policies on 4.3.0: the delayed-retry keys of a policy are refused
//     and ignored (rabbitmq-server #16394, fixed by #16395 in 4.3.1).
func RetryFindings(h RetryHold, v topology.Version) []RetryFinding {
	if !v.QuorumDelayedRetry() {
		return nil
	}
	var out []RetryFinding
	byPolicy := false
	for _, q := range h.Queues {
		if q.Source != "argument" {
			byPolicy = true
		}
		held := "none held now"
		if q.Reported && q.Delayed > 0 {
			held = fmt.Sprintf("%s held now (ready %s, unacked %s)", topology.FormatCount(q.Delayed), topology.FormatCount(q.Ready), topology.FormatCount(q.Unacked))
		}
		if q.Ignored {
			out = append(out, RetryFinding{Queue: q.Name, Severity: Warning, Text: fmt.Sprintf(
				"%s: %s sets delayed retry (type %s, %s), but RabbitMQ %s ignores delayed-retry keys in policies (rabbitmq-server #16395, fixed in 4.3.1): a message handed back is ready again at once; upgrade to 4.3.1 or later, or declare the queue with x-delayed-retry-* arguments",
				q.Name, q.SetBy(), q.Type, q.Hold(), v)})
			continue
		}
		out = append(out, RetryFinding{Queue: q.Name, Info: true, Text: fmt.Sprintf(
			"%s: delayed retry %s; %s: a message handed back waits %s before it is ready again (messages_delayed: in none of ready or unacked; not stuck, no remedy needed)",
			q.Name, q.Settings(), held, q.Hold())})
		switch q.Type {
		case "failed":
			out = append(out, RetryFinding{Queue: q.Name, Severity: Warning, Text: fmt.Sprintf(
				"%s: type failed delays basic.reject (and a consumer that leaves) only: on RabbitMQ %s a basic.nack with requeue is a return, so a consumer that nacks gets the message back at once, undelayed; use type all, or reject rather than nack",
				q.Name, v)})
		case "returned":
			out = append(out, RetryFinding{Queue: q.Name, Info: true, Text: fmt.Sprintf(
				"%s: type returned delays basic.nack with requeue only: a basic.reject is ready again at once, and counts toward the delivery limit",
				q.Name)})
		}
		// A note, not a warning: every quorum queue has a limit on 4.x (20
		// by default), and whether its consumers nack or reject is not
		// something the broker shows.
		if q.LimitKnown && q.DeliveryLimit > 0 && !v.QuorumRequeueNackCounts() {
			out = append(out, RetryFinding{Queue: q.Name, Info: true, Text: fmt.Sprintf(
				"%s: its delivery limit (%d) never fires for a consumer that nacks with requeue: from 4.3 basic.nack does not count toward x-delivery-count, basic.reject does (rabbitmq-server #15387), so a message that always fails is retried for ever; reject it (or nack without requeue, to dead-letter it) once it has failed enough",
				q.Name, q.DeliveryLimit)})
		}
	}
	switch {
	case !v.QuorumDelayedRetryPolicy():
		out = append(out, RetryFinding{Info: true, Text: fmt.Sprintf(
			"RabbitMQ %s refuses and ignores delayed-retry keys in policies (rabbitmq-server #16395, fixed in 4.3.1); only x-delayed-retry-* arguments set delayed retry here", v)})
	case byPolicy:
		out = append(out, RetryFinding{Info: true, Text: fmt.Sprintf(
			"RabbitMQ %s honours delayed-retry keys in policies (4.3.0 ignored them: rabbitmq-server #16395, fixed in 4.3.1)", v)})
	}
	if len(h.Queues) == 0 {
		out = append(out, RetryFinding{Info: true, Text: "no quorum queue has delayed retry (x-delayed-retry-* arguments or delayed-retry-* policy keys)"})
	}
	return out
}
