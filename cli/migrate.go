package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	if !mf.DryRun {
		if err := ops.RefuseReadOnly(e.config(), "migrate"); err != nil {
			return err
		}
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
	what, word := describeMigrate(mp, mf.Limit)
	if err := e.view().confirm(e.opts.yes, what, word); err != nil {
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

// describeMigrate is the confirmation's text, and the word to type.
func describeMigrate(mp ops.MigratePlan, limit int) (what, word string) {
	if mp.Group != nil {
		return fmt.Sprintf("migrate about %d message(s) from the %d delay queue(s) of %s\n  into %s;\n  messages it cannot take go to %s",
			mp.Ready, len(mp.Rungs), mp.Source(), describe(mp.Migration.To), mp.Park), mp.Group.Name
	}
	what = fmt.Sprintf("migrate about %d message(s) in flight from %s\n  into %s;\n  messages it cannot take go to %s",
		mp.Ready, describe(mp.Migration.From), describe(mp.Migration.To), mp.Park)
	if limit > 0 {
		what += fmt.Sprintf(" (at most %d messages)", limit)
	}
	return what, mp.Migration.From.Name
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
	if !v.Interactive || v.json || mp.Group != nil {
		return nil
	}
	total := int(mp.Ready)
	return func(i int, queue string, done ops.MigrateResult, p broker.MoveProgress) {
		n := done.Moved + done.Parked + p.Moved + p.Parked
		line := fmt.Sprintf("migrate %s %d/%d  rung %d/%d %s  moved %d · parked %d · %s/s",
			textBar(n, total, 24), n, total, i+1, len(mp.Rungs), queue,
			done.Moved+p.Moved, done.Parked+p.Parked, topology.FormatRate(p.Rate()))
		if w := v.width(); len(line) > w-1 {
			line = line[:w-1]
		}
		fmt.Fprintf(v.Err, "\r%-*s", v.width()-1, line)
	}
}

// endBar ends the line a progress bar rewrote.
func (v view) endBar(drawn bool) {
	if drawn {
		fmt.Fprintln(v.Err)
	}
}

// textBar is [#####-----], w cells inside the brackets; more than total
// (messages that moved between rungs while they were drained) fills it.
func textBar(n, total, w int) string {
	fill := w
	if total > 0 && n < total {
		fill = n * w / total
	}
	return "[" + strings.Repeat("#", fill) + strings.Repeat("-", w-fill) + "]"
}

// reportMigrate says what a migration did, per rung (or delay queue) and
// in all.
func (v view) reportMigrate(mp ops.MigratePlan, res ops.MigrateResult) {
	if v.json {
		type jsonRung struct {
			Queue   string `json:"queue"`
			Moved   int    `json:"moved"`
			Parked  int    `json:"parked"`
			Stayed  int    `json:"stayed"`
			Unknown int    `json:"unknown"`
			Left    int    `json:"left"`
			Stopped string `json:"stopped"`
		}
		rungs := make([]jsonRung, 0, len(res.Rungs))
		for _, r := range res.Rungs {
			rungs = append(rungs, jsonRung{r.Queue, r.Moved, r.Parked, r.Stayed, r.Unknown, r.Left, r.Stopped})
		}
		out := map[string]any{
			"to": toJSONLadder(mp.Migration.To), "park": mp.Park,
			"moved": res.Moved, "parked": res.Parked, "stayed": res.Stayed, "unknown": res.Unknown,
			"reconnects": res.Reconnects, "reasons": res.Reasons, "rungs": rungs,
			"stopped": res.Stopped, "seconds": res.Elapsed.Seconds(), "held_elsewhere": heldElsewhere(res),
		}
		if mp.Group != nil {
			out["from_delays"] = mp.Source()
		} else {
			out["from"] = toJSONLadder(mp.Migration.From)
		}
		_ = writeJSON(v.Out, out)
		return
	}
	column := "rung"
	if mp.Group != nil {
		column = "queue"
		fmt.Fprintf(v.Out, "migrated %d message(s) from the delay queues of %s into %s %q in %s; stopped: %s\n",
			res.Moved, mp.Source(), mp.Migration.To.Layout, mp.Migration.To.Name, res.Elapsed.Round(time.Millisecond), res.Stopped)
	} else {
		rate := 0.0
		if s := res.Elapsed.Seconds(); s > 0 {
			rate = float64(res.Moved+res.Parked) / s
		}
		fmt.Fprintf(v.Out, "migrated %d message(s) from %s %q into %s %q in %s (%.0f/s); stopped: %s\n",
			res.Moved, mp.Migration.From.Layout, mp.Migration.From.Name, mp.Migration.To.Layout, mp.Migration.To.Name, res.Elapsed.Round(time.Millisecond), rate, res.Stopped)
	}
	w := table(v.Out)
	fmt.Fprintf(w, "  %s\tmoved\tparked\tstayed\tleft\n", column)
	for _, r := range res.Rungs {
		left := "?"
		if r.Left >= 0 {
			left = fmt.Sprint(r.Left)
		}
		note := ""
		if mp.Group == nil && r.Stopped != "" && r.Stopped != broker.StopEmpty {
			note = "\tstopped: " + r.Stopped
		}
		fmt.Fprintf(w, "  %s\t%d\t%d\t%d\t%s%s\n", r.Queue, r.Moved, r.Parked, r.Stayed, left, note)
	}
	fmt.Fprintf(w, "  total\t%d\t%d\t%d\n", res.Moved, res.Parked, res.Stayed)
	_ = w.Flush()
	if res.Parked > 0 {
		fmt.Fprintf(v.Out, "  %d parked in %s, the reason in x-rungs-reason\n", res.Parked, mp.Park)
	}
	if res.Unknown > 0 || res.Reconnects > 0 {
		fmt.Fprintf(v.Out, "  %d possibly duplicated (in flight when the connection dropped %s)\n", res.Unknown, topology.Counted(res.Reconnects, "time", "times"))
	}
	for _, l := range ui.ReasonLines(res.Reasons) {
		fmt.Fprintln(v.Out, l)
	}
	for _, l := range res.HeldElsewhere() {
		fmt.Fprintln(v.Out, "  warning: "+l)
	}
}

// heldElsewhere is res.HeldElsewhere for --json: an empty list, not null.
func heldElsewhere(res ops.MigrateResult) []string {
	if l := res.HeldElsewhere(); l != nil {
		return l
	}
	return []string{}
}

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
	if mp.Group != nil {
		return v.writeDelaysPreview(mp, out)
	}
	if v.json {
		return writeJSON(v.Out, map[string]any{"dry_run": true, "from": toJSONLadder(mp.Migration.From), "to": toJSONLadder(mp.Migration.To), "park": mp.Park, "rungs": out})
	}
	fmt.Fprintf(v.Out, "dry run: nothing was moved\n  from %s\n  into %s\n", describe(mp.Migration.From), describe(mp.Migration.To))
	for _, rp := range out {
		head := fmt.Sprintf("%s (%s): %d ready", rp.Queue, topology.FormatDelay(time.Duration(rp.TTLMS)*time.Millisecond), rp.Ready)
		switch {
		case rp.Skipped != "":
			fmt.Fprintf(v.Out, "%s; not previewed: %s\n", head, rp.Skipped)
			continue
		case rp.Ready == 0 && len(rp.Messages) == 0:
			continue
		}
		fmt.Fprintf(v.Out, "%s, the first %d:\n", head, len(rp.Messages))
		w := table(v.Out)
		for i, m := range rp.Messages {
			est := rp.Estimates[i]
			was := "?"
			if est.Rung.Queue != "" {
				was = fmt.Sprintf("%s, ≥%s spent (%s)", topology.FormatDelay(est.Total), topology.FormatDelay(est.Spent.Truncate(time.Millisecond)), est.Basis)
			}
			fmt.Fprintf(w, "  #%d\t%s\t%s\t%s\n", m.Position+1, orDash(m.MessageID), was, previewWhereText(m))
		}
		_ = w.Flush()
	}
	return nil
}

// previewWhereText is where a previewed message would go.
func previewWhereText(m ops.MigrateMessagePreview) string {
	if m.Park != "" {
		return "→ park: " + m.Park
	}
	return fmt.Sprintf("→ %s via %s key %s → %s", topology.FormatDelay(time.Duration(m.TargetDelayMS)*time.Millisecond), m.Exchange, m.RoutingKey, m.Target)
}
