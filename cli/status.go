package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

func (e *env) statusCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show ladders with the depth of every rung",
		Long: `status reads the vhost through the management API, finds every ladder and
shows each rung's TTL, depth (ready / unacked), consumers and rates, then the
done, unroutable, destination and dead-letter queues, and says which rung
looks stuck and how the ladder drifted from its plan. With --ladder it shows
that ladder only. On ladders above radix 2 (15 rungs a level) the rungs that
are empty and quiet are left out unless --all; --json always lists them.
On RabbitMQ 4.3 it lists under the ladders the quorum queues with delayed
retry among those it read for them (rungs, destinations, targets) and,
without --ladder, those a delayed-retry policy names (^name$): the messages
each holds back (messages_delayed), its type, hold and what sets it. The
vhost's other queues are rungs discover --delays' (docs/delays.md).`,
		Example: `  rungs status
  rungs status --ladder jobs --all
  rungs status --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.runStatus(cmd.Context(), e.opts.ladder.named(), all)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "list every rung, idle ones too")
	return cmd
}

func (e *env) runStatus(ctx context.Context, only string, all bool) error {
	insp, err := e.clients().reader()
	if err != nil {
		return err
	}
	rep, bridges, err := ops.Status(ctx, insp, ops.StatusRequest{Vhost: e.vhost(), Ladder: only}, ops.StatusReads{
		Note: e.view().stallNote, Unrouted: e.readUnrouted, Retry: e.readRetry, Bridges: e.readBridges,
	})
	if err != nil {
		return err
	}
	v := e.view()
	return v.emit(toJSONStatusReport(rep, bridges), ui.StatusText(rep, bridges, e.vhost(), all, v.width()))
}

// readRetry reads what RabbitMQ 4.3's delayed retry holds in the queues
// status read for its ladders, qs, and with beside (no --ladder) in the
// queues a delayed-retry policy names (ops.ReadRetryBeside): nothing, and
// no request, before 4.3. It walks no listing of the vhost, so what it
// costs follows the ladders, as status' own read does (docs/delays.md);
// the vhost's inventory, discover --delays, reads every queue. A failed
// read is said on stderr and leaves the ladders shown: it is beside
// them, not part of them.
func (e *env) readRetry(ctx context.Context, qs []topology.Queue, beside bool) health.RetryHold {
	m, err := e.clients().management()
	if err != nil {
		return health.RetryHold{}
	}
	cctx, cancel := context.WithTimeout(ctx, e.clients().cfg.Timeout)
	defer cancel()
	version := func() (topology.Version, error) { return e.clients().brokerVersion(ctx) }
	h, err := ops.ReadRetryBeside(cctx, m, version, e.vhost(), qs, beside)
	if err != nil {
		fmt.Fprintf(e.Err, "cannot read the queues under delayed retry: %v\n", err)
		return health.RetryHold{}
	}
	return h
}

// jsonQueue is a rung or terminal in status --json (ui.JSONQueue).
type jsonQueue = ui.JSONQueue

// toJSONStatus is the ladders of status --json, each ladder and its
// drift shaped as plan and apply shape them.
func toJSONStatus(ls []health.LadderReport) any {
	return ui.StatusJSON(ls, func(l topology.Ladder) any { return toJSONLadder(l) }, func(ds []topology.Drift) any { return toJSONDrift(ds) })
}

// printBridges adds a line per bridge of the vhost (rungs bridge): its
// intake's depth and lag, what is due and not yet out, what it parked.
// A bridge is not a ladder, so a failed read is a warning, not an error.
func (e *env) printBridges(ctx context.Context) {
	e.view().printBridgeLines(e.readBridges(ctx))
}

// printBridgeLines writes ui.BridgeLinesText.
func (v view) printBridgeLines(bs []topology.Bridge) {
	fmt.Fprint(v.Out, ui.BridgeLinesText(bs))
}

// readBridges reads the vhost's bridges; a failed read is a warning on
// stderr and none, as they are beside the ladders, not part of them.
func (e *env) readBridges(ctx context.Context) []topology.Bridge {
	m, err := e.clients().management()
	if err != nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	bs, err := ops.ReadBridges(cctx, m, e.vhost(), ops.ReachScoped)
	if err != nil {
		fmt.Fprintln(e.Err, "rungs: warning: "+oneLine(broker.Redact(fmt.Sprintf("could not read the bridges: %v", err))))
		return nil
	}
	return bs
}

// toJSONStatusReport is status --json (ui.StatusReportJSON).
func toJSONStatusReport(rep health.Report, bridges []topology.Bridge) map[string]any {
	return ui.StatusReportJSON(toJSONStatus(rep.Ladders), rep, bridges)
}

// jsonBridge is a bridge in --json (ui.JSONBridge).
type jsonBridge = ui.JSONBridge

func toJSONBridges(bs []topology.Bridge) []jsonBridge { return ui.BridgesJSON(bs) }
