package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

func (e *env) applyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Declare a ladder (idempotent; never deletes)",
		Long: `apply declares every exchange, queue and binding of the ladder. Objects that
already exist with the same arguments are left alone; an object that exists
with other arguments stops apply with an error naming it and the argument:
rungs never deletes a queue (and its messages) to make room. After applying,
apply reads the broker back and reports any drift.

--dead-letter-strategy at-most-once trades safety for speed on quorum
rungs (RabbitMQ 3.10 and later): the broker hands an expired message to
the next rung without waiting for it to confirm, so a burst drains several
times faster, and a message is lost if that rung cannot take it at that
moment (its leader moving, a node stopping, a disk or memory alarm).
--at-most-once-below D limits it to the rungs shorter than D, the short
rungs a burst crowds; the longer ones keep at-least-once. Classic queues
dead-letter at most once already and refuse both flags. The ladder keeps
its strategy: apply without the flags keeps it and says so; the broker
cannot change it in place, so going back to at-least-once is a new ladder
and rungs migrate. rungs doctor names such a ladder.`,
		Example: `  rungs apply --ladder jobs --unit 1s --max-delay 7d
  rungs apply --ladder jobs --queue-type classic --target orders.retry   # faster rungs that lose messages between rungs on a node stop
  rungs apply --ladder bursts --dead-letter-strategy at-most-once  # faster drains, loses a message the next rung cannot take
  rungs apply --ladder bursts --at-most-once-below 1m              # the same on the rungs shorter than 1m only
  rungs apply --ladder legacy --layout prefix --max-delay 1h       # topic exchanges: publishers need no BCC header
  rungs apply --ladder example --layout suffix --max-delay 15s   # the binary-ladder Terraform module's layout`,
		Args: cobra.NoArgs,
		RunE: e.runApply,
	}
	cmd.Flags().StringSliceVar(&e.opts.ladder.targets, "target", nil, "destination queue to bind for delivery (repeatable; created durable if missing)")
	e.opts.ladder.registerStrategy(cmd.Flags(), true)
	return cmd
}

func (e *env) runApply(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	if err := e.opts.ladder.check(); err != nil {
		return err
	}
	if err := ops.RefuseReadOnly(e.config(), "apply"); err != nil {
		return err
	}
	r, err := e.resolveLadderFrom(ctx, e.ladderSnapshot)
	if err != nil {
		return err
	}
	l := r.ladder
	req := ops.ApplyRequest{Ladder: l, Snap: r.snap, SnapErr: r.mgmtErr, Existing: r.existing, Version: func() (topology.Version, error) { return e.clients().brokerVersion(ctx) }}
	ap, err := ops.PlanApply(req)
	if err != nil {
		return err
	}
	plan := ap.Plan
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	// Said only once the broker answers: when neither API does, the
	// connection error is the one line to print.
	e.view().printLayoutNote(r)
	for _, w := range ap.Warnings {
		fmt.Fprintln(e.Err, "rungs: warning: "+oneLine(broker.Redact(w)))
	}
	if err := e.declareDestinations(ctx, conn, plan); err != nil {
		return err
	}
	// A tall ladder is hundreds of declarations: --timeout bounds each of
	// them (broker.Conn.Apply), never the run, which a loaded broker makes
	// slow without anything being wrong.
	res, err := conn.Apply(ctx, plan)
	if err != nil {
		return fmt.Errorf("apply %s: %w", l.Name, err)
	}
	snap, serr := e.checkSnapshot(ctx)
	c := ops.VerifyApplied(plan, snap, serr)
	if e.opts.json {
		out := map[string]any{
			"ladder": toJSONLadder(l), "exchanges": res.Exchanges, "queues": res.Queues, "bindings": res.Bindings,
			"drift": toJSONDrift(c.Drift), "verified": c.Checked,
		}
		if err := writeJSON(e.Out, out); err != nil {
			return err
		}
	} else {
		fmt.Fprint(e.Out, ui.AppliedText(l, res))
		if !c.Checked {
			fmt.Fprintln(e.Err, "rungs: warning: "+oneLine(broker.Redact(fmt.Sprintf("could not verify through the management API: %v", serr))))
		} else {
			fmt.Fprint(e.Out, ui.DriftText(c.Drift))
		}
	}
	return exitWith(c.ApplyExit())
}

// declareDestinations declares the ladder's destination queues that are
// missing and the exchanges of its own a destination receives through.
func (e *env) declareDestinations(ctx context.Context, conn *broker.Conn, plan topology.Plan) error {
	for _, t := range plan.Ladder.Targets {
		created, err := conn.EnsureQueue(ctx, t, plan.Ladder.QueueType)
		if err != nil {
			return fmt.Errorf("destination %s: %w", t, err)
		}
		if created && !e.opts.json {
			fmt.Fprintf(e.Out, "created destination queue %s (durable, %s)\n", t, plan.Ladder.QueueType)
		}
	}
	// A destination that receives through an exchange of its own (Celery
	// binds the queue's exchange, not the queue) needs that exchange.
	if closed := plan.Closed(); len(closed.Exchanges) > len(plan.Exchanges) {
		if _, err := conn.Apply(ctx, topology.Plan{Ladder: plan.Ladder, Exchanges: closed.Exchanges[len(plan.Exchanges):]}); err != nil {
			return fmt.Errorf("destination exchange: %w", err)
		}
	}
	return nil
}
