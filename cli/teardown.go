package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/ops"
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
	plan, err := ops.PlanTeardown(ops.TeardownAsk{Ladder: r.ladder, Snap: r.snap, Found: r.discovered, NotFound: e.opts.ladder.noLadder(r)})
	if err != nil {
		return err
	}
	l := plan.Ladder
	if err := e.view().confirm(e.opts.yes, plan.Question(), l.Name); err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	if err := conn.Teardown(ctx, plan.Plan); err != nil {
		return plan.Failure(err)
	}
	return e.view().emit(map[string]any{"ladder": toJSONLadder(l), "deleted_queues": len(plan.Plan.Queues), "deleted_exchanges": len(plan.Plan.Exchanges)},
		fmt.Sprintf("deleted %s: %d queues, %d exchanges\n", l.Name, len(plan.Plan.Queues), len(plan.Plan.Exchanges)))
}
