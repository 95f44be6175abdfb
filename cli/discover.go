package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

func (e *env) discoverCommand() *cobra.Command {
	var allVhosts, delays bool
	cmd := &cobra.Command{
		Use:   "discover",
		Short: "Find every ladder on the broker, of every layout",
		Long: `discover reads the vhost (or every vhost) through the management API and
recognises ladders by their rung queues: rungs' own direct and prefix ladders, suffix ladders
from the binary-ladder Terraform module, NServiceBus' delay infrastructure (v2 and v1)
and Celery's native delayed delivery. It
infers each ladder's unit, levels, radix and queue type, and counts its
drift from the plan those parameters imply.`,
		Example: `  rungs discover
  rungs discover --all-vhosts --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.runDiscover(cmd.Context(), allVhosts, delays)
		},
	}
	cmd.Flags().BoolVar(&allVhosts, "all-vhosts", false, "look in every vhost")
	cmd.Flags().BoolVar(&delays, "delays", false, "also list every delay outside ladders: TTL queues and retry tiers by application, delayed-message plugin exchanges (lists every queue of the vhost; see docs/delays.md)")
	return cmd
}

func (e *env) runDiscover(ctx context.Context, allVhosts, delays bool) error {
	m, err := e.clients().management()
	if err != nil {
		return err
	}
	req := ops.DiscoverRequest{Vhost: e.vhost(), AllVhosts: allVhosts}
	vhosts := req.Vhosts()
	cctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	d, err := m.DiscoverLadders(cctx, vhosts)
	cancel()
	if err != nil {
		return err
	}
	warning, err := req.Hidden(d.HiddenError())
	if err != nil {
		return err
	}
	if warning != nil {
		fmt.Fprintf(e.Err, "rungs: %v\n", warning)
	}
	states, err := e.discoveredStates(ctx, ops.Bounded{Insp: m, Timeout: e.opts.timeout}, d)
	if err != nil {
		return err
	}
	var invs []topology.Inventory
	if delays {
		if invs, err = ops.DelaysIn(ctx, m, ops.DelaysRequest{Vhosts: vhosts, Hidden: d.Hidden, Found: d.Found, Timeout: e.opts.timeout}); err != nil {
			return err
		}
	}
	if e.opts.json {
		// As the text: the ladders, the bridges of one vhost, and with
		// --delays every delay outside ladders.
		out := map[string]any{"ladders": toJSONStatus(states)}
		if !allVhosts {
			out["bridges"] = toJSONBridges(e.readBridges(ctx))
		}
		if delays {
			out["delays"] = toJSONDelays(invs)
		}
		return writeJSON(e.Out, out)
	}
	defer e.view().printDelays(invs)
	if !allVhosts {
		// A bridge's queues are no ladder's; they are listed by name
		// pattern, one filtered request.
		defer e.printBridges(ctx)
	}
	fmt.Fprint(e.Out, ui.DiscoveredText(states, req.Where(m.User())))
	return nil
}

// discoveredStates judges each vhost's ladders. The discovery's snapshot
// of a vhost's ladders is the observer's first reading, as if it had read
// it itself: no request per vhost unless a rung holds expired messages
// and its stall must be watched.
func (e *env) discoveredStates(ctx context.Context, insp ops.Bounded, d broker.Discovery) ([]health.LadderReport, error) {
	var states []health.LadderReport
	for _, scope := range ops.ScopesByVhost(d.Found) {
		snap := d.Snapshots[scope.Vhost]
		o, _ := ops.NewObserver(scope).Observe(ops.Reading{Read: ops.Read{Scope: scope, Snapshot: true}, Snap: snap, Queues: snap.Queues, At: time.Now()})
		o, err := watchStalls(ctx, e.view(), insp, o)
		if err != nil {
			return nil, err
		}
		states = append(states, o.Report(o.At()).Ladders...)
	}
	return states, nil
}
