package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

func (e *env) teardownCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "teardown",
		Short: "Delete a ladder's queues and exchanges (asks first)",
		Long: `teardown deletes every queue and exchange of the ladder, and with them
their bindings and every message still in flight. It needs --yes or the
ladder's name typed at a terminal. --read-only refuses it.`,
		Example: `  rungs teardown --ladder jobs --yes`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.runTeardown(cmd.Context())
		},
	}
	cmd.Flags().BoolVarP(&e.opts.yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func (e *env) runTeardown(ctx context.Context) error {
	if err := ops.RefuseReadOnly(e.config(), "teardown"); err != nil {
		return err
	}
	r, err := e.resolveLadderFrom(ctx, e.ladderSnapshot)
	if err != nil {
		return err
	}
	if r.snap != nil && !r.discovered {
		return fmt.Errorf("%s; nothing was deleted", e.opts.ladder.noLadder(r))
	}
	l := r.ladder
	var inFlight int64
	if r.snap != nil {
		// Judged on its own, without history: only the count matters here.
		inFlight = health.NewReport([]topology.Found{{Ladder: l}}, *r.snap, health.Watch{}).Ladders[0].Totals.InFlight
	}
	plan := l.Plan()
	what := fmt.Sprintf("teardown %s: delete %d queues and %d exchanges; %d message(s) in flight will be lost",
		describe(l), len(plan.Queues), len(plan.Exchanges), inFlight)
	if err := e.view().confirm(e.opts.yes, what, l.Name); err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	if err := conn.Teardown(ctx, plan); err != nil {
		return fmt.Errorf("teardown %s: %w", l.Name, err)
	}
	if e.opts.json {
		return writeJSON(e.Out, map[string]any{"ladder": toJSONLadder(l), "deleted_queues": len(plan.Queues), "deleted_exchanges": len(plan.Exchanges)})
	}
	fmt.Fprintf(e.Out, "deleted %s: %d queues, %d exchanges\n", l.Name, len(plan.Queues), len(plan.Exchanges))
	return nil
}
