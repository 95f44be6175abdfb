package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

func (e *env) traceCommand() *cobra.Command {
	var dest, key string
	cmd := &cobra.Command{
		Use:   "trace [DELAY]",
		Short: "Show the path a delay takes through a ladder, checked against the broker",
		Long: `trace spells a delay as its routing key and lists the rungs the message
waits in, each with its TTL and the times it enters and leaves, then where it
ends. Delays are rounded up to the ladder's unit, never down. With
--routing-key it
decodes an existing routing key instead.

When the management API answers, the path is also simulated over the
broker's real bindings; if the broker would route the message differently
(a missing binding, a wrong TTL), trace says where and exits 3.

A ladder of the direct layout routes by the keys in a message's BCC
header: trace lists them, and --json gives the exchange, routing key and
headers a producer in any language must publish with. With --routing-key
the BCC keys are rebuilt from the key (the broker strips BCC, so a message
resting in a rung no longer shows them).`,
		Example: `  rungs trace 90s --ladder jobs
  rungs trace 1h30m --ladder jobs --to orders.retry
  rungs trace --ladder jobs --routing-key 0.0.1.0.1.orders.retry`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := ops.TraceInput{Args: args, Key: key, Dest: dest}
			if err := in.Check(); err != nil {
				return err
			}
			r, err := e.resolveLadderFrom(cmd.Context(), e.ladderSnapshot)
			if err != nil {
				return err
			}
			e.view().printLayoutNote(r)
			req, err := in.Request(r.ladder)
			if err != nil {
				return err
			}
			traced, err := ops.Trace(req, r.graph(), r.mgmtErr)
			if err != nil {
				return usageErr("%v", err)
			}
			tr, check := traced.Trace, traced.Check
			if err := e.view().emit(toJSONTrace(tr, check), written(func(w io.Writer) { ui.WriteTrace(w, describe(tr.Ladder), tr, check) })); err != nil {
				return err
			}
			return exitWith(check.Exit())
		},
	}
	cmd.Flags().StringVar(&dest, "to", "", "destination queue (default: the ladder's done queue)")
	// Not --key: that is the global TLS client key, which a local flag of
	// the same name would hide.
	cmd.Flags().StringVarP(&key, "routing-key", "k", "", "decode this routing key instead of a delay")
	return cmd
}

func toJSONTrace(tr topology.Trace, c ops.RouteCheck) any {
	return ui.TraceJSON(tr, c, toJSONLadder(tr.Ladder))
}
