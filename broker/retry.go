package broker

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/rungs-dev/rungs/topology"
)

// retryListColumns are what finds the candidates for delayed retry among
// a vhost's queues: a queue's type, its arguments (x-delayed-retry-*) and
// the policy keys in force (delayed-retry-*). Only the candidates'
// statistics are read, one request each.
const retryListColumns = "name,type,arguments,policy,operator_policy,effective_policy_definition"

// retryDetailColumns are the statistics of one candidate.
const retryDetailColumns = "name,type,arguments,messages_delayed,messages_ready,messages_unacknowledged,consumers,delivery_limit"

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
// with their settings and no statistics. A candidate is a queue whose
// arguments set delayed retry, or to which a policy that sets it applies.
// The management API cannot filter on either, but it sorts on a nested
// key: the listing sorted on arguments.x-delayed-retry-type, descending,
// puts every queue that has the argument first (a string sorts after a
// missing key), so reading pages of retryPage until one holds a queue
// without it finds them all; likewise on
// effective_policy_definition.delayed-retry-type, only when a policy sets
// the key. Each listing is asked with disable_stats: the broker gathers
// no queue's figures. It still walks every queue of the vhost to sort
// them, which is the cost that grows with the vhost (docs/delays.md);
// the responses stay a few KB. It is for readers that show the whole
// vhost's and hold no listing of every queue (the exporter, the console);
// status reads beside its ladders (ops.ReadRetryBeside). One that holds it
// (discover --delays, doctor) finds the candidates there
// (topology.RetryListed) and walks nothing again. Before 4.3 it reads
// nothing.
func (m *Management) RetryCandidates(ctx context.Context, vhost string, v topology.Version) ([]topology.RetryQueue, error) {
	if !v.QuorumDelayedRetry() {
		return nil, nil
	}
	// A user without the policymaker tag may not list policies; the
	// listing still names each queue's policies and their merged keys,
	// which is enough to find and describe what they set.
	ps, err := m.Policies(ctx, vhost)
	unread := errors.Is(err, ErrUnauthorized)
	if err != nil && !unread {
		return nil, err
	}
	path := "queues/" + url.PathEscape(vhost)
	listed, err := m.sortedPrefix(ctx, path, "arguments.x-delayed-retry-type", func(q apiQueue) bool {
		_, ok := q.Arguments["x-delayed-retry-type"]
		return ok
	})
	if err != nil {
		return nil, fmt.Errorf("list the queues of vhost %q: %w", vhost, m.accessError(ctx, vhost, err))
	}
	if unread || policySetsRetry(ps) {
		byPolicy, err := m.sortedPrefix(ctx, path, "effective_policy_definition.delayed-retry-type", func(q apiQueue) bool {
			_, ok := q.Effective["delayed-retry-type"]
			return ok
		})
		if err != nil {
			return nil, fmt.Errorf("list the queues of vhost %q: %w", vhost, err)
		}
		listed = append(listed, byPolicy...)
	}
	seen := map[string]bool{}
	var out []topology.RetryQueue
	for _, q := range m.toQueues(listed) {
		if seen[q.Name] {
			continue
		}
		seen[q.Name] = true
		if rq, ok := topology.RetryCandidate(q, ps, v); ok {
			out = append(out, rq)
		}
	}
	return out, nil
}

// retryPage is how many queues a page of a sorted listing holds: most
// vhosts have fewer queues under delayed retry, so one page says all.
const retryPage = 100

// sortedPrefix reads the listing at path sorted on key, descending, page
// by page, and returns the queues before the first that has not (has
// says), which the sort puts after every queue that has it.
func (m *Management) sortedPrefix(ctx context.Context, path, key string, has func(apiQueue) bool) ([]apiQueue, error) {
	var out []apiQueue
	for page := 1; ; page++ {
		var p apiPage[apiQueue]
		q := url.Values{"page": {strconv.Itoa(page)}, "page_size": {strconv.Itoa(retryPage)}, "sort": {key}, "sort_reverse": {"true"},
			"columns": {retryListColumns}, "disable_stats": {"true"}}
		if err := m.get(ctx, path, q, &p); err != nil {
			return nil, err
		}
		for _, aq := range p.Items {
			if !has(aq) {
				return out, nil
			}
			out = append(out, aq)
		}
		if page >= p.PageCount {
			return out, nil
		}
	}
}

// policySetsRetry reports whether any policy or operator policy has the
// delayed-retry-type key: only then can a queue have delayed retry from
// one.
func policySetsRetry(ps topology.Policies) bool {
	for _, list := range [][]topology.Policy{ps.Policies, ps.Operator} {
		for _, p := range list {
			if _, ok := p.Definition["delayed-retry-type"]; ok {
				return true
			}
		}
	}
	return false
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
