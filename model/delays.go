package model

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// delaysMsg carries what the inventory of the vhost's delays is taken
// from; the list takes it against the ladders it shows.
type delaysMsg struct {
	snap    topology.Snapshot
	delayed map[string]int64
}

// fetchDelays reads the vhost's delays outside ladders once: the read
// lists every queue of the vhost (see ops.Delays), so the refresh loop
// never repeats it. It is nil for an inspector that cannot (a test's
// fake), and a failed read shows nothing: the delays are a side note to
// the ladders.
func fetchDelays(insp broker.Inspector, vhost string, timeout time.Duration) tea.Cmd {
	r, ok := insp.(ops.DelayReader)
	if !ok {
		return nil
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		snap, delayed, err := r.DelaySnapshot(ctx, vhost)
		if err != nil {
			return nil
		}
		return delaysMsg{snap, delayed}
	}
}

// capacityMsg carries the drain capacities saved on the broker (rungs
// bench --drain --save), from which the publish form says how late a
// burst will arrive.
type capacityMsg map[string]broker.DrainCapacity

// fetchCapacity reads them once: they change only when bench runs. Nil for
// an inspector that cannot, and a failed read (none saved, a user without
// the administrator tag) shows nothing.
func fetchCapacity(insp broker.Inspector, timeout time.Duration) tea.Cmd {
	r, ok := insp.(ops.CapacityReader)
	if !ok {
		return nil
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		caps, err := r.DrainCapacities(ctx)
		if err != nil || len(caps) == 0 {
			return nil
		}
		return capacityMsg(caps)
	}
}
