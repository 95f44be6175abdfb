package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// defaultDryRun is how many messages replay --dry-run shows without --limit.
const defaultDryRun = 50

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

// replayJob is a replay worked out by ops, and what it was checked
// against: scope is nil when the management API did not answer (snapErr).
type replayJob struct {
	ops.ReplayPlan
	scope   *ops.BrokerView
	snapErr error
}

func (e *env) runReplay(ctx context.Context, rf replayFlags) error {
	req, err := rf.request()
	if err != nil {
		return err
	}
	if !rf.dryRun {
		if err := refuseReadOnly(e.config(), "replay"); err != nil {
			return err
		}
	}
	rp, err := e.planReplay(ctx, rf, req)
	if err != nil {
		return err
	}
	if rf.dryRun {
		return e.dryRunReplay(ctx, rf, rp)
	}
	ready := "the"
	if rp.Ready >= 0 {
		ready = fmt.Sprintf("about %d", rp.Ready)
	}
	what := fmt.Sprintf("replay %s message(s) from %s %s", ready, rf.from, rp.Describe)
	if rf.limit > 0 {
		what += fmt.Sprintf(" (at most %d)", rf.limit)
	}
	if err := e.view().confirm(e.opts.yes, what, rf.from); err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	rp.Options.Progress = e.view().replayProgress()
	res, err := conn.Move(ctx, rp.Options)
	e.view().reportReplay(rf, rp, res)
	switch {
	case ctx.Err() != nil:
		return &exitError{130, fmt.Errorf("replay interrupted after %d message(s); the rest stay on %s", res.Moved+res.Parked, rf.from)}
	case err != nil:
		return err
	case res.Kept > 0:
		return fmt.Errorf("%d message(s) stayed on %s (reasons above)", res.Kept, rf.from)
	}
	return nil
}

// replayFlagOf is the flag behind each field ops.ReplayRequest checks.
var replayFlagOf = map[string]string{
	"from": "--from", "queue": "--to-queue", "delay": "--delay", "park": "--park", "limit": "--limit", "rate": "--rate", "where": "--where",
}

// replayUsage words a request ops refused as a usage error naming the flag.
func replayUsage(err error) error {
	var fe *ops.FieldError
	if errors.As(err, &fe) && replayFlagOf[fe.Field] != "" {
		return usageErr("%s: %v", replayFlagOf[fe.Field], fe.Err)
	}
	return usageErr("%v", err)
}

// request reads the flags into a replay request and checks what needs no
// broker. Where the messages go into a ladder is resolved later.
func (rf replayFlags) request() (ops.ReplayRequest, error) {
	req := ops.ReplayRequest{Source: rf.from, Park: rf.park, Limit: rf.limit, Where: rf.where, Window: rf.window, MaxHeld: rf.maxHeld}
	n := 0
	for _, set := range []bool{rf.toOrigin, rf.toLadder != "", rf.toQueue != ""} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return req, usageErr("replay needs exactly one of --to-origin, --to-ladder NAME or --to-queue QUEUE")
	case rf.toLadder == "" && (rf.delay != "" || rf.to != ""):
		return req, usageErr("--delay and --to go with --to-ladder")
	case rf.window < 1:
		return req, usageErr("--window must be at least 1")
	case rf.maxHeld < 0:
		return req, usageErr("--max-held cannot be negative")
	}
	if rf.toLadder != "" {
		d, err := ops.LadderDelay(rf.delay)
		if err != nil {
			return req, replayUsage(err)
		}
		req.To.Delay, req.To.Dest = d, rf.to
	}
	req.To.Queue, req.To.Origin = rf.toQueue, rf.toOrigin
	if rf.rate != "" {
		r, err := topology.ParseRate(rf.rate)
		if err != nil {
			return req, usageErr("--rate: %v", err)
		}
		req.Rate = r
	}
	if _, err := req.Check(); err != nil {
		return req, replayUsage(err)
	}
	return req, nil
}

// planReplay resolves the ladder to replay into, if any, and has ops
// check the request against the broker, as far as the management API
// answers.
func (e *env) planReplay(ctx context.Context, rf replayFlags, req ops.ReplayRequest) (replayJob, error) {
	var rp replayJob
	insp, err := e.clients().reader()
	if err == nil {
		rp.scope, err = ops.ReadReplay(ctx, insp, e.vhost(), req, rf.toLadder)
	}
	if err != nil {
		rp.snapErr = err
		fmt.Fprintf(e.Err, "rungs: warning: routes not checked (management API: %v); relying on mandatory returns\n", err)
	}
	if rf.toLadder != "" {
		e.opts.ladder.name = rf.toLadder
		// The ladder was read with the replay's queues.
		r, err := e.resolveLadderFrom(ctx, func(context.Context) (topology.Snapshot, error) {
			if rp.scope == nil {
				return topology.Snapshot{}, rp.snapErr
			}
			return rp.scope.Snap, nil
		})
		if err != nil {
			return rp, err
		}
		if err := e.unreadShape(ctx, r, "nothing replayed"); err != nil {
			return rp, err
		}
		if r.snap != nil && !r.discovered {
			return rp, fmt.Errorf("%s; nothing was replayed", e.opts.ladder.noLadder(r))
		}
		req.To.Ladder = &r.ladder
	}
	plan, err := req.Plan(rp.scope)
	var (
		re *ops.RouteError
		nq *ops.NoQueueError
	)
	switch {
	case errors.As(err, &re):
		return rp, fmt.Errorf("nothing replayed: a message for %s would not reach %s: %v", topology.FormatDelay(re.Trace.Delay), re.Trace.Target, re.Err)
	case errors.As(err, &nq):
		return rp, fmt.Errorf("%v; nothing was replayed", nq)
	case err != nil:
		return rp, replayUsage(err)
	}
	rp.ReplayPlan = plan
	return rp, nil
}

