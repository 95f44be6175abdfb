package topology

import (
	"fmt"
	"sort"
	"time"
)

// RetryQueue is a quorum queue under RabbitMQ 4.3's delayed retry: the
// broker holds a message handed back to it (by basic.nack or basic.reject
// with requeue, or by a consumer that left) for Min to Max before it is
// ready again, and counts it as messages_delayed meanwhile. Such a message
// is in none of ready or unacked: a queue that shows 0 there may still hold
// thousands. Any quorum queue of a vhost may have it, not only a ladder's.
type RetryQueue struct {
	Name string
	// Type is what the broker delays: all, failed (rejected, or the
	// consumer gone) or returned (nacked).
	Type string
	// Min and Max bound the hold; Max is 0 when unset.
	Min, Max time.Duration
	// Source is what sets it: "argument" (x-delayed-retry-*), "policy" or
	// "operator policy", the policy named Policy. Where several do, the
	// first in that order.
	Source, Policy string
	// Ignored is set where the release does not honour the source: RabbitMQ
	// 4.3.0 refuses and ignores the policy keys (rabbitmq-server #16395,
	// fixed in 4.3.1), so a queue it lists for a policy holds nothing back.
	Ignored bool
	// Delayed is messages_delayed, Reported false where the broker gave no
	// figure for the queue.
	Delayed  int64
	Reported bool
	// Ready and Unacked are the queue's other messages, to put the delayed
	// ones beside.
	Ready, Unacked int64
	// DeliveryLimit is the limit the broker reports (0: none, or unknown
	// when LimitKnown is false).
	DeliveryLimit int
	LimitKnown    bool
	Consumers     int64
}

// SetBy names the source, e.g. "policy slow" or "argument".
func (q RetryQueue) SetBy() string {
	if q.Source == "argument" || q.Policy == "" {
		return q.Source
	}
	return q.Source + " " + q.Policy
}

// Hold is the hold in one phrase: "2s–4s", or "2s" without a maximum
// (the broker then holds for the minimum: 4.3.6 reports max = min).
func (q RetryQueue) Hold() string {
	if q.Max <= q.Min {
		return FormatSpan(q.Min)
	}
	return FormatSpan(q.Min) + "–" + FormatSpan(q.Max)
}

// Settings is the queue's delayed retry in one phrase: "type all, 2s–4s,
// set by policy slow".
func (q RetryQueue) Settings() string {
	s := fmt.Sprintf("type %s, %s, set by %s", q.Type, q.Hold(), q.SetBy())
	if q.Ignored {
		s += " (ignored by this release)"
	}
	return s
}

// RetryHeld sums what delayed retry holds across queues: messages and the
// queues that hold any. Ignored sources count: the broker's figure is what
// it holds, whatever sets it.
func RetryHeld(qs []RetryQueue) (messages int64, holding int) {
	for _, q := range qs {
		messages += q.Delayed
		if q.Delayed > 0 {
			holding++
		}
	}
	return messages, holding
}

// SortRetry orders queues by messages held, most first, then by name, so
// that the ones a storm sits in come first.
func SortRetry(qs []RetryQueue) {
	sort.SliceStable(qs, func(i, j int) bool {
		if qs[i].Delayed != qs[j].Delayed {
			return qs[i].Delayed > qs[j].Delayed
		}
		return qs[i].Name < qs[j].Name
	})
}
