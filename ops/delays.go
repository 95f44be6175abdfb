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
	return DelayInventory(vhost, snap, delayed, found), snap, nil
}

// DelayInventory is the inventory of vhost's delays outside the ladders
// found there, taken from what a DelaySnapshot read: a front end that keeps
// the read (the console) takes it again whenever its ladders change.
func DelayInventory(vhost string, snap topology.Snapshot, delayed map[string]int64, found []topology.Found) topology.Inventory {
	var here []topology.Found
	for _, f := range found {
		if f.Ladder.Vhost == vhost {
			here = append(here, f)
		}
	}
	return topology.TakeInventory(snap, here).WithDelayed(delayed)
}
