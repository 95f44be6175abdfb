package cli

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// defaultPeekBody is how much of each body peek prints unless told.
const defaultPeekBody = ui.DefaultMaxBody

func (e *env) peekCommand() *cobra.Command {
	var n, maxBody int
	var force bool
	cmd := &cobra.Command{
		Use:   "peek QUEUE",
		Short: "Show the first messages of a queue without removing them",
		Long: `peek reads the first N messages of a queue and puts them back: their
properties, headers, body (text, pretty JSON, or hex for binary) and their
x-death history drawn as a timeline of hops, oldest first, with each queue's
place in the ladders of the vhost. Jobs retried by rungs' retry library show
their retry history (x-rungs-history) too.

Peeking takes the messages with basic.get and hands them back, so:
  - they stay in the queue, in their order, but are marked redelivered;
  - their TTLs are not restarted (a message held by the peek cannot expire
    meanwhile, and is dead-lettered right after if its time passed: late by
    milliseconds, never early);
  - what a quorum queue counts depends on the release (measured on 3.10.8,
    4.0.5 and 4.3.6):
    - before RabbitMQ 4.3 it counts the peek as a delivery
      (x-delivery-count + 1). With a delivery limit (x-delivery-limit, a
      delivery-limit policy, RabbitMQ 4's default of 20) a message peeked
      once too often is dead-lettered; from a rung of a quorum ladder that
      pushes it into the next rung early. peek refuses quorum rungs with a
      delivery limit (or one it cannot read) and quorum queues with a limit
      unless --force, and --read-only refuses quorum queues altogether.
      rungs apply declares its quorum rungs with no limit on RabbitMQ 4.0
      to 4.2 (x-delivery-limit -1; 3.x has no default), so their peeks need
      no --force; rungs declared by an older rungs keep 4's default of 20;
    - from RabbitMQ 4.3 the hand-back is a return: x-delivery-count stays
      (0 for a message never delivered) and x-acquired-count rises, so no
      delivery limit acts and peek needs no --force. Only a delayed retry
      on the queue (4.3's delayed-retry arguments or policy) holds each
      peeked message back: peek refuses such a rung unless --force, and
      --read-only refuses such a queue.

--read-only allows peeking classic queues: nothing is removed or changed but
the redelivered flag.`,
		Example: `  rungs peek jobs.parked
  rungs peek orders.dlq -n 50 --json
  rungs peek jobs.rung.03 --force     # a quorum rung with a delivery limit, before RabbitMQ 4.3: see above`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.runPeek(cmd.Context(), args[0], n, maxBody, force)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&n, "count", "n", 10, fmt.Sprintf("number of messages to show (1 to %d)", broker.MaxPeek))
	f.IntVar(&maxBody, "max-body", defaultPeekBody, "bytes of each body to print (0: all)")
	f.BoolVar(&force, "force", false, "peek a quorum queue where peeking can dead-letter messages early (before RabbitMQ 4.3) or hold them back (a 4.3 delayed retry)")
	return cmd
}

// peekPlan is what runPeek learned before peeking.
type peekPlan struct {
	gate    ops.PeekGate
	ladders []topology.Ladder
	insp    ops.ScopedInspector // nil without the management API
}

func (e *env) runPeek(ctx context.Context, queue string, n, maxBody int, force bool) error {
	if n < 1 || n > broker.MaxPeek {
		return usageErr("--count must be between 1 and %d, got %d", broker.MaxPeek, n)
	}
	if maxBody < 0 {
		return usageErr("--max-body cannot be negative")
	}
	pp, err := e.assessPeek(ctx, queue, force)
	if err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	res, err := conn.Peek(ctx, queue, n)
	if err != nil {
		return err
	}
	res = res.WithQueueType(pp.gate.Risk.Type)
	ladders := pp.ladders
	if pp.insp != nil {
		ladders = ops.ReadStoryLadders(ctx, pp.insp, e.vhost(), res, ladders)
	}
	stories := ops.PeekStories(res, ladders)
	if e.opts.json {
		return writeJSON(e.Out, toJSONPeek(res, stories, pp.gate))
	}
	e.view().printPeek(res, stories, pp.gate, maxBody)
	return nil
}

