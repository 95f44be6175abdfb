package ops

import (
	"context"

	"github.com/rungs-dev/rungs/topology"
)

// BridgeReader reads the queues of a vhost's bridges in one filtered
// listing; *broker.Management implements it.
type BridgeReader interface {
	BridgeStats(ctx context.Context, vhost string) ([]topology.Queue, error)
}

// ReadBridges reads the bridges (rungs bridge) of a vhost: their intake,
// due and parked queues with statistics, through insp's filtered listing
// when it has one, else from the vhost's snapshot (a test's fake).
func ReadBridges(ctx context.Context, insp Inspector, vhost string) ([]topology.Bridge, error) {
	if br, ok := insp.(BridgeReader); ok {
		qs, err := br.BridgeStats(ctx, vhost)
		if err != nil {
			return nil, err
		}
		return topology.DiscoverBridges(topology.Snapshot{Vhost: vhost, Queues: qs}), nil
	}
	snap, err := insp.Snapshot(ctx, vhost)
	if err != nil {
		return nil, err
	}
	return topology.DiscoverBridges(snap), nil
}
