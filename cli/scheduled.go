package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/ui"
)

// scheduledFlags are the flags every `rungs scheduled` command shares: the
// filter, and what to show.
type scheduledFlags struct {
	id, correlation, body, dest string
	dueBefore, dueAfter, within string
	where                       []string
	keep                        int
	force                       bool
	// actions
	park, delay, at string
	discard, dryRun bool
	all             bool
	window          int
}

func (e *env) scheduledCommand() *cobra.Command {
	var sf scheduledFlags
	cmd := &cobra.Command{
		Use:   "scheduled --ladder NAME [filters]",
		Short: "Find the messages waiting in a ladder, when each is due; cancel, reschedule or fire them",
		Long:  scheduledLong,

		Example: `  rungs scheduled --ladder jobs --within 1h
  rungs scheduled --ladder jobs --id order-8812 --json
  rungs scheduled cancel --ladder jobs --where order=8812 --dry-run
  rungs scheduled reschedule --ladder jobs --id order-8812 --at 09:00 --yes
  rungs scheduled fire --ladder celery --id '3f2a*' --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return e.runScheduledList(cmd.Context(), sf) },
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&sf.id, "id", "", "message-id or Celery task id (a trailing * matches a prefix)")
	pf.StringVar(&sf.correlation, "correlation-id", "", "correlation-id")
	pf.StringArrayVar(&sf.where, "where", nil, "header K reads V: K=V (repeatable, all must match)")
	pf.StringVar(&sf.body, "body", "", "text the body contains")
	pf.StringVar(&sf.dest, "dest", "", "destination queue")
	pf.StringVar(&sf.dueBefore, "due-before", "", "due before this time (RFC 3339, or a span from now: 2h)")
	pf.StringVar(&sf.dueAfter, "due-after", "", "due after this time (RFC 3339, or a span from now)")
	pf.StringVar(&sf.within, "within", "", "due within this span from now (e.g. 1h)")
	pf.IntVar(&sf.keep, "limit", 50, "list at most this many (the earliest due)")
	pf.BoolVar(&sf.force, "force", false, "read rungs the peek rules refuse (quorum rungs with a delivery limit before 4.3)")
	act := func(a ops.Action, use, short, example string) *cobra.Command {
		c := &cobra.Command{Use: use, Short: short, Example: example, Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error { return e.runScheduledAction(cmd.Context(), sf, a) }}
		f := c.Flags()
		f.BoolVar(&sf.dryRun, "dry-run", false, "list what would be acted on; change nothing")
		f.BoolVar(&sf.all, "all", false, "act on every message of the ladder (no filter)")
		f.IntVar(&sf.window, "window", broker.DefaultMoveWindow, "copies awaiting their confirm at once")
		f.BoolVarP(&e.opts.yes, "yes", "y", false, "do not ask for confirmation")
		return c
	}
	cancel := act(ops.ActCancel, "cancel --ladder NAME [filters]", "Park the selected messages (or --discard them)",
		`  rungs scheduled cancel --ladder jobs --where order=8812 --dry-run
  rungs scheduled cancel --ladder jobs --where order=8812     # parked in jobs.scheduled.cancelled
  rungs scheduled cancel --ladder jobs --id order-8812 --discard`)
	cancel.Flags().StringVar(&sf.park, "park", "", "parking queue (default NAME.scheduled.cancelled)")
	cancel.Flags().BoolVar(&sf.discard, "discard", false, "delete them instead of parking (asks to type the ladder's name; --yes does not do)")
	resched := act(ops.ActReschedule, "reschedule --ladder NAME [filters] (--delay D | --at TIME)", "Put the selected messages back with a new delay or due time",
		`  rungs scheduled reschedule --ladder jobs --id reminder-17 --delay 30m
  rungs scheduled reschedule --ladder jobs --id reminder-17 --at 09:00 --yes`)
	resched.Flags().StringVar(&sf.delay, "delay", "", "new delay from now, e.g. 30m")
	resched.Flags().StringVar(&sf.at, "at", "", "new due time: RFC 3339, a clock time (09:00, the next to come) or a span from now")
	fire := act(ops.ActFire, "fire --ladder NAME [filters]", "Send the selected messages to their destination now",
		`  rungs scheduled fire --ladder jobs --correlation-id support-4411
  rungs scheduled fire --ladder celery --id '3f2a*' --yes`)
	cmd.AddCommand(cancel, resched, fire)
	return cmd
}

// ask is what the flags ask of ops.Scheduled: action "" lists.
func (e *env) scheduledAsk(sf scheduledFlags, a ops.Action, now time.Time) ops.ScheduledAsk {
	return ops.ScheduledAsk{
		Vhost: e.vhost(), Ladder: e.opts.ladder.query(), Names: e.opts.ladder.names(e.vhost()),
		Terms: ops.FilterTerms{ID: sf.id, CorrelationID: sf.correlation, Where: sf.where, Body: sf.body, Dest: sf.dest,
			DueBefore: sf.dueBefore, DueAfter: sf.dueAfter, Within: sf.within},
		Keep: sf.keep, Force: sf.force, ReadOnly: e.config().ReadOnly,
		Action: a, DryRun: sf.dryRun,
		Act: ops.ActionTerms{All: sf.all, Park: sf.park, Discard: sf.discard, Delay: sf.delay, At: sf.at, Window: sf.window},
		Now: now,
	}
}

// planScheduled has ops read, find and check what the flags ask.
func (e *env) planScheduled(ctx context.Context, sf scheduledFlags, a ops.Action) (ops.ScheduledJob, error) {
	ask := e.scheduledAsk(sf, a, time.Now())
	m, err := e.clients().management()
	if err != nil {
		return ops.ScheduledJob{}, err
	}
	job, err := ops.Scheduled(ctx, factsReader{ops.Bounded{Insp: m, Timeout: e.config().Timeout}, m}, ask)
	if err != nil {
		return job, ask.Refused(err)
	}
	for _, n := range job.Scan.Notes {
		fmt.Fprintf(e.Err, "rungs: note: %s\n", n)
	}
	return job, nil
}

// factsReader reads ladders and queues with each request bounded by
// --timeout, and peek facts from the management API: what scheduled and
// replay read.
type factsReader struct {
	ops.Bounded
	ops.PeekFacter
}

func (e *env) runScheduledList(ctx context.Context, sf scheduledFlags) error {
	job, err := e.planScheduled(ctx, sf, "")
	if err != nil {
		return err
	}
	return e.scanAndPrint(ctx, job.Scan, "")
}

// scanAndPrint runs the scan and prints what it found: a listing, or what
// a dry run of action would take.
func (e *env) scanAndPrint(ctx context.Context, plan ops.ScanPlan, action string) error {
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	res, err := scanScheduled(ctx, e.view(), conn, plan)
	if err != nil {
		return err
	}
	e.view().printScheduled(plan, res, action)
	return nil
}

// scanScheduled runs the scan with a bar on a terminal.
func scanScheduled(ctx context.Context, v view, conn *broker.Conn, plan ops.ScanPlan) (ops.ScanResult, error) {
	res, err := plan.Run(ctx, conn, v.scanBar())
	v.clearBar()
	return res, plan.Outcome(ctx, res, err)
}

// scanBar rewrites one line of stderr while a person watches.
func (v view) scanBar() func(ops.ScanProgress) {
	return progress(v, func(p ops.ScanProgress) { fmt.Fprint(v.Err, ui.ScanProgressText(p)) })
}

func (v view) printScheduled(plan ops.ScanPlan, res ops.ScanResult, action string) {
	now := time.Now()
	_ = v.emit(ui.ScheduledJSON(plan, res, action, now), written(func(w io.Writer) { ui.WriteScheduled(w, plan, res, action, now) }))
}

func (e *env) runScheduledAction(ctx context.Context, sf scheduledFlags, a ops.Action) error {
	job, err := e.planScheduled(ctx, sf, a)
	if err != nil {
		return err
	}
	plan := job.Action
	if !job.Acts() {
		return e.scanAndPrint(ctx, job.Scan, string(plan.Action))
	}
	if err := e.view().confirm(e.opts.yes && plan.YesConfirms(), job.Question(), job.Word()); err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	res, err := plan.Run(ctx, conn, e.view().actionBar(plan.Action))
	e.view().clearBar()
	e.view().reportAction(plan, res)
	return plan.Outcome(ctx, res, err)
}

func (v view) actionBar(a ops.Action) func(ops.ActionProgress) {
	return progress(v, every(200*time.Millisecond, func(p ops.ActionProgress) { fmt.Fprint(v.Err, ui.ActionProgressText(a, p)) }))
}

func (v view) reportAction(p ops.ActionPlan, res ops.ActionResult) {
	_ = v.emit(ui.ActionJSON(p, res), written(func(w io.Writer) { ui.WriteAction(w, p, res) }))
}

const scheduledLong = `scheduled lists the messages waiting in a ladder's rungs, ordered by when
they are due, with the evidence each due time rests on:

  rungs    rungs' own headers (retry library, rungs publish, a reschedule)
  x-death  the broker's record of its expiry out of the rung above
  eta      Celery's eta header (task id in the id column)
  none     nothing dates it: a window as wide as its rung's TTL, never a
           made-up exact time

It reads every rung (a peek of the whole rung): messages stay where they
are, in their order; a message due while its rung is read leaves late by at
most the time that rung took to read, never early. The peek rules by
release and queue type apply (see rungs peek): before RabbitMQ 4.3 a quorum
rung counts each read as a delivery, and with a delivery limit a message
read too often would move on early, so such rungs need --force.

Filters (all must match): --id (message-id or Celery task id; a trailing *
for a prefix), --correlation-id, --where K=V (as replay), --body TEXT,
--dest QUEUE, --due-before / --due-after (RFC 3339 or a span from now, 2h),
--within SPAN. The counts by horizon cover every match; the list shows the
--limit earliest.

Actions take exactly the messages the filter selects when each is read:
  cancel       park them in NAME.scheduled.cancelled (--park): undo with
               rungs replay --from NAME.scheduled.cancelled --to-origin
  cancel --discard   delete them (typed confirmation only)
  reschedule   --delay D (from now) or --at TIME, keeping body, properties
               and headers; x-rungs-rescheduled-from/-due record the past
  fire         send them to their destination now
Every copy is confirmed before its original is acknowledged; a kill at any
point loses nothing (a possible duplicate carries x-rungs-replay-id).`