// assessPeek reads what ops.ReadPeek reads of the queue, by name, and
// decides whether peeking may go ahead.
func (e *env) assessPeek(ctx context.Context, queue string, force bool) (peekPlan, error) {
	m, err := e.clients().management()
	if err != nil {
		return e.view().gatePeek(ops.PeekRequest{Queue: topology.Queue{Name: queue}, Unchecked: err}, force, e.config().ReadOnly)
	}
	insp := ops.Bounded{Insp: m, Timeout: e.opts.timeout}
	req, err := ops.ReadPeek(ctx, insp, m, e.vhost(), queue)
	if err != nil {
		return peekPlan{}, err
	}
	pp, err := e.view().gatePeek(req, force, e.config().ReadOnly)
	if req.Unchecked == nil {
		pp.insp = insp
	}
	return pp, err
}

// gatePeek words ops.GatePeek's verdict on req.
func (v view) gatePeek(req ops.PeekRequest, force, readOnly bool) (peekPlan, error) {
	req.Force, req.ReadOnly = force, readOnly
	pp := peekPlan{ladders: req.Ladders}
	queue := req.Queue.Name
	pp.gate = ops.GatePeek(req)
	switch g := pp.gate; {
	case g.Verdict == ops.PeekReadOnly:
		return pp, fmt.Errorf("peek %s: %w: %s", queue, broker.ErrReadOnly, g.Why)
	case g.Verdict == ops.PeekNeedsForce && !g.Checked:
		return pp, usageErr("%s; add --force to peek anyway", g.Why)
	case g.Verdict == ops.PeekNeedsForce:
		return pp, usageErr("refusing to peek %s: %s; add --force to peek anyway", queue, g.Why)
	case g.Note != "" && !g.Checked:
		fmt.Fprintf(v.Err, "rungs: warning: %s\n", g.Note)
	case g.Note != "":
		fmt.Fprintf(v.Err, "rungs: note: %s\n", g.Note)
	}
	return pp, nil
}

func (v view) printPeek(res broker.PeekResult, stories []topology.Story, g ops.PeekGate, maxBody int) {
	w := v.Out
	qt := ""
	if g.Checked {
		qt = fmt.Sprintf(" (%s queue)", g.Risk.Type)
	}
	fmt.Fprintf(w, "%s: %d of %d ready message(s), from the head%s\n", res.Queue, len(res.Messages), res.Ready, qt)
	if len(res.Messages) > 0 {
		fmt.Fprintln(w, "peeking left them in the queue, in order, marked redelivered")
	}
	for i, m := range res.Messages {
		fmt.Fprintln(w)
		for _, l := range ui.MessageText(m, stories[i], maxBody) {
			fmt.Fprintln(w, l)
		}
	}
}

// jsonPeek is peek --json.
type jsonPeek struct {
	Queue     string        `json:"queue"`
	QueueType string        `json:"queue_type,omitempty"`
	Ready     int           `json:"ready"`
	Peeked    int           `json:"peeked"`
	Effects   []string      `json:"effects"`
	Messages  []jsonMessage `json:"messages"`
}

type jsonMessage struct {
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
	Deaths        []jsonDeath    `json:"deaths"`
	// SavedDeaths is x-rungs-x-death: the x-death a replay into a ladder
	// set aside, which the broker would otherwise act on.
	SavedDeaths []jsonDeath   `json:"saved_deaths"`
	History     []jsonAttempt `json:"history"`
	// Path is a direct ladder message's route, rebuilt from its routing
	// key: the broker strips the BCC header that carries it.
	Path *jsonPath `json:"path,omitempty"`
}

type jsonPath struct {
	DelayMS int64     `json:"delay_ms"`
	BCC     []string  `json:"bcc"`
	Hops    []jsonHop `json:"hops"`
	Target  string    `json:"target"`
}

