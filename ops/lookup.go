package ops

import (
	"context"
	"fmt"
	"slices"

	"github.com/rungs-dev/rungs/topology"
)

// QueueReader reads queues by name (broker.LadderInspector.QueueStats,
// which *broker.Management implements): one small request each, whatever
// else the vhost holds.
type QueueReader interface {
	QueueStats(ctx context.Context, vhost string, names []string) ([]topology.Queue, error)
}

// LookupQueues reads queues of a vhost by name: what an operation checks
// when it names queues the observer's scope does not hold (the console
// reads only the ladders it shows, so a replay's destination, a peek of
// another application's queue or a purge of a ladder not on screen is not
// in its snapshot). A queue the vhost does not have is left out. It is a
// scoped read: qr must read queues by name, and never stands in the
// vhost's statistics for them.
func LookupQueues(ctx context.Context, qr QueueReader, vhost string, names []string) ([]topology.Queue, error) {
	qs, err := qr.QueueStats(ctx, vhost, names)
	if err != nil {
		what := "queue " + names[0]
		if len(names) > 1 {
			what = fmt.Sprintf("%d queues", len(names))
		}
		return nil, fmt.Errorf("look up %s: %w", what, err)
	}
	var out []topology.Queue
	for _, q := range qs {
		if slices.Contains(names, q.Name) {
			out = append(out, q)
		}
	}
	return out, nil
}

// WithQueues is snap with qs in it, replacing queues of their names:
// queues looked up by name join what an operation checks its request
// against.
func WithQueues(snap topology.Snapshot, qs ...topology.Queue) topology.Snapshot {
	out := make([]topology.Queue, 0, len(snap.Queues)+len(qs))
	for _, old := range snap.Queues {
		if !slices.ContainsFunc(qs, func(q topology.Queue) bool { return q.Name == old.Name }) {
			out = append(out, old)
		}
	}
	snap.Queues = append(out, qs...)
	return snap
}
