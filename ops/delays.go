package ops

import (
	"context"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// DelayReader reads what an inventory of a vhost's delays needs;
// *broker.Management is one.
type DelayReader interface {
	DelaySnapshot(ctx context.Context, vhost string) (topology.Snapshot, map[string]int64, error)
}

var _ DelayReader = (*broker.Management)(nil)

// Delays takes the inventory of one vhost's delays outside the ladders
// found there (topology.TakeInventory). It reads every queue of the vhost
// in a paged listing of a few columns, so a front end asks for it once
// (discover --delays, the console's list on its first reading and on a
// refresh the user asks for), never on every tick.
func Delays(ctx context.Context, r DelayReader, vhost string, found []topology.Found) (topology.Inventory, topology.Snapshot, error) {
	snap, delayed, err := r.DelaySnapshot(ctx, vhost)
	if err != nil {
		return topology.Inventory{Vhost: vhost}, snap, err
	}
	var here []topology.Found
	for _, f := range found {
		if f.Ladder.Vhost == vhost {
			here = append(here, f)
		}
	}
	return topology.TakeInventory(snap, here).WithDelayed(delayed), snap, nil
}
