package ops

import (
	"context"
	"errors"
	"slices"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// RetryReader reads the quorum queues of a vhost under RabbitMQ 4.3's
// delayed retry (broker.Management.RetryQueues); *broker.Management is one.
type RetryReader interface {
	RetryQueues(ctx context.Context, vhost string, v topology.Version) ([]topology.RetryQueue, error)
}

var _ RetryReader = (*broker.Management)(nil)

// ReadRetry reads what delayed retry holds in every quorum queue of vhost
// on release v, for a reader that shows the whole vhost's and holds no
// listing of every queue (the console's delayed-retry view). Status reads
// beside its ladders instead (ReadRetryBeside), the exporter keeps its
// candidates between scrapes. Before 4.3 it
// asks nothing (no release has delayed retry) and the hold is unread.
// From 4.3 its cost is two listings of the vhost's queues sorted on the
// delayed-retry keys, without statistics, and one request per queue that
// has delayed retry; the sort walks every queue of the vhost
// (docs/delays.md). A reader that holds such a listing (discover
// --delays, doctor) uses ReadRetryListed, which walks nothing again. Never
// the console's refresh loop.
func ReadRetry(ctx context.Context, r RetryReader, vhost string, v topology.Version) (health.RetryHold, error) {
	if !v.QuorumDelayedRetry() {
		return health.RetryHold{}, nil
	}
	qs, err := r.RetryQueues(ctx, vhost, v)
	if err != nil {
		return health.RetryHold{}, err
	}
	return health.NewRetryHold(qs, true), nil
}

// ListedRetryReader reads delayed retry beside a listing of the vhost's
// queues the caller holds; *broker.Management is one.
type ListedRetryReader interface {
	Policies(ctx context.Context, vhost string) (topology.Policies, error)
	RetryStats(ctx context.Context, vhost string, qs []topology.RetryQueue) ([]topology.RetryQueue, error)
}

var _ ListedRetryReader = (*broker.Management)(nil)

// ReadRetryListed reads what delayed retry holds in vhost on release v
// from qs, a listing of every queue of the vhost that the caller already
// holds with the policy columns (broker.Management.DelaySnapshot's, as
// discover --delays and doctor read it): the candidates come from it
// (topology.RetryListed), so it asks only the policies (two requests) and
// the own page of a candidate whose listing did not carry
// messages_delayed (none on 4.3.6). Beside 10,000 queues it asks what it
// asks alone. A user who may not list policies still sees what the
// listing names. Before 4.3 it asks nothing.
func ReadRetryListed(ctx context.Context, r ListedRetryReader, vhost string, v topology.Version, qs []topology.Queue) (health.RetryHold, error) {
	if !v.QuorumDelayedRetry() {
		return health.RetryHold{}, nil
	}
	ps, err := r.Policies(ctx, vhost)
	if err != nil && !errors.Is(err, broker.ErrUnauthorized) {
		return health.RetryHold{}, err
	}
	held, unread := topology.RetryListed(qs, ps, v)
	if len(unread) > 0 {
		read, err := r.RetryStats(ctx, vhost, unread)
		if err != nil {
			return health.RetryHold{}, err
		}
		held = append(held, read...)
	}
	return health.NewRetryHold(held, true), nil
}

// BesideRetryReader reads delayed retry beside the ladders a caller has
// read: the policies and queues by name; *broker.Management is one.
type BesideRetryReader interface {
	Policies(ctx context.Context, vhost string) (topology.Policies, error)
	QueueStats(ctx context.Context, vhost string, names []string) ([]topology.Queue, error)
}

var _ BesideRetryReader = (*broker.Management)(nil)

// ReadRetryBeside reads what delayed retry holds in the queues status
// read for its ladders, qs (their rungs, destinations and targets, and
// the queues those dead-letter to: the work queues whose consumers reject,
// where delayed retry is usually set), and, with named, in the queues
// outside them that a policy setting delayed retry names by an anchored
// literal pattern (topology.RetryNamed). It walks no listing of the vhost:
// a ladder's reads carry each queue's type, arguments, policies and
// messages_delayed (broker ladderColumns), so a ladder queue costs nothing
// more; named adds the policies (two requests) and each named queue's own
// page, and a candidate whose read lacked messages_delayed has its own
// page read. Beside 10,000 other queues it asks what it asks alone. A
// queue outside both is not seen: the hold's Scope says so, and the
// vhost's inventory (discover --delays) reads it.
//
// version is asked only where delayed retry may be: with named, or when
// qs holds a quorum queue (no other type holds a message back). Before
// 4.3 it asks nothing more and the hold is unread.
func ReadRetryBeside(ctx context.Context, r BesideRetryReader, version func() (topology.Version, error), vhost string, qs []topology.Queue, named bool) (health.RetryHold, error) {
	if !named && !slices.ContainsFunc(qs, func(q topology.Queue) bool { return q.QueueType() == topology.Quorum }) {
		return health.RetryHold{}, nil
	}
	v, err := version()
	if err != nil || !v.QuorumDelayedRetry() {
		return health.RetryHold{}, err
	}
	scope := health.RetryScope{Ladders: true, Queues: len(qs)}
	var ps topology.Policies
	if named {
		ps, err = r.Policies(ctx, vhost)
		switch {
		case errors.Is(err, broker.ErrUnauthorized):
			ps, scope.PoliciesUnread = topology.Policies{}, true
		case err != nil:
			return health.RetryHold{}, err
		}
	}
	all := reportedPolicies(qs)
	have := map[string]bool{}
	for _, q := range qs {
		have[q.Name] = true
	}
	var outside []string
	for _, n := range topology.RetryNamed(ps, v) {
		if !have[n] {
			outside = append(outside, n)
		}
	}
	if len(outside) > 0 {
		pages, err := r.QueueStats(ctx, vhost, outside)
		if err != nil {
			return health.RetryHold{}, err
		}
		for _, q := range pages {
			scope.Named = append(scope.Named, q.Name)
		}
		all = append(all, reportedPolicies(pages)...)
	}
	held, unread := topology.RetryListed(all, ps, v)
	if len(unread) > 0 {
		names := make([]string, len(unread))
		for i, rq := range unread {
			names[i] = rq.Name
		}
		pages, err := r.QueueStats(ctx, vhost, names)
		if err != nil {
			return health.RetryHold{}, err
		}
		read, still := topology.RetryListed(reportedPolicies(pages), ps, v)
		held = append(append(held, read...), still...)
	}
	h := health.NewRetryHold(held, true)
	h.Scope = scope
	return h, nil
}

// reportedPolicies are qs with the broker's word on their policies taken
// as said: a read that asked the policy columns gives a queue without a
// policy an empty definition, which is that no policy applies, not that
// the columns were not asked (where topology.RetryCandidate would match
// the policies' patterns itself).
func reportedPolicies(qs []topology.Queue) []topology.Queue {
	out := slices.Clone(qs)
	for i, q := range out {
		if q.EffectivePolicy != nil {
			out[i].PolicyReported = true
		}
	}
	return out
}

// RetryArea is doctor's area for one vhost's delayed retry.
func RetryArea(vhost string) string {
	if vhost == "/" {
		return "delayed retry"
	}
	return "delayed retry (vhost " + vhost + ")"
}

// checkRetry reports every vhost's quorum queues under delayed retry and
// the release's sharp edges (health.RetryFindings). Before 4.3 it says
// nothing: doctor did not read them, since no queue can have it.
func checkRetry(f DoctorFacts, out *Findings) {
	for _, vh := range f.Vhosts {
		if !vh.RetryRead {
			continue
		}
		area := RetryArea(vh.Vhost)
		if vh.RetryErr != nil {
			out.Add(area, FindingWarn, "cannot read the queues under delayed retry: %v", vh.RetryErr)
			continue
		}
		for _, rf := range health.RetryFindings(vh.Retry, f.Version()) {
			status := FindingInfo
			switch {
			case rf.Info:
			case rf.Severity == health.Problem:
				status = FindingProblem
			default:
				status = FindingWarn
			}
			out.Add(area, status, "%s", rf.Text)
		}
	}
}