type jsonDeath struct {
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

type jsonAttempt struct {
	Attempt int    `json:"attempt"`
	At      string `json:"at,omitempty"`
	Reason  string `json:"reason"`
	Queue   string `json:"queue,omitempty"`
	DelayMS int64  `json:"delay_ms"`
	Parked  bool   `json:"parked"`
}

func toJSONPeek(res broker.PeekResult, stories []topology.Story, g ops.PeekGate) jsonPeek {
	out := jsonPeek{Queue: res.Queue, Ready: res.Ready, Peeked: len(res.Messages), Effects: g.Risk.Effects, Messages: []jsonMessage{}}
	if g.Checked {
		out.QueueType = string(g.Risk.Type)
	}
	if out.Effects == nil {
		out.Effects = []string{"the messages stay in the queue, in their order, and are marked redelivered"}
	}
	for i, m := range res.Messages {
		story := stories[i]
		jm := jsonMessage{
			Position: m.Position, MessageID: m.MessageID, Exchange: m.Exchange, RoutingKey: m.RoutingKey,
			Redelivered: m.Redelivered, BodyBytes: len(m.Body), Headers: map[string]any{},
			Properties: map[string]any{"persistent": m.Persistent}, Deaths: toJSONDeaths(story.Hops), SavedDeaths: toJSONDeaths(story.Saved),
			History: []jsonAttempt{},
		}
		if m.DeliveryCount >= 0 {
			c := m.DeliveryCount
			jm.DeliveryCount = &c
		}
		props := map[string]string{
			"content_type": m.ContentType, "content_encoding": m.Properties.ContentEncoding,
			"correlation_id": m.Properties.CorrelationID, "reply_to": m.Properties.ReplyTo,
			"expiration": m.Properties.Expiration, "type": m.Properties.Type, "app_id": m.Properties.AppID,
			"user_id": m.Properties.UserID,
		}
		for k, v := range props {
			if v != "" {
				jm.Properties[k] = v
			}
		}
		if m.Properties.Priority > 0 {
			jm.Properties["priority"] = m.Properties.Priority
		}
		if !m.Timestamp.IsZero() {
			jm.Properties["timestamp"] = m.Timestamp.UTC().Format(time.RFC3339)
		}
		for k, v := range m.Headers {
			jm.Headers[k] = ui.JSONSafe(v)
		}
		if utf8.Valid(m.Body) {
			s := string(m.Body)
			jm.Body = &s
		} else {
			jm.BodyBase64 = base64.StdEncoding.EncodeToString(m.Body)
		}
		if tr := story.Path; tr != nil {
			jm.Path = &jsonPath{DelayMS: ms(tr.Delay), BCC: tr.BCC, Hops: []jsonHop{}, Target: tr.Target}
			for _, h := range tr.Hops {
				jm.Path.Hops = append(jm.Path.Hops, jsonHop{h.Level, h.Digit, h.Queue, ms(h.TTL), ms(h.Start), ms(h.End)})
			}
		}
		for _, a := range story.Retries {
			ja := jsonAttempt{Attempt: a.N, Reason: a.Reason, Queue: a.Queue, DelayMS: a.Delay.Milliseconds(), Parked: a.Parked}
			if !a.At.IsZero() {
				ja.At = a.At.UTC().Format(time.RFC3339)
			}
			jm.History = append(jm.History, ja)
		}
		out.Messages = append(out.Messages, jm)
	}
	return out
}

// toJSONDeaths writes an x-death timeline, oldest first.
func toJSONDeaths(hops []topology.DeathHop) []jsonDeath {
	out := []jsonDeath{}
	for _, h := range hops {
		jd := jsonDeath{Queue: h.Queue, Reason: h.Reason, Exchange: h.Exchange, RoutingKeys: h.RoutingKeys, Count: h.Count,
			SinceMS: h.Since.Milliseconds(), Ladder: h.Ladder, Role: h.Role}
		if jd.RoutingKeys == nil {
			jd.RoutingKeys = []string{}
		}
		if !h.Time.IsZero() {
			jd.Time = h.Time.UTC().Format(time.RFC3339)
		}
		if h.Role == topology.RoleRung {
			level := h.Rung.Level
			jd.Level, jd.TTLMS = &level, h.Rung.TTL.Milliseconds()
		}
		out = append(out, jd)
	}
	return out
}