// replayProgress prints a line to stderr every few seconds at a terminal.
func (v view) replayProgress() func(broker.MoveProgress) {
	if !v.Interactive || v.json {
		return nil
	}
	var last time.Time
	return func(p broker.MoveProgress) {
		if p.Done || time.Since(last) < 2*time.Second {
			return
		}
		last = time.Now()
		fmt.Fprintf(v.Err, "replay: %d moved, %d parked, %d kept, %.0f/s\n", p.Moved, p.Parked, p.Kept, p.Rate())
	}
}

func (v view) reportReplay(rf replayFlags, rp replayJob, res broker.MoveProgress) {
	if v.json {
		reasons := res.Reasons
		if reasons == nil {
			reasons = map[string]int{}
		}
		_ = writeJSON(v.Out, map[string]any{
			"source": rf.from, "destination": rp.Describe, "moved": res.Moved, "parked": res.Parked, "kept": res.Kept,
			"skipped": res.Skipped, "unknown": res.Unknown, "reconnects": res.Reconnects, "reasons": reasons,
			"stopped": res.Stopped, "seconds": res.Elapsed.Seconds(), "rate": res.Rate(), "source_ready": res.SourceReady,
		})
		return
	}
	for _, l := range ui.ReplayReport(res, rf.from, rp.Describe, rf.park, "--where") {
		fmt.Fprintln(v.Out, l)
	}
}

// replayPreview is one message of a replay's dry run: whether it moves,
// and where, or why it stays.
type replayPreview struct {
	Position   int      `json:"position"`
	MessageID  string   `json:"message_id"`
	Moves      bool     `json:"moves"`
	Exchange   string   `json:"exchange,omitempty"`
	RoutingKey string   `json:"routing_key,omitempty"`
	Reaches    []string `json:"reaches,omitempty"`
	Stays      string   `json:"stays,omitempty"`
}

// replayPreviews are ops' verdicts on each previewed message, as --json
// writes them.
func replayPreviews(previews []broker.MovePreview, scope *ops.BrokerView) []replayPreview {
	var out []replayPreview
	for _, v := range ops.ReplayVerdicts(previews, scope) {
		out = append(out, replayPreview(v))
	}
	return out
}

// dryRunReplay peeks and says where each message would go.
func (e *env) dryRunReplay(ctx context.Context, rf replayFlags, rp replayJob) error {
	n := defaultDryRun
	if rf.limit > 0 {
		n = min(rf.limit, broker.MaxPeek)
	}
	req := ops.PeekRequest{Queue: topology.Queue{Name: rf.from}, Unchecked: rp.snapErr}
	if rp.scope != nil {
		m, err := e.clients().management()
		if err != nil {
			return err
		}
		if req, err = ops.PeekIn(ctx, m, rp.scope.Snap, rf.from); err != nil {
			return err
		}
	}
	if _, err := e.view().gatePeek(req, false, e.config().ReadOnly); err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	previews, res, err := conn.PreviewMove(ctx, rp.Options, n)
	if err != nil {
		return err
	}
	out := replayPreviews(previews, rp.scope)
	if e.opts.json {
		if out == nil {
			out = []replayPreview{}
		}
		return writeJSON(e.Out, map[string]any{"source": rf.from, "ready": res.Ready, "previewed": len(out), "dry_run": true, "messages": out})
	}
	fmt.Fprintf(e.Out, "dry run: the first %d of %d ready message(s) of %s; nothing was moved\n", len(out), res.Ready, rf.from)
	rows := make([][]string, 0, len(out))
	for _, p := range out {
		id := p.MessageID
		if id == "" {
			id = "-"
		}
		row := []string{fmt.Sprintf("#%d", p.Position+1), id}
		if p.Moves {
			dest := "→ " + broker.Route{Exchange: p.Exchange, RoutingKey: p.RoutingKey}.String()
			if len(p.Reaches) > 0 {
				dest += " (reaches " + strings.Join(p.Reaches, ", ") + ")"
			}
			row = append(row, dest)
		} else {
			row = append(row, "stays: "+p.Stays)
		}
		rows = append(rows, row)
	}
	for _, l := range ui.AlignRows(rows) {
		fmt.Fprintln(e.Out, "  "+l)
	}
	return nil
}
