package ui

import (
	"encoding/base64"
	"time"
	"unicode/utf8"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// JSONPeek is peek --json.
type JSONPeek struct {
	Queue     string        `json:"queue"`
	QueueType string        `json:"queue_type,omitempty"`
	Ready     int           `json:"ready"`
	Peeked    int           `json:"peeked"`
	Effects   []string      `json:"effects"`
	Messages  []JSONMessage `json:"messages"`
}

// JSONMessage is one peeked message of peek --json.
type JSONMessage struct {
	Position      int            `json:"position"`
	MessageID     string         `json:"message_id"`
	Exchange      string         `json:"exchange"`
	RoutingKey    string         `json:"routing_key"`
	Redelivered   bool           `json:"redelivered"`
	DeliveryCount *int64         `json:"delivery_count"`
	Properties    map[string]any `json:"properties"`
	Headers       map[string]any `json:"headers"`
	BodyBytes     int            `json:"body_bytes"`
	Body          *string        `json:"body"`
	BodyBase64    string         `json:"body_base64,omitempty"`
	Deaths        []JSONDeath    `json:"deaths"`
	// SavedDeaths is x-rungs-x-death: the x-death a replay into a ladder
	// set aside, which the broker would otherwise act on.
	SavedDeaths []JSONDeath   `json:"saved_deaths"`
	History     []JSONAttempt `json:"history"`
	// Path is a direct ladder message's route, rebuilt from its routing
	// key: the broker strips the BCC header that carries it.
	Path *JSONPath `json:"path,omitempty"`
}

// JSONPath is a direct ladder message's route in peek --json.
type JSONPath struct {
	DelayMS int64     `json:"delay_ms"`
	BCC     []string  `json:"bcc"`
	Hops    []JSONHop `json:"hops"`
	Target  string    `json:"target"`
}

// JSONDeath is one hop of an x-death timeline in peek --json.
type JSONDeath struct {
	Queue       string   `json:"queue"`
	Reason      string   `json:"reason"`
	Exchange    string   `json:"exchange"`
	RoutingKeys []string `json:"routing_keys"`
	Count       int64    `json:"count"`
	Time        string   `json:"time,omitempty"`
	SinceMS     int64    `json:"since_ms"`
	Ladder      string   `json:"ladder,omitempty"`
	Role        string   `json:"role,omitempty"`
	Level       *int     `json:"level,omitempty"`
	TTLMS       int64    `json:"ttl_ms,omitempty"`
}

// JSONAttempt is one attempt of a retried job's history in peek --json.
type JSONAttempt struct {
	Attempt int    `json:"attempt"`
	At      string `json:"at,omitempty"`
	Reason  string `json:"reason"`
	Queue   string `json:"queue,omitempty"`
	DelayMS int64  `json:"delay_ms"`
	Parked  bool   `json:"parked"`
}

// JSONHop is one rung of a trace, in trace --json and a peeked path.
type JSONHop struct {
	Level   int    `json:"level"`
	Digit   int    `json:"digit"`
	Queue   string `json:"queue"`
	TTLMS   int64  `json:"ttl_ms"`
	StartMS int64  `json:"start_ms"`
	EndMS   int64  `json:"end_ms"`
}

// JSONHops are a trace's hops, never null.
func JSONHops(hops []topology.Hop) []JSONHop {
	out := []JSONHop{}
	for _, h := range hops {
		out = append(out, JSONHop{h.Level, h.Digit, h.Queue, h.TTL.Milliseconds(), h.Start.Milliseconds(), h.End.Milliseconds()})
	}
	return out
}

// peekStays is what a peek does to the messages when the gate named no
// effects: an unchecked queue still gets its messages back.
const peekStays = "the messages stay in the queue, in their order, and are marked redelivered"

// PeekJSON is peek --json of res, each message with its story.
func PeekJSON(res broker.PeekResult, stories []topology.Story, g ops.PeekGate) JSONPeek {
	out := JSONPeek{Queue: res.Queue, Ready: res.Ready, Peeked: len(res.Messages), Effects: g.Risk.Effects, Messages: []JSONMessage{}}
	if g.Checked {
		out.QueueType = string(g.Risk.Type)
	}
	if out.Effects == nil {
		out.Effects = []string{peekStays}
	}
	for i, m := range res.Messages {
		out.Messages = append(out.Messages, messageJSON(m, stories[i]))
	}
	return out
}

func messageJSON(m broker.PeekedMessage, story topology.Story) JSONMessage {
	jm := JSONMessage{
		Position: m.Position, MessageID: m.MessageID, Exchange: m.Exchange, RoutingKey: m.RoutingKey,
		Redelivered: m.Redelivered, BodyBytes: len(m.Body), Headers: map[string]any{},
		Properties: propertiesJSON(m), Deaths: DeathsJSON(story.Hops), SavedDeaths: DeathsJSON(story.Saved),
		History: attemptsJSON(story.Retries),
	}
	// A negative count is one the broker did not give (a classic queue).
	if m.DeliveryCount >= 0 {
		c := m.DeliveryCount
		jm.DeliveryCount = &c
	}
	for k, v := range m.Headers {
		jm.Headers[k] = JSONSafe(v)
	}
	if utf8.Valid(m.Body) {
		s := string(m.Body)
		jm.Body = &s
	} else {
		jm.BodyBase64 = base64.StdEncoding.EncodeToString(m.Body)
	}
	if tr := story.Path; tr != nil {
		jm.Path = &JSONPath{DelayMS: tr.Delay.Milliseconds(), BCC: tr.BCC, Hops: JSONHops(tr.Hops), Target: tr.Target}
	}
	return jm
}

// propertiesJSON are the properties a message was given: persistence
// always, the others only when set.
func propertiesJSON(m broker.PeekedMessage) map[string]any {
	out := map[string]any{"persistent": m.Persistent}
	props := map[string]string{
		"content_type": m.ContentType, "content_encoding": m.Properties.ContentEncoding,
		"correlation_id": m.Properties.CorrelationID, "reply_to": m.Properties.ReplyTo,
		"expiration": m.Properties.Expiration, "type": m.Properties.Type, "app_id": m.Properties.AppID,
		"user_id": m.Properties.UserID,
	}
	for k, v := range props {
		if v != "" {
			out[k] = v
		}
	}
	if m.Properties.Priority > 0 {
		out["priority"] = m.Properties.Priority
	}
	if !m.Timestamp.IsZero() {
		out["timestamp"] = m.Timestamp.UTC().Format(time.RFC3339)
	}
	return out
}

func attemptsJSON(retries []topology.Attempt) []JSONAttempt {
	out := []JSONAttempt{}
	for _, a := range retries {
		ja := JSONAttempt{Attempt: a.N, Reason: a.Reason, Queue: a.Queue, DelayMS: a.Delay.Milliseconds(), Parked: a.Parked}
		if !a.At.IsZero() {
			ja.At = a.At.UTC().Format(time.RFC3339)
		}
		out = append(out, ja)
	}
	return out
}

// DeathsJSON writes an x-death timeline, oldest first, never null.
func DeathsJSON(hops []topology.DeathHop) []JSONDeath {
	out := []JSONDeath{}
	for _, h := range hops {
		jd := JSONDeath{Queue: h.Queue, Reason: h.Reason, Exchange: h.Exchange, RoutingKeys: h.RoutingKeys, Count: h.Count,
			SinceMS: h.Since.Milliseconds(), Ladder: h.Ladder, Role: h.Role}
		if jd.RoutingKeys == nil {
			jd.RoutingKeys = []string{}
		}
		if !h.Time.IsZero() {
			jd.Time = h.Time.UTC().Format(time.RFC3339)
		}
		// Only a rung has a level and a TTL of its own.
		if h.Role == topology.RoleRung {
			level := h.Rung.Level
			jd.Level, jd.TTLMS = &level, h.Rung.TTL.Milliseconds()
		}
		out = append(out, jd)
	}
	return out
}

// TraceJSON is trace --json: ladder is the ladder as the CLI's JSON
// shows it everywhere.
func TraceJSON(tr topology.Trace, c ops.RouteCheck, ladder any) map[string]any {
	out := map[string]any{
		"ladder": ladder, "requested_ms": tr.Requested.Milliseconds(), "delay_ms": tr.Delay.Milliseconds(),
		"delay": topology.FormatDelay(tr.Delay), "routing_key": tr.Key, "exchange": tr.Exchange,
		"destination": tr.Dest, "hops": JSONHops(tr.Hops), "target": tr.Target, "total_ms": tr.Total().Milliseconds(),
		"checked": c.Checked,
		// What a producer sets besides exchange and routing key: {} for
		// layouts that route by the key alone, {"BCC": [...]} for direct.
		"headers": map[string]any{},
	}
	if h := tr.Headers(); h != nil {
		out["headers"] = h
	}
	if c.Err != nil {
		out["broken"] = c.Err.Error()
	}
	return out
}

// ReplayPreview is one message of a replay's dry run: whether it moves,
// and where, or why it stays.
type ReplayPreview struct {
	Position   int      `json:"position"`
	MessageID  string   `json:"message_id"`
	Moves      bool     `json:"moves"`
	Exchange   string   `json:"exchange,omitempty"`
	RoutingKey string   `json:"routing_key,omitempty"`
	Reaches    []string `json:"reaches,omitempty"`
	Stays      string   `json:"stays,omitempty"`
}

// DryRunJSON is replay --dry-run --json.
func DryRunJSON(source string, dry ops.ReplayDryRun) map[string]any {
	out := make([]ReplayPreview, 0, len(dry.Verdicts))
	for _, p := range dry.Verdicts {
		out = append(out, ReplayPreview(p))
	}
	return map[string]any{"source": source, "ready": dry.Ready, "previewed": len(out), "dry_run": true, "messages": out}
}

// ReplayReportJSON is rungs replay --json's report of a replay from
// source to destination (the plan's description).
func ReplayReportJSON(res broker.MoveProgress, source, destination string) map[string]any {
	reasons := res.Reasons
	if reasons == nil {
		reasons = map[string]int{}
	}
	return map[string]any{
		"source": source, "destination": destination, "moved": res.Moved, "parked": res.Parked, "kept": res.Kept,
		"skipped": res.Skipped, "unknown": res.Unknown, "reconnects": res.Reconnects, "reasons": reasons,
		"stopped": res.Stopped, "seconds": res.Elapsed.Seconds(), "rate": res.Rate(), "source_ready": res.SourceReady,
	}
}

// PublishJSON is rungs publish --json's report.
func PublishJSON(tr topology.Trace, r broker.PublishResult, asked int, took time.Duration) map[string]any {
	return map[string]any{
		"requested": asked, "confirmed": r.Confirmed, "returned": r.Returned, "nacked": r.Nacked, "failed": r.Failed,
		"routing_key": tr.Key, "exchange": tr.Exchange, "target": tr.Target, "delay_ms": tr.Delay.Milliseconds(),
		"arrives_in": topology.FormatDelay(tr.Delay), "seconds": took.Seconds(),
	}
}
