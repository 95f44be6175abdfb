package ops

import (
	"context"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// Bounded bounds each management request of an observer by Timeout, as
// every other request of a one-shot command is. It is a ScopedInspector,
// checked when it compiles: a read by name it did not pass on would make
// a command about one ladder read the whole vhost.
type Bounded struct {
	Insp    ScopedInspector
	Timeout time.Duration
}

var _ ScopedInspector = Bounded{}

func (t Bounded) LadderSnapshot(ctx context.Context, sc topology.Scope) (topology.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	return t.Insp.LadderSnapshot(ctx, sc)
}

func (t Bounded) LadderStats(ctx context.Context, sc topology.Scope) ([]topology.Queue, error) {
	ctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	return t.Insp.LadderStats(ctx, sc)
}

func (t Bounded) QueueStats(ctx context.Context, vhost string, names []string) ([]topology.Queue, error) {
	ctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	return t.Insp.QueueStats(ctx, vhost, names)
}

func (t Bounded) Snapshot(ctx context.Context, vhost string) (topology.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	return t.Insp.Snapshot(ctx, vhost)
}

func (t Bounded) Stats(ctx context.Context, vhost string) ([]topology.Queue, error) {
	ctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	return t.Insp.Stats(ctx, vhost)
}

// BoundedFacts bounds each peek-facts read by Timeout.
type BoundedFacts struct {
	Facts   PeekFacter
	Timeout time.Duration
}

func (t BoundedFacts) PeekFacts(ctx context.Context, vhost string, q topology.Queue) (broker.PeekFacts, error) {
	ctx, cancel := context.WithTimeout(ctx, t.Timeout)
	defer cancel()
	return t.Facts.PeekFacts(ctx, vhost, q)
}
