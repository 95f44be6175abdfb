package ui

import (
	"time"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// The --json shapes of status, discover --delays and the bridges beside
// them. Field order and tags are the output's: scripts read them.

// statusMS is a duration as --json gives it, in milliseconds.
func statusMS(d time.Duration) int64 { return d.Milliseconds() }

// JSONQueue is a rung or terminal queue of a ladder in status --json.
type JSONQueue struct {
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
func (q JSONQueue) withPlacement(s topology.QueueStats) JSONQueue {
	q.Leader, q.Members, q.Online, q.LostMembers = s.Leader, s.Members, s.Online, s.LostMembers()
	return q
}

// StatusJSON is each ladder of status --json. The ladder and its drift
// are shaped by the caller, as plan and apply shape them too.
func StatusJSON(ls []health.LadderReport, ladder func(topology.Ladder) any, drift func([]topology.Drift) any) []map[string]any {
	out := []map[string]any{}
	for _, lr := range ls {
		l := lr.Found.Ladder
		rungs, byQueue := statusRungsJSON(lr.Rows)
		tt := lr.Totals
		out = append(out, map[string]any{
			"ladder": ladder(l), "in_flight": tt.InFlight, "delayed": tt.Delayed, "unroutable": tt.Unroutable, "stalled": tt.Stalled, "stuck": tt.Stuck,
			"drift": drift(lr.Found.Drift), "rungs": rungs, "terminals": statusTerminalsJSON(l, byQueue),
			"forecast":   ForecastJSON(lr.Forecast),
			"backlogged": tt.Backlogged, "backlog": tt.Backlog, "drain": DrainJSON(lr.Drain),
			"members_lost": tt.MembersLost, "no_quorum": tt.NoQuorum, "leaders": lr.Placement.Leaders,
			"leaders_on_one_node": lr.Placement.OneNode(),
		})
	}
	return out
}

// statusRungsJSON is the ladder's rungs, and every row by queue for its
// terminals.
func statusRungsJSON(rows []health.Row) ([]JSONQueue, map[string]health.Row) {
	var rungs []JSONQueue
	byQueue := map[string]health.Row{}
	for _, r := range rows {
		byQueue[r.Queue] = r
		if r.Kind != health.RungRow {
			continue
		}
		level, digit, ttl, s := r.Level, r.Digit, statusMS(r.TTL), r.Stats
		rungs = append(rungs, JSONQueue{
			Role: "rung", Level: &level, Digit: &digit, Queue: r.Queue, TTLMS: &ttl, Present: !r.Missing,
			Ready: s.Ready, Unacked: s.Unacked, Expired: s.Expired, ExpiredBytes: s.ExpiredBytes, Delayed: s.Delayed, Stalled: r.Stalled, Stuck: r.Stuck,
			Consumers: s.Consumers, InRate: r.InRate, OutRate: r.OutRate, Backlogged: r.Backlogged,
		}.withPlacement(s))
	}
	return rungs, byQueue
}

// statusTerminalsJSON is the ladder's terminals and targets; one not
// listed is not present.
func statusTerminalsJSON(l topology.Ladder, byQueue map[string]health.Row) []JSONQueue {
	var terms []JSONQueue
	ts := l.Terminals()
	for _, t := range l.Targets {
		ts = append(ts, topology.Terminal{Role: "target", Queue: t})
	}
	for _, t := range ts {
		r, listed := byQueue[t.Queue]
		s := r.Stats
		terms = append(terms, JSONQueue{Role: t.Role, Queue: t.Queue, Present: listed && !r.Missing, Ready: s.Ready, Unacked: s.Unacked, Delayed: s.Delayed, Consumers: s.Consumers, InRate: s.PublishRate, OutRate: s.DeliverRate}.withPlacement(s))
	}
	return terms
}

// DrainJSON is the ladder's measured drain: hops a second over the span
// read, hops left, and when backlogged the predicted finish and lateness
// (ms from the moment of the statistics; 0 when unknown).
func DrainJSON(d health.Drain) map[string]any {
	out := map[string]any{"hops_per_s": d.Capacity, "span_ms": statusMS(d.Span), "hops_left": d.Hops, "finish_ms": statusMS(d.Finish), "late_ms": statusMS(d.Late),
		"slowest_hops_per_s": d.Slowest, "fastest_hops_per_s": d.Fastest, "finish_fast_ms": statusMS(d.FinishFast),
		"in_per_s": d.In, "out_per_s": d.Out, "trend": d.Trend()}
	// Only where the readings show a queue the ladder delivers to moving:
	// a single reading shows none, and its answer stays as it was.
	if len(d.Dests) > 0 {
		dests := make([]map[string]any, 0, len(d.Dests))
		for _, f := range d.Dests {
			dests = append(dests, map[string]any{"queue": f.Queue, "done": f.Done, "in_per_s": f.In, "taken_per_s": f.Taken,
				"net_per_s": f.Net(), "trend": f.Trend(), "messages": f.Depth, "span_ms": statusMS(f.Span), "finish_ms": statusMS(f.Finish())})
		}
		out["destinations"] = dests
	}
	return out
}

// JSONDue is how many messages are due within a horizon.
type JSONDue struct {
	Within   string `json:"within"`
	WithinMS *int64 `json:"within_ms"` // null for "later"
	Min      int64  `json:"min"`
	Max      int64  `json:"max"`
	Estimate int64  `json:"estimate"`
}

// JSONRungForecast is a busy rung's arrival window.
type JSONRungForecast struct {
	Queue      string `json:"queue"`
	Messages   int64  `json:"messages"`
	Held       int64  `json:"held"`
	EarliestMS int64  `json:"earliest_ms"`
	LatestMS   *int64 `json:"latest_ms"` // null when unknown
	Unknown    bool   `json:"unknown"`
}

// ForecastJSON is the forecast in --json: counts due within each
// horizon with their bounds, and each busy rung's arrival window, in ms
// from the moment of the statistics.
func ForecastJSON(fc topology.Forecast) map[string]any {
	due := []JSONDue{}
	for _, d := range fc.Due {
		by := statusMS(d.By)
		due = append(due, JSONDue{topology.FormatHorizon(d.By), &by, d.Min, d.Max, d.Estimate})
	}
	due = append(due, JSONDue{"later", nil, fc.Later.Min, fc.Later.Max, fc.Later.Estimate})
	out := map[string]any{
		"messages": fc.Messages, "held": fc.Held, "unknown": fc.Unknown,
		"earliest_ms": statusMS(fc.Earliest), "latest_ms": nil, "due": due, "rungs": forecastRungsJSON(fc.Rungs),
	}
	if fc.Unknown == 0 {
		out["latest_ms"] = statusMS(fc.Latest)
	}
	if fc.Dest != "" {
		out["destination"] = fc.Dest
	}
	return out
}

// forecastRungsJSON is the rungs that hold something; an unknown
// rung's latest arrival is null.
func forecastRungsJSON(rs []topology.RungForecast) []JSONRungForecast {
	rungs := []JSONRungForecast{}
	for _, r := range rs {
		if r.Messages == 0 && r.Held == 0 {
			continue
		}
		jr := JSONRungForecast{Queue: r.Rung.Queue, Messages: r.Messages, Held: r.Held, EarliestMS: statusMS(r.Earliest), Unknown: r.Unknown}
		if !r.Unknown {
			l := statusMS(r.Latest)
			jr.LatestMS = &l
		}
		rungs = append(rungs, jr)
	}
	return rungs
}

// StatusReportJSON is status --json: the ladders (StatusJSON), and for
// the whole vhost the queues under delayed retry (read on 4.3 only:
// delayed_retry_read), the bridges and the storm judgement.
func StatusReportJSON(ladders any, rep health.Report, bridges []topology.Bridge) map[string]any {
	return map[string]any{"ladders": ladders, "delayed_retry": RetryJSON(rep.Retry.Queues), "delayed_retry_read": rep.Retry.Read,
		"delayed_retry_scope": RetryScopeJSON(rep.Retry), "bridges": BridgesJSON(bridges), "storm": StormJSON(rep.Storm())}
}

// RetryScopeJSON is what the delayed-retry read looked at: the ladders'
// queues (reach "ladders"), how many, the queues outside them a policy
// names, read by name, and whether the policies could be read; null where
// nothing was read (before 4.3). The rest of the vhost is the
// inventory's (whole_vhost names the command).
func RetryScopeJSON(h health.RetryHold) any {
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

// StormJSON is the storm judgement: the ladders' backlog and what
// delayed retry holds back, each queue once.
func StormJSON(s health.Storm) map[string]any {
	return map[string]any{"messages": s.Messages(), "backlog": s.Backlog, "backlogged_rungs": s.Backlogged, "backlogged_ladders": s.Ladders,
		"held_by_delayed_retry": s.Held, "holding_queues": s.HeldIn, "text": s.Text()}
}

// JSONBridge is a bridge in --json, with the figures its line shows.
type JSONBridge struct {
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

// BridgesJSON is the vhost's bridges; a queue a bridge has not is left
// out.
func BridgesJSON(bs []topology.Bridge) []JSONBridge {
	out := []JSONBridge{}
	for _, b := range bs {
		in := b.Intake.Stats
		jb := JSONBridge{Exchange: b.Exchange, Intake: b.Intake.Name, IntakeMessages: in.Ready + in.Unacked, IntakeConsumers: in.Consumers, LagMS: b.Lag().Milliseconds()}
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

// JSONDelayQueue is a delay queue outside ladders in discover --delays
// --json.
type JSONDelayQueue struct {
	Name               string   `json:"name"`
	TTLMS              int64    `json:"ttl_ms"`
	PerMessage         bool     `json:"per_message_ttl"`
	DeadLetterExchange string   `json:"dead_letter_exchange"`
	DeadLetterKey      *string  `json:"dead_letter_routing_key"` // null: each message's own key
	ExpiresMS          int64    `json:"expires_ms,omitempty"`
	Type               string   `json:"type"`
	Durable            bool     `json:"durable"`
	DeliveryLimit      int64    `json:"delivery_limit,omitempty"`
	Messages           int64    `json:"messages"`
	OldestMS           int64    `json:"oldest_ms"`
	Destinations       []string `json:"destinations"`
	// Consumers on a delay queue take its messages before their delay,
	// or left less than a statistics interval ago.
	Consumers int64 `json:"consumers"`
}

// DelaysJSON is the inventories in --json.
func DelaysJSON(invs []topology.Inventory) []map[string]any {
	out := []map[string]any{}
	for _, inv := range invs {
		groups := []map[string]any{}
		for _, g := range inv.Groups {
			groups = append(groups, map[string]any{
				"id": g.ID(), "app": g.App, "name": g.Name, "queues": delayQueuesJSON(g.Queues), "messages": g.Messages,
				"oldest_ms": g.Oldest.Milliseconds(), "dead_letter_to": g.DeadLetterTo,
			})
		}
		out = append(out, map[string]any{"vhost": inv.Vhost, "groups": groups, "plugin_exchanges": pluginsJSON(inv.Plugins),
			"delayed_retry": RetryJSON(inv.Retry), "delayed_retry_read": inv.RetryRead})
	}
	return out
}

// delayQueuesJSON is a group's queues; one that keeps each message's
// routing key has a null key.
func delayQueuesJSON(qs []topology.DelayQueue) []JSONDelayQueue {
	out := []JSONDelayQueue{}
	for _, q := range qs {
		jq := JSONDelayQueue{
			Name: q.Name, TTLMS: q.TTL.Milliseconds(), PerMessage: q.PerMessage,
			DeadLetterExchange: q.DeadLetterExchange, ExpiresMS: q.Expires.Milliseconds(),
			Type: string(q.Type), Durable: q.Durable, DeliveryLimit: q.DeliveryLimit,
			Messages: q.Messages, OldestMS: q.Oldest.Milliseconds(), Destinations: append([]string{}, q.Destinations...),
			Consumers: q.Consumers,
		}
		if !q.KeepsKey {
			k := q.DeadLetterKey
			jq.DeadLetterKey = &k
		}
		out = append(out, jq)
	}
	return out
}

// pluginsJSON is the delayed-message plugin's exchanges; messages_delayed
// is null where the broker reported none.
func pluginsJSON(ps []topology.PluginExchange) []map[string]any {
	plugins := []map[string]any{}
	for _, p := range ps {
		var n *int64
		if p.Reported {
			v := p.Delayed
			n = &v
		}
		plugins = append(plugins, map[string]any{"name": p.Name, "delayed_type": p.DelayedType, "durable": p.Durable, "messages_delayed": n})
	}
	return plugins
}

// JSONRetryQueue is a quorum queue under delayed retry in --json.
type JSONRetryQueue struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	MinMS int64  `json:"min_ms"`
	MaxMS int64  `json:"max_ms,omitempty"`
	// Source is argument, policy or operator policy; Policy names it.
	Source string `json:"source"`
	Policy string `json:"policy,omitempty"`
	// Ignored: the release does not honour the source (4.3.0's policies).
	Ignored bool `json:"ignored,omitempty"`
	// MessagesDelayed is null where the broker reported no figure.
	MessagesDelayed *int64 `json:"messages_delayed"`
	Ready           int64  `json:"ready"`
	Unacked         int64  `json:"unacked"`
	DeliveryLimit   *int   `json:"delivery_limit"` // null: unknown; 0: none
	Consumers       int64  `json:"consumers"`
}

// RetryJSON is the queues under delayed retry.
func RetryJSON(qs []topology.RetryQueue) []JSONRetryQueue {
	out := []JSONRetryQueue{}
	for _, q := range qs {
		jq := JSONRetryQueue{Name: q.Name, Type: q.Type, MinMS: q.Min.Milliseconds(), MaxMS: q.Max.Milliseconds(),
			Source: q.Source, Policy: q.Policy, Ignored: q.Ignored, Ready: q.Ready, Unacked: q.Unacked, Consumers: q.Consumers}
		if q.Reported {
			n := q.Delayed
			jq.MessagesDelayed = &n
		}
		if q.LimitKnown {
			n := q.DeliveryLimit
			jq.DeliveryLimit = &n
		}
		out = append(out, jq)
	}
	return out
}
