package topology

import (
	"fmt"
	"regexp/syntax"
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

// RetryCandidate reads a listed queue's delayed retry: from its arguments,
// then from the policies that apply (as the broker names them where the
// listing did, else by matching the policies' patterns). A classic or
// stream queue has none: only quorum queues hold messages back. The
// candidate has its settings and no statistics.
func RetryCandidate(q Queue, ps Policies, v Version) (RetryQueue, bool) {
	if q.Stats.Type != "quorum" {
		return RetryQueue{}, false
	}
	named := func(name string, list []Policy) []Policy {
		for _, p := range list {
			if name != "" && p.Name == name {
				return []Policy{p}
			}
		}
		return nil
	}
	// The broker says which policy applies; ask Applying only when it did
	// not name one that was listed (a policy changed in between).
	use := Policies{Policies: named(q.Policy, ps.Policies), Operator: named(q.OperatorPolicy, ps.Operator)}
	if !q.PolicyReported {
		use = ps
	}
	// A policy the broker names but the policies read did not hold (not
	// readable, or changed in between): its keys as the broker applies
	// them, merged with an operator policy's where both apply.
	if len(use.Policies) == 0 && len(use.Operator) == 0 && q.EffectivePolicy["delayed-retry-type"] != nil {
		switch {
		case q.Policy != "":
			use.Policies = []Policy{{Name: q.Policy, Definition: q.EffectivePolicy}}
		case q.OperatorPolicy != "":
			use.Operator = []Policy{{Name: q.OperatorPolicy, Definition: q.EffectivePolicy}}
		}
	}
	ds := DelayedRetries(q, use)
	if len(ds) == 0 {
		return RetryQueue{}, false
	}
	d := ds[0]
	rq := RetryQueue{Name: q.Name, Type: d.Type, Min: d.Min, Max: d.Max, Source: d.Source, Policy: d.Name}
	rq.Ignored = d.Source != "argument" && !v.QuorumDelayedRetryPolicy()
	return rq, true
}

// RetryListed finds the quorum queues under delayed retry among qs, a
// listing of every queue of a vhost in the columns that judge it (type,
// arguments, policy, operator_policy, effective_policy_definition), and
// ps, the vhost's policies. held are those whose listing carried
// messages_delayed, with their figures; unread those it did not, which
// need their own page. Both are in the order of qs. Before 4.3 there are
// none: no release before has delayed retry.
func RetryListed(qs []Queue, ps Policies, v Version) (held, unread []RetryQueue) {
	if !v.QuorumDelayedRetry() {
		return nil, nil
	}
	for _, q := range qs {
		rq, ok := RetryCandidate(q, ps, v)
		if !ok {
			continue
		}
		if !q.Stats.DelayedReported {
			unread = append(unread, rq)
			continue
		}
		rq.Delayed, rq.Reported = q.Stats.Delayed, true
		rq.Ready, rq.Unacked, rq.Consumers = q.Stats.Ready, q.Stats.Unacked, q.Stats.Consumers
		rq.DeliveryLimit, rq.LimitKnown = q.Stats.DeliveryLimit, q.Stats.DeliveryLimitReported
		held = append(held, rq)
	}
	return held, unread
}

// RetryNamed lists the queues a policy or operator policy of ps that sets
// delayed retry names by an anchored literal pattern (^orders$, or
// ^orders\.in$), sorted and each once: the work queues such a policy is
// usually written for, which a reader can take by name without walking
// the vhost. A pattern that matches more than one name (orders.*, or one
// not anchored at both ends) names none, nor one Go's regexp cannot read,
// nor one that ignores case. Before 4.3 there are none.
func RetryNamed(ps Policies, v Version) []string {
	if !v.QuorumDelayedRetry() {
		return nil
	}
	var out []string
	for _, list := range [][]Policy{ps.Policies, ps.Operator} {
		for _, p := range list {
			if _, ok := p.Definition["delayed-retry-type"]; !ok {
				continue
			}
			if p.ApplyTo != "" && p.ApplyTo != "queues" && p.ApplyTo != "all" && p.ApplyTo != "quorum_queues" {
				continue
			}
			if name, ok := literalPattern(p.Pattern); ok {
				out = append(out, name)
			}
		}
	}
	return uniqueSorted(out)
}

// literalPattern is the one name an anchored pattern matches, if it
// matches exactly one.
func literalPattern(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	re = re.Simplify()
	if re.Op != syntax.OpConcat || len(re.Sub) != 3 || re.Sub[0].Op != syntax.OpBeginText || re.Sub[2].Op != syntax.OpEndText {
		return "", false
	}
	lit := re.Sub[1]
	if lit.Op != syntax.OpLiteral || lit.Flags&syntax.FoldCase != 0 {
		return "", false
	}
	return string(lit.Rune), true
}
