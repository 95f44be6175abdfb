package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
	if err := refuseReadOnly(e.config(), "purge"); err != nil {
		return err
	}
	insp, err := e.clients().reader()
	if err != nil {
		return err
	}
	queue := ""
	if len(args) == 1 {
		queue = args[0]
	}
	q := e.opts.ladder.query()
	snap, found, err := ops.ReadPurge(ctx, insp, e.vhost(), queue, q.Name)
	if err != nil {
		return err
	}
	req, word := ops.PurgeRequest{}, ""
	if len(args) == 1 {
		req.Queue, word = args[0], args[0]
	} else {
		f, err := ops.FindLadder(found, q)
		if errors.Is(err, ops.ErrNoLadder) {
			return fmt.Errorf("no ladder %q in vhost %s; nothing was purged", q.Name, e.vhost())
		}
		if err != nil {
			return usageErr("%v; nothing was purged", err)
		}
		req.Ladder, word = f.Ladder, f.Ladder.Name
	}
	v, _ := e.clients().brokerVersion(ctx) // unknown: only ready messages are counted (the 3.x and 4.0 rule)
	plan, err := ops.PlanPurge(snap, found, v, req)
	if err != nil {
		return fmt.Errorf("%w; nothing was purged", err)
	}
	what := fmt.Sprintf("purge %s in vhost %s: about %s will be lost", strings.Join(short(plan.Names(), 4), ", "), e.vhost(), plan.Total().Describe())
	if err := e.view().confirm(e.opts.yes, what, word); err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	res, err := plan.Run(ctx, conn, nil)
	if err != nil {
		return fmt.Errorf("purge %s (after %d messages from earlier queues): %w", res.Failed, res.Purged, err)
	}
	if e.opts.json {
		return writeJSON(e.Out, map[string]any{"queues": res.Queues, "purged": res.Purged})
	}
	fmt.Fprintf(e.Out, "purged %d message(s) from %s\n", res.Purged, topology.Counted(len(res.Queues), "queue", "queues"))
	return nil
}
