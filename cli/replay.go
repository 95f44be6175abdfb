package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

type replayFlags struct {
	from, toLadder, toQueue, delay, to, park, rate string
	toOrigin, dryRun                               bool
	limit, window, maxHeld                         int
	where                                          []string
}

func (e *env) replayCommand() *cobra.Command {
	var rf replayFlags
	cmd := &cobra.Command{
		Use:   "replay --from QUEUE (--to-origin | --to-ladder NAME --delay D | --to-queue QUEUE)",
		Short: "Move messages off a queue (a dead-letter queue) without losing any",
		Long: `replay takes messages off a queue and republishes each one, until the
queue is empty or --limit is reached:

  --to-origin        back where each came from: the exchange and routing key
                     of its most recent x-death entry (a job parked by rungs'
                     retry library goes back to its worker's queue). Every
                     queue bound to that exchange and key gets it again. From
                     a ladder's done queue or destination it is delivered at
                     once; from a rung it waits that rung's full TTL again.
  --to-ladder NAME   into a ladder with --delay, to --to (a destination of
                     the ladder; default its done queue)
  --to-queue QUEUE   straight into a queue

It never loses a message: each one is acknowledged on the source only after
the broker confirmed its copy (confirms are pipelined). Unroutable copies
stay on the source, or go to --park QUEUE with the reason in x-rungs-reason.
If the connection drops or rungs is killed, unacknowledged messages go back
to the source: a message may then be both there and at the target (the
count of possible duplicates is reported), never neither.

Copies keep body, properties and headers, and gain x-rungs-replayed (a
count), x-rungs-replayed-from, x-rungs-replayed-at and x-rungs-replay-id.
Into a ladder, x-death is moved to x-rungs-x-death: RabbitMQ would otherwise
drop a message that expires into a rung its x-death names.

--where K=V keeps messages whose header K does not hold V on the source. It
compares values, not their printing: a byte-array header matches its text,
a number its decimal form, a timestamp its RFC 3339 form or Unix seconds.
--limit 0, the default, means no limit.
Messages that stay (filtered out, unroutable) are handed back when replay
ends; a quorum source counts that as a delivery (x-delivery-count), as it
does a peek.
--dry-run peeks at the first messages (see rungs peek) and says where each
would go. replay asks for the source's name to be typed, or --yes.`,
		Example: `  rungs replay --from orders.dlq --to-origin --dry-run
  rungs replay --from jobs.parked --to-origin --yes
  rungs replay --from orders.dlq --to-ladder jobs --delay 5m --to orders.work --rate 200/s --yes
  rungs replay --from orders.dlq --to-queue orders.work --where tenant=acme --limit 100 --park orders.unroutable --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return e.runReplay(cmd.Context(), rf) },
	}
	f := cmd.Flags()
	f.StringVar(&rf.from, "from", "", "queue to take messages from (required)")
	f.BoolVar(&rf.toOrigin, "to-origin", false, "send each message back where x-death says it came from")
	f.StringVar(&rf.toLadder, "to-ladder", "", "send them into this ladder (with --delay)")
	f.StringVar(&rf.delay, "delay", "", "delay for --to-ladder, e.g. 30s, 5m")
	f.StringVar(&rf.to, "to", "", "destination queue for --to-ladder (default: the ladder's done queue)")
	f.StringVar(&rf.toQueue, "to-queue", "", "send them straight to this queue")
	f.IntVar(&rf.limit, "limit", 0, "move at most this many messages (0, the default: no limit, until the source is empty)")
	f.StringVar(&rf.rate, "rate", "", "at most this many messages a second: 200, 200/s, 6000/m")
	f.StringArrayVar(&rf.where, "where", nil, "only messages whose header K reads V: K=V (repeatable, all must match)")
	f.StringVar(&rf.park, "park", "", "queue for unroutable messages (declared if missing; default: they stay on the source)")
	f.BoolVar(&rf.dryRun, "dry-run", false, "peek at the first messages and say where each would go; move nothing")
	f.IntVar(&rf.window, "window", broker.DefaultMoveWindow, "copies awaiting their confirm at once")
	f.IntVar(&rf.maxHeld, "max-held", 0, "messages kept back on the source (filtered, unroutable) before replay stops (default: 500, 10000 with --where)")
	f.BoolVarP(&e.opts.yes, "yes", "y", false, "do not ask for confirmation")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}

func (e *env) runReplay(ctx context.Context, rf replayFlags) error {
	in := e.replayInput(ctx, rf)
	req, err := in.Request()
	if err != nil {
		return err
	}
	r, err := e.replayReader()
	req.Unreadable = err
	plan, err := ops.Replay(ctx, r, req)
	e.view().warn(plan.UncheckedWarnings())
	if err := in.Refused(err); err != nil {
		return e.unreadShapeOf(ctx, err, "nothing replayed")
	}
	if rf.dryRun {
		return e.dryRunReplay(ctx, plan)
	}
	if err := e.view().confirm(e.opts.yes, plan.Question(), plan.Word()); err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	res, err := plan.Run(ctx, conn, e.view().replayProgress())
	e.view().reportReplay(rf, plan, res)
	return err
}

// replayInput is what the flags ask of a replay, for ops to check.
func (e *env) replayInput(ctx context.Context, rf replayFlags) ops.ReplayInput {
	return ops.ReplayInput{From: rf.from, ToLadder: rf.toLadder, ToQueue: rf.toQueue, Delay: rf.delay, To: rf.to, Park: rf.park, Rate: rf.rate,
		ToOrigin: rf.toOrigin, DryRun: rf.dryRun, Limit: rf.limit, Window: rf.window, MaxHeld: rf.maxHeld, Where: rf.where,
		Vhost: e.vhost(), ReadOnly: e.config().ReadOnly, Into: func(name string) (*ops.ReplayInto, error) { return e.replayInto(ctx, name) }}
}

// replayReader reads the replay's queues and ladders by name, each
// request bounded by --timeout, and a quorum source's peek facts.
func (e *env) replayReader() (ops.ReplayReader, error) {
	m, err := e.clients().management()
	if err != nil {
		return nil, err
	}
	return factsReader{ops.Bounded{Insp: m, Timeout: e.config().Timeout}, m}, nil
}

// warn prints each warning ops gave on stderr.
func (v view) warn(warnings []string) {
	fmt.Fprint(v.Err, ui.WarningsText(warnings))
}

// replayInto is the ladder --to-ladder names, with the shape flags given,
// for ops to find on the broker.
func (e *env) replayInto(ctx context.Context, name string) (*ops.ReplayInto, error) {
	lf := &e.opts.ladder
	lf.name = name
	if err := lf.check(); err != nil {
		return nil, err
	}
	spec, err := lf.spec()
	if err != nil {
		return nil, err
	}
	return &ops.ReplayInto{Spec: spec, Query: lf.query(), ShapeGiven: lf.shapeGiven(),
		Version: func() (topology.Version, error) { return e.clients().brokerVersion(ctx) }}, nil
}

// replayProgress prints a line to stderr every few seconds at a terminal.
func (v view) replayProgress() func(broker.MoveProgress) {
	line := every(2*time.Second, func(p broker.MoveProgress) { fmt.Fprintln(v.Err, ui.ReplayProgressLine(p)) })
	// The last progress is the report's to say.
	return progress(v, func(p broker.MoveProgress) {
		if !p.Done {
			line(p)
		}
	})
}

func (v view) reportReplay(rf replayFlags, plan ops.ReplayPlan, res broker.MoveProgress) {
	_ = v.emit(ui.ReplayReportJSON(res, rf.from, plan.Describe), ui.ReplayReportText(res, rf.from, plan.Describe, rf.park))
}

// dryRunReplay has the peek gate weigh the source, then ops preview the
// plan: where each of the first messages would go.
func (e *env) dryRunReplay(ctx context.Context, plan ops.ReplayPlan) error {
	if _, err := e.view().gatePeek(plan.Peek, false, e.config().ReadOnly); err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	dry, err := plan.Preview(ctx, conn)
	if err != nil {
		return err
	}
	e.view().printDryRun(plan.Options.Source, dry)
	return nil
}

// printDryRun shows each previewed message's verdict.
func (v view) printDryRun(source string, dry ops.ReplayDryRun) {
	_ = v.emit(ui.DryRunJSON(source, dry), ui.DryRunText(source, dry))
}
