package ops

import (
	"context"

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

// ReadRetry reads what delayed retry holds in vhost on release v. Before
// 4.3 it asks nothing (no release has delayed retry) and the hold is
// unread. From 4.3 its cost is a listing of the vhost's queues without
// their statistics and one request per queue that has delayed retry: it
// is status', discover --delays', doctor's and each scrape's, never the
// console's refresh loop.
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
