package ops

import (
	"context"
	"fmt"

	"github.com/rungs-dev/rungs/topology"
)

// QueueReader reads queues by name (broker.LadderInspector.QueueStats,
// which *broker.Management implements): one small request each, whatever
// else the vhost holds.
type QueueReader interface {
	QueueStats(ctx context.Context, vhost string, names []string) ([]topology.Queue, error)
}

// LookupQueue reads one queue of a vhost by name: what an operation
// checks when it names a queue the observer's scope does not hold (the
// console reads only the ladders it shows, so a replay's destination or a
// peek of another application's queue is not in its snapshot). found is
// false when the vhost has no such queue. An inspector that cannot read
// a queue by name reads the vhost's statistics instead.
func LookupQueue(ctx context.Context, insp Inspector, vhost, name string) (q topology.Queue, found bool, err error) {
	var qs []topology.Queue
	if qr, ok := insp.(QueueReader); ok {
		qs, err = qr.QueueStats(ctx, vhost, []string{name})
	} else {
		qs, err = insp.Stats(ctx, vhost)
	}
	if err != nil {
		return q, false, fmt.Errorf("look up queue %s: %w", name, err)
	}
	q, found = topology.Snapshot{Vhost: vhost, Queues: qs}.Queue(name)
	return q, found, nil
}

// WithQueue is snap with q in it, replacing a queue of that name: a queue
// looked up by name joins what an operation checks its request against.
func WithQueue(snap topology.Snapshot, q topology.Queue) topology.Snapshot {
	qs := make([]topology.Queue, 0, len(snap.Queues)+1)
	for _, old := range snap.Queues {
		if old.Name != q.Name {
			qs = append(qs, old)
		}
	}
	snap.Queues = append(qs, q)
	return snap
}
