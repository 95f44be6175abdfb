package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

func (e *env) migrateCommand() *cobra.Command {
	var mf ops.MigrateInput
	cmd := &cobra.Command{
		Use:   "migrate --from LADDER --to LADDER",
		Short: "Move the messages in flight from one ladder into another, keeping their due times",
		Long: `migrate takes the messages waiting in every rung of the --from ladder and
publishes each into the --to ladder with the delay it has left, so that it
reaches its destination no earlier than it would have through --from. The
ladders may differ in layout, unit, radix and queue type (a suffix ladder
into a prefix one, a classic ladder into a quorum one). Both must exist:
create the target with rungs apply first, and point publishers at it.

The remaining delay: where a message waits and its routing key fix its
future; only the time it has spent in its current rung is unknown. migrate
takes a lower bound of it from the time the broker dead-lettered it into the
rung (its latest x-death entry, when x-death matches the key's path), or for
a message in its first rung from what rungs publish or the retry library
recorded; otherwise it assumes none. Recorded times are whole seconds, so it
allows a second for that, plus --margin for the time between a recorded
event and the message's arrival in the rung and for clocks that differ. The
result is rounded up to the target's unit. Messages are never early (as long
as --margin holds) and at most a second plus the margin late, or up to their
current rung's TTL when nothing says when they entered it.

The destination comes from the routing key (prefix, nsb and celery keys
name one; --dest is used for keys that do not, else the target's done
queue). A message the target cannot take (its destination is not bound
there, its delay is above the target's maximum, its key is foreign) goes
to --park QUEUE (default FROM.migrate.parked) with the reason in
x-rungs-reason and its remaining delay in x-rungs-remaining-ms.

Rungs are drained from the longest down, so that nothing expires into a
rung already drained. It is at-least-once, as replay is: each message is
removed from its rung only after the broker confirmed its copy. Copies keep
body, properties and headers; x-death moves to x-rungs-x-death (RabbitMQ's
cycle detection would otherwise drop them) and x-rungs-migrated records
from, to, when, the delays and the basis of the estimate. The done queue
(finished messages) is left alone.

--dry-run peeks at the first messages of each rung and says where each
would go with what delay (quorum rungs count peeks as deliveries: add
--force to preview them). migrate asks for the source ladder's name to be
typed, or --yes.`,
		Example: `  rungs migrate --from jobs --to jobs2 --dry-run
  rungs migrate --from jobs --from-layout suffix --to jobs --to-layout direct --dest orders.retry --yes
  rungs migrate --from jobs --to jobs-quorum --rate 500/s --park jobs.unplaced --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.runMigrate(cmd.Context(), mf)
		},
	}
	f := cmd.Flags()
	f.StringVar(&mf.From, "from", "", "ladder to take the messages from (required, unless --from-delays)")
	f.StringVar(&mf.FromDelays, "from-delays", "", "take the messages of a delay group instead (APP/NAME, as rungs discover --delays lists it; see docs/delays.md)")
	f.StringVar(&mf.FromLayout, "from-layout", "", "its layout, when two ladders of the vhost share the name")
	f.StringVar(&mf.To, "to", "", "ladder to move them into (required)")
	f.StringVar(&mf.ToLayout, "to-layout", "", "its layout, when two ladders of the vhost share the name")
	f.StringVar(&mf.Dest, "dest", "", "destination in the target for messages whose key names none (default: its done queue)")
	f.StringVar(&mf.Park, "park", "", "queue for messages the target cannot take (default: FROM.migrate.parked; declared if missing)")
	f.IntVar(&mf.Limit, "limit", 0, "move at most this many messages (default: all); with --dry-run, how many to show per rung")
	f.StringVar(&mf.Rate, "rate", "", "at most this many messages a second: 200, 200/s, 6000/m")
	f.StringVar(&mf.Margin, "margin", "1s", "allowance for lag between a recorded time and a message entering its rung, and for clock differences")
	f.IntVar(&mf.Window, "window", broker.DefaultMoveWindow, "copies awaiting their confirm at once")
	f.BoolVar(&mf.DryRun, "dry-run", false, "peek at the first messages of each rung and say where each would go; move nothing")
	f.BoolVar(&mf.Force, "force", false, "with --dry-run, peek also at rungs where a peek can move messages on early, as rungs peek --force does (quorum rungs before RabbitMQ 4.3, or with delayed retry)")
	f.BoolVarP(&e.opts.yes, "yes", "y", false, "do not ask for confirmation")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

func (e *env) runMigrate(ctx context.Context, mf ops.MigrateInput) error {
	req, err := mf.Request()
	if err != nil {
		return err
	}
	if err := mf.RefuseReadOnly(e.config()); err != nil {
		return err
	}
	m, err := e.clients().management()
	if err != nil {
		return req.NeedsManagement(err)
	}
	mp, err := ops.Migrate(ctx, migrateReader{ops.Bounded{Insp: m, Timeout: e.opts.timeout}, m}, e.vhost(), req)
	if err != nil {
		return err
	}
	if mf.DryRun {
		return e.dryRunMigrate(ctx, mf, mp, m)
	}
	if err := e.view().confirm(e.opts.yes, mp.Question(mf.Limit), mp.Word()); err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	bar := e.view().migrateBar(mp)
	res, err := mp.Run(ctx, conn, mf.Limit, bar)
	e.view().endBar(bar != nil)
	e.view().reportMigrate(mp, res)
	return mp.Outcome(res, err, ctx.Err() != nil)
}

// migrateReader bounds each request of a migration's reads by --timeout:
// the ladders' and the inventory's.
type migrateReader struct {
	ops.Bounded
	dr ops.DelayReader
}

func (r migrateReader) DelaySnapshot(ctx context.Context, vhost string) (topology.Snapshot, map[string]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	return r.dr.DelaySnapshot(ctx, vhost)
}

// migrateBar draws a progress bar on stderr, rewriting one line, when a
// person is watching.
func (v view) migrateBar(mp ops.MigratePlan) func(i int, queue string, done ops.MigrateResult, p broker.MoveProgress) {
	// A delay group's queues drain too fast, and too many, for a bar.
	if mp.Group != nil {
		return nil
	}
	return progress(v, func(i int, queue string, done ops.MigrateResult, p broker.MoveProgress) {
		fmt.Fprint(v.Err, ui.MigrateProgressText(mp, i, queue, done, p, v.width()))
	})
}

// endBar ends the line a progress bar rewrote.
func (v view) endBar(drawn bool) {
	if drawn {
		fmt.Fprintln(v.Err)
	}
}

// textBar is ui.HashBar, kept for the tests that pin its cells.
func textBar(n, total, w int) string { return ui.HashBar(n, total, w) }

// reportMigrate says what a migration did.
func (v view) reportMigrate(mp ops.MigratePlan, res ops.MigrateResult) {
	_ = v.emit(ui.MigrateJSON(mp, res, jsonLadderOf), written(func(w io.Writer) { ui.WriteMigrate(w, mp, res) }))
}

// jsonLadderOf is toJSONLadder as ui's JSON shapers take it.
func jsonLadderOf(l topology.Ladder) any { return toJSONLadder(l) }

// dryRunMigrate peeks at the head of each rung and says where each message
// would go.
// m reads the quorum rungs' peek facts.
func (e *env) dryRunMigrate(ctx context.Context, mf ops.MigrateInput, mp ops.MigratePlan, m *broker.Management) error {
	out, err := mp.Preview(ctx, ops.MigratePreviewRequest{
		Vhost: e.vhost(), Facts: m, Count: mf.PreviewCount(), Force: mf.Force, ReadOnly: e.config().ReadOnly,
		Open: func(ctx context.Context) (ops.MovePreviewer, error) { return e.clients().amqp(ctx) },
		Note: func(note string) { fmt.Fprintf(e.Err, "rungs: note: %s\n", note) },
	})
	if err != nil {
		return err
	}
	return e.view().writeMigratePreview(mp, out)
}

// writeMigratePreview shows a dry run: per rung (or delay queue), where
// each of its first messages would go.
func (v view) writeMigratePreview(mp ops.MigratePlan, out []ops.MigrateRungPreview) error {
	return v.emit(ui.MigratePreviewJSON(mp, out, jsonLadderOf), written(func(w io.Writer) { ui.WriteMigratePreview(w, mp, out) }))
}
