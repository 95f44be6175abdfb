package ops

import (
	"context"
	"slices"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// VhostDelaysReader reads the delay inventories of several vhosts: which
// vhosts there are, the broker's release, each vhost's delay queues and,
// from 4.3, what its quorum queues hold back (*broker.Management).
type VhostDelaysReader interface {
	DelayReader
	ListedRetryReader
	Vhosts(ctx context.Context) ([]string, error)
	Version(ctx context.Context) (topology.Version, error)
}

var _ VhostDelaysReader = (*broker.Management)(nil)

// DelaysRequest names the vhosts whose delays an inventory takes.
type DelaysRequest struct {
	// Vhosts are the vhosts looked in; nil: every vhost the broker lists
	// but Hidden (those the user may not read).
	Vhosts, Hidden []string
	// Found are the ladders already discovered, whose rungs are not
	// delays.
	Found []topology.Found
	// Timeout bounds each request; 0: the context's.
	Timeout time.Duration
}

// DelaysIn takes the inventory of delays outside ladders in each vhost
// the request names (Delays), with the broker's own delay on hand-back
// (delayed retry) on the releases that have it; nothing of it is read
// before 4.3. It lists every queue of those vhosts, paged, which is why
// discover does it only when asked.
func DelaysIn(ctx context.Context, r VhostDelaysReader, req DelaysRequest) ([]topology.Inventory, error) {
	vhosts := req.Vhosts
	if vhosts == nil {
		all, err := bounded(ctx, req.Timeout, r.Vhosts)
		if err != nil {
			return nil, err
		}
		vhosts = slices.DeleteFunc(all, func(v string) bool { return slices.Contains(req.Hidden, v) })
	}
	ver, err := bounded(ctx, req.Timeout, r.Version)
	if err != nil {
		return nil, err
	}
	var out []topology.Inventory
	for _, v := range vhosts {
		var snap topology.Snapshot
		inv, err := bounded(ctx, req.Timeout, func(ctx context.Context) (topology.Inventory, error) {
			inv, s, err := Delays(ctx, r, v, req.Found)
			snap = s
			return inv, err
		})
		if err != nil {
			return nil, err
		}
		// The inventory's listing holds every queue of the vhost, so the
		// delayed-retry candidates come from it, not from a second walk.
		if ver.QuorumDelayedRetry() {
			h, err := bounded(ctx, req.Timeout, func(ctx context.Context) (health.RetryHold, error) {
				return ReadRetryListed(ctx, r, v, ver, snap.Queues)
			})
			if err != nil {
				return nil, err
			}
			inv = inv.WithRetry(h.Queues)
		}
		out = append(out, inv)
	}
	return out, nil
}

// bounded runs one request within timeout (0: the context's own).
func bounded[T any](ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) (T, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return f(ctx)
}
