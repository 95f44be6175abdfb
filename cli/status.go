package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

func (e *env) statusCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show ladders with the depth of every rung",
		Long: `status reads the vhost through the management API, finds every ladder and
shows each rung's TTL, depth (ready / unacked), consumers and rates, then the
done, unroutable, destination and dead-letter queues, and says which rung
looks stuck and how the ladder drifted from its plan. With --ladder it shows
that ladder only. On ladders above radix 2 (15 rungs a level) the rungs that
are empty and quiet are left out unless --all; --json always lists them.
On RabbitMQ 4.3 it lists under the ladders the quorum queues with delayed
retry among those it read for them (rungs, destinations, targets) and,
without --ladder, those a delayed-retry policy names (^name$): the messages
each holds back (messages_delayed), its type, hold and what sets it. The
vhost's other queues are rungs discover --delays' (docs/delays.md).`,
		Example: `  rungs status
  rungs status --ladder jobs --all
  rungs status --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.runStatus(cmd.Context(), e.opts.ladder.named(), all)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "list every rung, idle ones too")
	return cmd
}

func (e *env) runStatus(ctx context.Context, only string, all bool) error {
	req := ops.StatusRequest{Vhost: e.vhost(), Ladder: only}
	insp, err := e.clients().reader()
	if err != nil {
		return err
	}
	var retry health.RetryHold
	rep, err := observe(ctx, e.view(), insp, req.Scope(), req.CheckFound, e.readUnrouted, func(ctx context.Context, o ops.Observer) ops.Observer {
		retry = e.readRetry(ctx, o.Snapshot().Queues, req.Beside())
		return o
	})
	if err != nil {
		return err
	}
	rep = rep.WithRetry(retry)
	var bridges []topology.Bridge
	if req.Beside() {
		bridges = e.readBridges(ctx)
	}
	if e.opts.json {
		return writeJSON(e.Out, toJSONStatusReport(rep, bridges))
	}
	e.view().printStatus(rep, bridges, e.vhost(), all)
	return nil
}

// printStatus shows each ladder's rungs (idle ones folded unless all),
// forecast and drain, then what delayed retry holds, the storm judged as
// one and the bridges.
func (v view) printStatus(rep health.Report, bridges []topology.Bridge, vhost string, all bool) {
	width := v.width()
	retry := ui.RetryText(rep.Retry, width) + ui.RetryScopeText(rep.Retry, width)
	if len(rep.Ladders) == 0 {
		fmt.Fprintf(v.Out, "no ladders in vhost %s\n", vhost)
		if retry != "" {
			fmt.Fprint(v.Out, "\n", retry)
		}
		v.printBridgeLines(bridges)
		return
	}
	for i, lr := range rep.Ladders {
		if i > 0 {
			fmt.Fprintln(v.Out)
		}
		rows, folded := health.StatusRows(lr, all)
		fmt.Fprint(v.Out, ui.LadderText(lr, rows, folded, width))
		if lr.Forecast.Messages > 0 {
			fmt.Fprint(v.Out, "\n", ui.ForecastText(lr.Forecast, width))
		}
		if d := ui.DrainText(lr.Totals, lr.Drain, width); d != "" {
			fmt.Fprint(v.Out, "\n", d)
		}
		if d := ui.DestText(lr.Drain, width); d != "" {
			fmt.Fprint(v.Out, "\n", d)
		}
	}
	if retry != "" {
		fmt.Fprint(v.Out, "\n", retry)
	}
	// The storm judged as one, where it is both a ladder's backlog and
	// messages delayed retry holds: each part above says its own.
	if st := rep.Storm(); st.Backlog > 0 && st.Held > 0 {
		fmt.Fprint(v.Out, "\n", ui.StormText(st, width))
	}
	v.printBridgeLines(bridges)
}

// readRetry reads what RabbitMQ 4.3's delayed retry holds in the queues
// status read for its ladders, qs, and with beside (no --ladder) in the
// queues a delayed-retry policy names (ops.ReadRetryBeside): nothing, and
// no request, before 4.3. It walks no listing of the vhost, so what it
// costs follows the ladders, as status' own read does (docs/delays.md);
// the vhost's inventory, discover --delays, reads every queue. A failed
// read is said on stderr and leaves the ladders shown: it is beside
// them, not part of them.
func (e *env) readRetry(ctx context.Context, qs []topology.Queue, beside bool) health.RetryHold {
	m, err := e.clients().management()
	if err != nil {
		return health.RetryHold{}
	}
	cctx, cancel := context.WithTimeout(ctx, e.clients().cfg.Timeout)
	defer cancel()
	version := func() (topology.Version, error) { return e.clients().brokerVersion(ctx) }
	h, err := ops.ReadRetryBeside(cctx, m, version, e.vhost(), qs, beside)
	if err != nil {
		fmt.Fprintf(e.Err, "cannot read the queues under delayed retry: %v\n", err)
		return health.RetryHold{}
	}
	return h
}

type jsonQueue struct {
	Role    string `json:"role,omitempty"`
	Level   *int   `json:"level,omitempty"`
	Digit   *int   `json:"digit,omitempty"`
	Queue   string `json:"queue"`
	TTLMS   *int64 `json:"ttl_ms,omitempty"`
	Present bool   `json:"present"`
	Ready   int64  `json:"ready"`
	Unacked int64  `json:"unacked"`
	// Expired messages wait to be dead-lettered (quorum rungs only);
	// Stalled says they have not drained (health.Row.Stalled), Stuck that
	// the rung does not drain for another reason (health.Row.Stuck).
	Expired      int64 `json:"expired"`
	ExpiredBytes int64 `json:"expired_bytes"`
	// Delayed messages are held back by RabbitMQ 4.3's quorum delayed
	// retry (messages_delayed); on a rung, beyond its TTL.
	Delayed   int64   `json:"delayed"`
	Stalled   bool    `json:"stalled,omitempty"`
	Stuck     bool    `json:"stuck,omitempty"`
	Consumers int64   `json:"consumers"`
	InRate    float64 `json:"in_rate"`
	OutRate   float64 `json:"out_rate"`

	// Backlogged: expired messages wait while messages leave (a storm
	// draining, health.Row.Backlogged); never also Stalled.
	Backlogged bool `json:"backlogged,omitempty"`

	// Where it runs: the leader's node, and for a quorum queue its members,
	// those online and those lost (members not online), as the broker
	// reported them; absent when it did not.
	Leader      string   `json:"leader,omitempty"`
	Members     []string `json:"members,omitempty"`
	Online      []string `json:"online,omitempty"`
	LostMembers []string `json:"lost_members,omitempty"`
}

// withPlacement adds where the queue runs.
func (q jsonQueue) withPlacement(s topology.QueueStats) jsonQueue {
	q.Leader, q.Members, q.Online, q.LostMembers = s.Leader, s.Members, s.Online, s.LostMembers()
	return q
}

func toJSONStatus(ls []health.LadderReport) any {
	out := []map[string]any{}
	for _, lr := range ls {
		l := lr.Found.Ladder
		var rungs, terms []jsonQueue
		byQueue := map[string]health.Row{}
		for _, r := range lr.Rows {
			byQueue[r.Queue] = r
			if r.Kind != health.RungRow {
				continue
			}
			level, digit, ttl, s := r.Level, r.Digit, ms(r.TTL), r.Stats
			rungs = append(rungs, jsonQueue{
				Role: "rung", Level: &level, Digit: &digit, Queue: r.Queue, TTLMS: &ttl, Present: !r.Missing,
				Ready: s.Ready, Unacked: s.Unacked, Expired: s.Expired, ExpiredBytes: s.ExpiredBytes, Delayed: s.Delayed, Stalled: r.Stalled, Stuck: r.Stuck,
				Consumers: s.Consumers, InRate: r.InRate, OutRate: r.OutRate, Backlogged: r.Backlogged,
			}.withPlacement(s))
		}
		ts := l.Terminals()
		for _, t := range l.Targets {
			ts = append(ts, topology.Terminal{Role: "target", Queue: t})
		}
		for _, t := range ts {
			r, listed := byQueue[t.Queue]
			s := r.Stats
			terms = append(terms, jsonQueue{Role: t.Role, Queue: t.Queue, Present: listed && !r.Missing, Ready: s.Ready, Unacked: s.Unacked, Delayed: s.Delayed, Consumers: s.Consumers, InRate: s.PublishRate, OutRate: s.DeliverRate}.withPlacement(s))
		}
		tt := lr.Totals
		out = append(out, map[string]any{
			"ladder": toJSONLadder(l), "in_flight": tt.InFlight, "delayed": tt.Delayed, "unroutable": tt.Unroutable, "stalled": tt.Stalled, "stuck": tt.Stuck,
			"drift": toJSONDrift(lr.Found.Drift), "rungs": rungs, "terminals": terms,
			"forecast":   toJSONForecast(lr.Forecast),
			"backlogged": tt.Backlogged, "backlog": tt.Backlog, "drain": toJSONDrain(lr.Drain),
			"members_lost": tt.MembersLost, "no_quorum": tt.NoQuorum, "leaders": lr.Placement.Leaders,
			"leaders_on_one_node": lr.Placement.OneNode(),
		})
	}
	return out
}

// toJSONDrain is the ladder's measured drain: hops a second over the span
// read, hops left, and when backlogged the predicted finish and lateness
// (ms from the moment of the statistics; 0 when unknown).
func toJSONDrain(d health.Drain) map[string]any {
	out := map[string]any{"hops_per_s": d.Capacity, "span_ms": ms(d.Span), "hops_left": d.Hops, "finish_ms": ms(d.Finish), "late_ms": ms(d.Late),
		"slowest_hops_per_s": d.Slowest, "fastest_hops_per_s": d.Fastest, "finish_fast_ms": ms(d.FinishFast),
		"in_per_s": d.In, "out_per_s": d.Out, "trend": d.Trend()}
	// Only where the readings show a queue the ladder delivers to moving:
	// a single reading shows none, and its answer stays as it was.
	if len(d.Dests) > 0 {
		dests := make([]map[string]any, 0, len(d.Dests))
		for _, f := range d.Dests {
			dests = append(dests, map[string]any{"queue": f.Queue, "done": f.Done, "in_per_s": f.In, "taken_per_s": f.Taken,
				"net_per_s": f.Net(), "trend": f.Trend(), "messages": f.Depth, "span_ms": ms(f.Span), "finish_ms": ms(f.Finish())})
		}
		out["destinations"] = dests
	}
	return out
}

type jsonDue struct {
	Within   string `json:"within"`
	WithinMS *int64 `json:"within_ms"` // null for "later"
	Min      int64  `json:"min"`
	Max      int64  `json:"max"`
	Estimate int64  `json:"estimate"`
}

type jsonRungForecast struct {
	Queue      string `json:"queue"`
	Messages   int64  `json:"messages"`
	Held       int64  `json:"held"`
	EarliestMS int64  `json:"earliest_ms"`
	LatestMS   *int64 `json:"latest_ms"` // null when unknown
	Unknown    bool   `json:"unknown"`
}

// toJSONForecast is the forecast in --json: counts due within each
// horizon with their bounds, and each busy rung's arrival window, in ms
// from the moment of the statistics.
func toJSONForecast(fc topology.Forecast) map[string]any {
	due := []jsonDue{}
	for _, d := range fc.Due {
		by := ms(d.By)
		due = append(due, jsonDue{topology.FormatHorizon(d.By), &by, d.Min, d.Max, d.Estimate})
	}
	due = append(due, jsonDue{"later", nil, fc.Later.Min, fc.Later.Max, fc.Later.Estimate})
	rungs := []jsonRungForecast{}
	for _, r := range fc.Rungs {
		if r.Messages == 0 && r.Held == 0 {
			continue
		}
		jr := jsonRungForecast{Queue: r.Rung.Queue, Messages: r.Messages, Held: r.Held, EarliestMS: ms(r.Earliest), Unknown: r.Unknown}
		if !r.Unknown {
			l := ms(r.Latest)
			jr.LatestMS = &l
		}
		rungs = append(rungs, jr)
	}
	out := map[string]any{
		"messages": fc.Messages, "held": fc.Held, "unknown": fc.Unknown,
		"earliest_ms": ms(fc.Earliest), "latest_ms": nil, "due": due, "rungs": rungs,
	}
	if fc.Unknown == 0 {
		out["latest_ms"] = ms(fc.Latest)
	}
	if fc.Dest != "" {
		out["destination"] = fc.Dest
	}
	return out
}

// printBridges adds a line per bridge of the vhost (rungs bridge): its
// intake's depth and lag, what is due and not yet out, what it parked.
// A bridge is not a ladder, so a failed read is a warning, not an error.
func (e *env) printBridges(ctx context.Context) {
	e.view().printBridgeLines(e.readBridges(ctx))
}

// printBridgeLines is a line per bridge, after a blank line.
func (v view) printBridgeLines(bs []topology.Bridge) {
	if len(bs) > 0 {
		fmt.Fprintln(v.Out)
	}
	for _, b := range bs {
		fmt.Fprintln(v.Out, b.Describe())
	}
}

// readBridges reads the vhost's bridges; a failed read is a warning on
// stderr and none, as they are beside the ladders, not part of them.
func (e *env) readBridges(ctx context.Context) []topology.Bridge {
	m, err := e.clients().management()
	if err != nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	bs, err := ops.ReadBridges(cctx, m, e.vhost(), ops.ReachScoped)
	if err != nil {
		fmt.Fprintln(e.Err, "rungs: warning: "+oneLine(broker.Redact(fmt.Sprintf("could not read the bridges: %v", err))))
		return nil
	}
	return bs
}

// toJSONStatusReport is status --json: the ladders, and for the whole
// vhost the queues under delayed retry (read on 4.3 only:
// delayed_retry_read), the bridges and the storm judgement.
func toJSONStatusReport(rep health.Report, bridges []topology.Bridge) map[string]any {
	return map[string]any{"ladders": toJSONStatus(rep.Ladders), "delayed_retry": toJSONRetry(rep.Retry.Queues), "delayed_retry_read": rep.Retry.Read,
		"delayed_retry_scope": toJSONRetryScope(rep.Retry), "bridges": toJSONBridges(bridges), "storm": toJSONStorm(rep.Storm())}
}

// toJSONRetryScope is what the delayed-retry read looked at: the ladders'
// queues (reach "ladders"), how many, the queues outside them a policy
// names, read by name, and whether the policies could be read; null where
// nothing was read (before 4.3). The rest of the vhost is the
// inventory's (whole_vhost names the command).
func toJSONRetryScope(h health.RetryHold) any {
	if !h.Read {
		return nil
	}
	sc := h.Scope
	reach := "vhost"
	if sc.Ladders {
		reach = "ladders"
	}
	named := append([]string{}, sc.Named...)
	return map[string]any{"reach": reach, "ladder_queues": sc.Queues, "policy_named": named, "policies_read": !sc.PoliciesUnread,
		"whole_vhost": "rungs discover --delays"}
}

// toJSONStorm is the storm judgement: the ladders' backlog and what
// delayed retry holds back, each queue once.
func toJSONStorm(s health.Storm) map[string]any {
	return map[string]any{"messages": s.Messages(), "backlog": s.Backlog, "backlogged_rungs": s.Backlogged, "backlogged_ladders": s.Ladders,
		"held_by_delayed_retry": s.Held, "holding_queues": s.HeldIn, "text": s.Text()}
}

// jsonBridge is a bridge in --json, with the figures its line shows.
type jsonBridge struct {
	Exchange        string `json:"exchange"`
	Intake          string `json:"intake_queue"`
	IntakeMessages  int64  `json:"intake_messages"`
	IntakeConsumers int64  `json:"intake_consumers"`
	LagMS           int64  `json:"lag_ms"`
	Due             string `json:"due_queue,omitempty"`
	DueMessages     *int64 `json:"due_messages,omitempty"`
	Parked          string `json:"parked_queue,omitempty"`
	ParkedMessages  *int64 `json:"parked_messages,omitempty"`
}

func toJSONBridges(bs []topology.Bridge) []jsonBridge {
	out := []jsonBridge{}
	for _, b := range bs {
		in := b.Intake.Stats
		jb := jsonBridge{Exchange: b.Exchange, Intake: b.Intake.Name, IntakeMessages: in.Ready + in.Unacked, IntakeConsumers: in.Consumers, LagMS: b.Lag().Milliseconds()}
		if b.HasDue {
			n := b.Due.Stats.Ready + b.Due.Stats.Unacked
			jb.Due, jb.DueMessages = b.Due.Name, &n
		}
		if b.HasParked {
			n := b.Parked.Stats.Ready + b.Parked.Stats.Unacked
			jb.Parked, jb.ParkedMessages = b.Parked.Name, &n
		}
		out = append(out, jb)
	}
	return out
}
