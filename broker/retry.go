package broker

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"

	"github.com/rungs-dev/rungs/topology"
)

// retryListColumns are what finds the candidates for delayed retry among
// a vhost's queues: a queue's type, its arguments (x-delayed-retry-*) and
// the policy keys in force (delayed-retry-*). The listing is asked with
// disable_stats, so the broker does not gather each queue's statistics:
// only the candidates' are read, one request each.
const retryListColumns = "name,type,arguments,policy,operator_policy,effective_policy_definition"

// retryDetailColumns are the statistics of one candidate.
const retryDetailColumns = "name,type,arguments,messages_delayed,messages_ready,messages_unacknowledged,consumers,delivery_limit"

type apiRetryQueue struct {
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	Arguments map[string]any `json:"arguments"`
	// Policy and OperatorPolicy name the policies in force; Effective is
	// their merged definition, as the broker applies it.
	Policy         *string        `json:"policy"`
	OperatorPolicy *string        `json:"operator_policy"`
	Effective      map[string]any `json:"effective_policy_definition"`
}

type apiRetryStats struct {
	Delayed       *int64 `json:"messages_delayed"`
	Ready         int64  `json:"messages_ready"`
	Unacked       int64  `json:"messages_unacknowledged"`
	Consumers     int64  `json:"consumers"`
	DeliveryLimit any    `json:"delivery_limit"`
}

// RetryQueues reads every quorum queue of vhost under delayed retry, with
// the messages it holds back (messages_delayed) and its settings, for a
// broker of release v: RetryCandidates, then RetryStats. Before 4.3 no
// release has delayed retry (the arguments are accepted and ignored, the
// policy keys refused), so it reads nothing and returns none.
func (m *Management) RetryQueues(ctx context.Context, vhost string, v topology.Version) ([]topology.RetryQueue, error) {
	qs, err := m.RetryCandidates(ctx, vhost, v)
	if err != nil || len(qs) == 0 {
		return qs, err
	}
	return m.RetryStats(ctx, vhost, qs)
}

// RetryCandidates finds the quorum queues of vhost under delayed retry,
// with their settings and no statistics: the policies (two requests) and
// the vhost's queues without their statistics in six columns, 500 a page
// (disable_stats: the broker skips gathering each queue's figures, the
// costly part of a listing). A candidate is a queue whose arguments set
// delayed retry, or to which a policy that sets it applies. Before 4.3 it
// reads nothing.
func (m *Management) RetryCandidates(ctx context.Context, vhost string, v topology.Version) ([]topology.RetryQueue, error) {
	if !v.QuorumDelayedRetry() {
		return nil, nil
	}
	ps, err := m.Policies(ctx, vhost)
	if err != nil {
		return nil, err
	}
	qs, err := listPagedQuery[apiRetryQueue](ctx, m, "queues/"+url.PathEscape(vhost), retryListColumns, url.Values{"disable_stats": {"true"}})
	if err != nil {
		return nil, fmt.Errorf("list the queues of vhost %q: %w", vhost, m.accessError(ctx, vhost, err))
	}
	var out []topology.RetryQueue
	for _, aq := range qs {
		if rq, ok := retryCandidate(aq, ps, v); ok {
			out = append(out, rq)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// RetryStats reads the statistics of each candidate, one request each: a
// queue's own page has messages_delayed on every 4.3 release, where a
// listing may not. A queue deleted since it was found is left out.
func (m *Management) RetryStats(ctx context.Context, vhost string, qs []topology.RetryQueue) ([]topology.RetryQueue, error) {
	out := make([]topology.RetryQueue, 0, len(qs))
	for _, rq := range qs {
		var st apiRetryStats
		err := m.get(ctx, "queues/"+url.PathEscape(vhost)+"/"+url.PathEscape(rq.Name), url.Values{"columns": {retryDetailColumns}}, &st)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read queue %s: %w", rq.Name, err)
		}
		rq.Delayed, rq.Reported = 0, false
		if st.Delayed != nil {
			rq.Delayed, rq.Reported = *st.Delayed, true
		}
		rq.Ready, rq.Unacked, rq.Consumers = st.Ready, st.Unacked, st.Consumers
		rq.DeliveryLimit, rq.LimitKnown = reportedLimit(st.DeliveryLimit)
		out = append(out, rq)
	}
	return out, nil
}

// retryCandidate reads a listed queue's delayed retry: from its arguments,
// then from the policies that apply (as the broker names them where it
// does, else by matching the policies' patterns). A classic or stream
// queue has none: only quorum queues hold messages back.
func retryCandidate(aq apiRetryQueue, ps Policies, v topology.Version) (topology.RetryQueue, bool) {
	if aq.Type != "quorum" {
		return topology.RetryQueue{}, false
	}
	q := topology.Queue{Name: aq.Name, Args: mapArgs(aq.Arguments), Stats: topology.QueueStats{Type: aq.Type}}
	named := func(ptr *string, list []Policy) []Policy {
		if ptr == nil || *ptr == "" {
			return nil
		}
		for _, p := range list {
			if p.Name == *ptr {
				return []Policy{p}
			}
		}
		return nil
	}
	// The broker says which policy applies; ask Applying only when it did
	// not name one that was listed (a policy changed in between).
	use := Policies{Policies: named(aq.Policy, ps.Policies), Operator: named(aq.OperatorPolicy, ps.Operator)}
	if aq.Policy == nil && aq.OperatorPolicy == nil {
		use = ps
	}
	ds := DelayedRetries(q, use)
	if len(ds) == 0 {
		return topology.RetryQueue{}, false
	}
	d := ds[0]
	rq := topology.RetryQueue{Name: aq.Name, Type: d.Type, Min: d.Min, Max: d.Max, Source: d.Source, Policy: d.Name}
	rq.Ignored = d.Source != "argument" && !v.QuorumDelayedRetryPolicy()
	return rq, true
}
