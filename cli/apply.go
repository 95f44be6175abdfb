package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/topology"
)

func (e *env) applyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Declare a ladder (idempotent; never deletes)",
		Long: `apply declares every exchange, queue and binding of the ladder. Objects that
already exist with the same arguments are left alone; an object that exists
with other arguments stops apply with an error naming it and the argument:
rungs never deletes a queue (and its messages) to make room. After applying,
apply reads the broker back and reports any drift.`,
		Example: `  rungs apply --ladder jobs --unit 1s --max-delay 7d
  rungs apply --ladder jobs --queue-type quorum --target orders.retry
  rungs apply --ladder example --layout suffix --max-delay 15s   # seed 003's Terraform ladder`,
		Args: cobra.NoArgs,
		RunE: e.runApply,
	}
	cmd.Flags().StringSliceVar(&e.opts.ladder.targets, "target", nil, "destination queue to bind for delivery (repeatable; created durable if missing)")
	return cmd
}

func (e *env) runApply(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	l, err := e.opts.ladder.fromFlags(e.vhost())
	if err != nil {
		return err
	}
	if err := e.refuseReadOnly("apply"); err != nil {
		return err
	}
	conn, err := e.amqp(ctx)
	if err != nil {
		return err
	}
	for _, t := range l.Targets {
		created, err := conn.EnsureQueue(ctx, t, l.QueueType)
		if err != nil {
			return fmt.Errorf("destination %s: %w", t, err)
		}
		if created && !e.opts.json {
			fmt.Fprintf(e.Out, "created destination queue %s (durable, %s)\n", t, l.QueueType)
		}
	}
	plan := l.Plan()
	// A tall ladder is hundreds of declarations, each a round trip.
	actx, cancel := context.WithTimeout(ctx, 4*e.opts.timeout)
	defer cancel()
	res, err := conn.Apply(actx, plan)
	if err != nil {
		return fmt.Errorf("apply %s: %w", l.Name, err)
	}
	snap, serr := e.snapshot(ctx)
	var drift []topology.Drift
	if serr == nil {
		drift = topology.Diff(plan, snap)
	}
	if e.opts.json {
		out := map[string]any{
			"ladder": toJSONLadder(l), "exchanges": res.Exchanges, "queues": res.Queues, "bindings": res.Bindings,
			"drift": toJSONDrift(drift), "verified": serr == nil,
		}
		if err := writeJSON(e.Out, out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.Out, "applied %s\n", describe(l))
		fmt.Fprintf(e.Out, "  %s, %s, %s declared\n", plural(res.Exchanges, "exchange", "exchanges"), plural(res.Queues, "queue", "queues"), plural(res.Bindings, "binding", "bindings"))
		if serr != nil {
			fmt.Fprintf(e.Err, "rungs: warning: could not verify through the management API: %v\n", serr)
		} else {
			printDrift(e.Out, drift)
		}
	}
	if len(drift) > 0 {
		return &exitError{ExitDrift, nil}
	}
	return nil
}
