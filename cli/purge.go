package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

func (e *env) purgeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "purge [QUEUE]",
		Short: "Empty a queue, or every queue of a ladder (asks first)",
		Long: `purge removes the ready messages of one queue, or with --ladder and no
QUEUE of every rung, done and unroutable queue of that ladder (destination
queues belong to their workers and are left alone). Purged messages are
gone: purge says how many will be lost and needs --yes or the name typed at
a terminal. --read-only refuses it.`,
		Example: `  rungs purge jobs.unroutable
  rungs purge --ladder jobs --yes`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !e.opts.ladder.namedExplicitly() {
				return usageErr("purge needs a QUEUE, an explicit --ladder NAME, or --layout nsb, nsb1 or celery (whose ladders have fixed names)")
			}
			return e.runPurge(cmd.Context(), args)
		},
	}
	cmd.Flags().BoolVarP(&e.opts.yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func (e *env) runPurge(ctx context.Context, args []string) error {
	if err := ops.RefuseReadOnly(e.config(), "purge"); err != nil {
		return err
	}
	insp, err := e.clients().reader()
	if err != nil {
		return err
	}
	ask := ops.PurgeAsk{Vhost: e.vhost(), Ladder: e.opts.ladder.query()}.WithArgs(args)
	ask.Version, _ = e.clients().brokerVersion(ctx) // unknown: only ready messages are counted
	plan, err := ops.Purge(ctx, insp, ask)
	if err != nil {
		return err
	}
	if err := e.view().confirm(e.opts.yes, plan.Question(), plan.Word()); err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	res, err := plan.Run(ctx, conn, nil)
	if err != nil {
		return res.Failure(err)
	}
	return e.view().emit(map[string]any{"queues": res.Queues, "purged": res.Purged},
		fmt.Sprintf("purged %d message(s) from %s\n", res.Purged, topology.Counted(len(res.Queues), "queue", "queues")))
}
