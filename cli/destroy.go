package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// confirm asks the operator to type a word before a destructive action. It
// returns nil when yes (--yes) says so, and refuses outright when nobody
// can answer (stdin is not a terminal), so a script never destroys by
// accident.
func (v view) confirm(yes bool, what, word string) error {
	if yes {
		return nil
	}
	if !v.Interactive {
		return usageErr("%s needs --yes (or run it in a terminal to confirm by typing %q)", what, word)
	}
	fmt.Fprintf(v.Err, "%s\nType %q to confirm: ", what, word)
	line, err := bufio.NewReader(v.In).ReadString('\n')
	if err != nil && line == "" {
		return usageErr("not confirmed: %v", err)
	}
	if strings.TrimSpace(line) != word {
		return usageErr("not confirmed (typed %q, expected %q); nothing was changed", strings.TrimSpace(line), word)
	}
	return nil
}

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
			if len(args) == 0 && !cmd.Flags().Lookup("ladder").Changed {
				return usageErr("purge needs a QUEUE or an explicit --ladder NAME")
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
	snap, found, err := ops.ReadPurge(ctx, insp, e.vhost(), queue, e.opts.ladder.name)
	if err != nil {
		return err
	}
	req, word := ops.PurgeRequest{}, ""
	if len(args) == 1 {
		req.Queue, word = args[0], args[0]
	} else {
		f, err := ops.FindLadder(found, ops.LadderQuery{Name: e.opts.ladder.name})
		if errors.Is(err, ops.ErrNoLadder) {
			return fmt.Errorf("no ladder %q in vhost %s; nothing was purged", e.opts.ladder.name, e.vhost())
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

// short lists at most n names, then how many more.
func short(names []string, n int) []string {
	if len(names) <= n {
		return names
	}
	return append(append([]string(nil), names[:n]...), fmt.Sprintf("and %d more", len(names)-n))
}

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
	if err := refuseReadOnly(e.config(), "teardown"); err != nil {
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
