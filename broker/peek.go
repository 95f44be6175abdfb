package broker

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/topology"
)

// MaxPeek bounds how many messages one Peek reads: every one is held by the
// peeking channel (out of reach of consumers, and of expiry) until the peek
// ends.
const MaxPeek = 1000

// Properties are a message's AMQP properties beyond those Delivery has.
type Properties struct {
	ContentEncoding string
	CorrelationID   string
	ReplyTo         string
	Expiration      string // per-message TTL in ms, as text
	Type            string
	AppID           string
	UserID          string
	Priority        uint8
}

// PeekedMessage is a message read without removing it from its queue.
type PeekedMessage struct {
	Delivery
	Properties Properties
	// Position is the message's place in the queue, 0 being the head.
	Position int
	// DeliveryCount is the x-delivery-count a quorum queue reported: how
	// often the message had been handed back before this peek (which adds
	// one). -1 for a classic queue, which does not count.
	DeliveryCount int64
	// AcquiredCount is RabbitMQ 4.3's x-acquired-count: how often the
	// message had been handed out before this peek, returns included (a
	// peek's nack raises it but not DeliveryCount there). -1 when the
	// broker did not stamp it.
	AcquiredCount int64
}

// PeekResult is what a Peek saw.
type PeekResult struct {
	Queue    string
	Messages []PeekedMessage
	// Ready is how many ready messages the queue held when the peek began.
	Ready int
}

// Peek reads up to n messages from the head of a queue without removing
// them: it takes them with basic.get, unacknowledged, then hands them all
// back (basic.nack with requeue) and closes its channel.
//
// What that does to the messages (verified on RabbitMQ 3.10):
//   - They stay in the queue, in their order: a classic queue puts them
//     back where they were, a quorum queue at the head, where they were.
//   - Each is marked redelivered, as if a consumer had failed on it.
//   - A quorum queue raises each one's x-delivery-count. A queue with a
//     delivery limit (x-delivery-limit, a delivery-limit policy, or
//     RabbitMQ 4's default of 20) dead-letters a message handed back once
//     too often; from a rung of a quorum ladder that sends it on to the
//     next rung before its time. AssessPeek says when to refuse.
//   - Requeueing does not restart a message's TTL in either queue type: it
//     expires when it would have. While the peek holds a message it cannot
//     expire; one whose TTL passed meanwhile is dead-lettered as soon as it
//     is back (late by the length of the peek, never early).
//
// Read-only mode allows Peek: it removes nothing. Callers should still
// consult AssessPeek, which refuses quorum queues in read-only mode.
func (c *Conn) Peek(ctx context.Context, queue string, n int) (PeekResult, error) {
	res := PeekResult{Queue: queue}
	if n < 1 || n > MaxPeek {
		return res, fmt.Errorf("peek %q: count %d is not between 1 and %d", queue, n, MaxPeek)
	}
	err := c.steps(ctx, 1, func(ch *amqp.Channel, _ int) error {
		res.Messages, res.Ready = nil, 0
		q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
		if isCode(err, amqp.NotFound) {
			return fmt.Errorf("peek %q: no such queue in vhost %q", queue, c.ep.vhost)
		}
		if err != nil {
			return fmt.Errorf("peek %q: %w", queue, err)
		}
		res.Ready = q.Messages
		var last uint64
		for i := 0; i < n; i++ {
			m, ok, err := ch.Get(queue, false)
			if err != nil {
				return fmt.Errorf("peek %q: %w", queue, err)
			}
			if !ok {
				break
			}
			last = m.DeliveryTag
			res.Messages = append(res.Messages, peeked(m, i))
		}
		if last > 0 {
			// Hand every one back at once; closing the channel would too,
			// but an explicit requeue does not depend on how the close goes.
			if err := ch.Nack(last, true, true); err != nil {
				return fmt.Errorf("peek %q: put the messages back: %w", queue, err)
			}
		}
		return nil
	})
	return res, c.ep.redact(err)
}

func peeked(m amqp.Delivery, pos int) PeekedMessage {
	p := PeekedMessage{
		Delivery: newDelivery(m, false),
		Properties: Properties{
			ContentEncoding: m.ContentEncoding, CorrelationID: m.CorrelationId, ReplyTo: m.ReplyTo,
			Expiration: m.Expiration, Type: m.Type, AppID: m.AppId, UserID: m.UserId, Priority: m.Priority,
		},
		Position:      pos,
		DeliveryCount: -1,
		AcquiredCount: -1,
	}
	if n, ok := topology.HeaderInt(m.Headers[topology.HeaderDeliveryCount]); ok {
		p.DeliveryCount = n
	}
	if n, ok := topology.HeaderInt(m.Headers[topology.HeaderAcquiredCount]); ok {
		p.AcquiredCount = n
	}
	return p
}

// WithQueueType fills in the delivery counts a quorum queue leaves out.
// RabbitMQ 3.x stamps x-delivery-count 0 on a quorum message's first
// delivery, but 4.0 omits the header until the message is first handed
// back (and 4.3 until it is rejected or its channel closed: a nack does
// not count there), so on a quorum queue of any version an absent count
// is 0. A classic queue does not count: its messages keep -1.
func (r PeekResult) WithQueueType(t topology.QueueType) PeekResult {
	if t != topology.Quorum {
		return r
	}
	msgs := make([]PeekedMessage, len(r.Messages))
	for i, m := range r.Messages {
		if m.DeliveryCount < 0 {
			m.DeliveryCount = 0
		}
		msgs[i] = m
	}
	r.Messages = msgs
	return r
}

// PeekRisk is what peeking a queue would do beyond reading it.
type PeekRisk struct {
	Queue string
	Type  topology.QueueType
	// Rung is set when the queue is a rung of a known ladder.
	Rung   bool
	Ladder string
	// DeliveryLimit is the queue's effective delivery limit: > 0 a limit,
	// 0 none or unknown (LimitKnown false), -1 every hand-back
	// dead-letters (see topology.Version.DeliveryLimitOf).
	DeliveryLimit int
	LimitKnown    bool
	// NeedsForce means peeking can move messages (dead-letter them
	// early): refuse unless the operator insists.
	NeedsForce bool
	// ChangesBroker means peeking changes state that consumers and policies
	// see (quorum delivery counts): read-only mode refuses it.
	ChangesBroker bool
	// Why explains NeedsForce or ChangesBroker in a sentence or two.
	Why string
	// Effects lists, plainly, what peeking does to the messages.
	Effects []string
}

// Error is the refusal: why peeking needs --force, or read-only mode refuses.
func (r PeekRisk) Error() string { return r.Why }

// PeekFacts are what the peek rules need to know about a quorum queue
// beyond its declaration: the broker's release, the delivery limit in
// effect (Limit, LimitKnown: see Management.DeliveryLimit), and the
// sources of delayed retry that apply to it (see DelayedRetries).
type PeekFacts struct {
	Version        topology.Version
	Limit          int
	LimitKnown     bool
	DelayedRetries []topology.DelayedRetry
}

// PeekFacts reads the facts the peek rules weigh for q: the release (the
// oldest node's), its delivery limit, and, where the release honours
// delayed retry (4.3+), the arguments and policies that set it. A queue
// that is not quorum needs none of it.
func (m *Management) PeekFacts(ctx context.Context, vhost string, q topology.Queue) (PeekFacts, error) {
	var f PeekFacts
	if q.QueueType() != topology.Quorum {
		f.LimitKnown = true
		return f, nil
	}
	var err error
	if f.Version, err = m.Version(ctx); err != nil {
		return f, err
	}
	if f.Limit, f.LimitKnown, err = m.DeliveryLimit(ctx, vhost, q); err != nil {
		return f, err
	}
	if f.Version.QuorumDelayedRetry() {
		ps, err := m.Policies(ctx, vhost)
		if err != nil && !errors.Is(err, ErrUnauthorized) {
			return f, err
		}
		// Without the policies the arguments still tell.
		f.DelayedRetries = topology.DelayedRetries(q, ps)
	}
	return f, nil
}

// heldOnReturn is the delayed retry that holds a message a peek hands
// back: a peek returns messages with basic.nack, which RabbitMQ 4.3 treats
// as a return, so types all and returned apply and failed does not.
func heldOnReturn(ds []topology.DelayedRetry) (topology.DelayedRetry, bool) {
	for _, d := range ds {
		if d.Type == "all" || d.Type == "returned" {
			return d, true
		}
	}
	return topology.DelayedRetry{}, false
}

// AssessPeek says what peeking queue q does, given the ladders of its vhost
// and the facts of the queue (PeekFacts; the zero value for a classic
// queue). The rules differ by release, as measured on 3.10.8, 4.0.5 and
// 4.3.6:
//   - before 4.3 every hand-back raises a quorum message's
//     x-delivery-count, and a delivery limit dead-letters a message peeked
//     once too often, which from a rung is early: --force, unless the
//     rung is known to have no limit (as rungs declares its own);
//   - from 4.3 the peek's nack is a return, which raises only
//     x-acquired-count: a peek cannot push a message on early, and needs
//     no --force;
//   - but on 4.3 a delayed retry that applies to returns holds each
//     peeked message back for its delay, which on a rung makes the message
//     late by that much: --force.
func AssessPeek(q topology.Queue, ladders []topology.Ladder, f PeekFacts) PeekRisk {
	limit, known, v := f.Limit, f.LimitKnown, f.Version
	r := PeekRisk{Queue: q.Name, Type: q.QueueType(), DeliveryLimit: limit, LimitKnown: known}
	for _, l := range ladders {
		if role, _, ok := l.QueueRole(q.Name); ok && role == topology.RoleRung {
			r.Rung, r.Ladder = true, l.Name
			break
		}
	}
	r.Effects = append(r.Effects, "the messages stay in the queue, in their order, and are marked redelivered")
	if r.Type != topology.Quorum {
		r.Effects = append(r.Effects, "their TTLs are not restarted; a message cannot expire while the peek holds it (milliseconds)")
		return r
	}
	if v.QuorumRequeueNackCounts() {
		r.assessCountedPeek(q, limit, known)
	} else {
		r.Effects = append(r.Effects, fmt.Sprintf("RabbitMQ %s counts a peek in x-acquired-count only: x-delivery-count and delivery limits are untouched", v))
	}
	if d, ok := heldOnReturn(f.DelayedRetries); ok && v.QuorumDelayedRetry() {
		hold := topology.FormatSpan(d.Min)
		r.ChangesBroker = true
		r.Effects = append(r.Effects, fmt.Sprintf("delayed retry (%s) holds each peeked message back %s at least before it is ready again", d, hold))
		switch {
		case r.Rung:
			r.NeedsForce = true
			r.Why = fmt.Sprintf("%s is a rung of quorum ladder %s with delayed retry (%s): a peek hands each message back, and the broker holds it "+
				"%s at least before it can expire, so it reaches its target that much late", q.Name, r.Ladder, d, hold)
		case r.Why == "":
			r.Why = fmt.Sprintf("%s has delayed retry (%s): peeked messages are held back %s at least before consumers see them again", q.Name, d, hold)
		}
	}
	return r
}

// assessCountedPeek is the rule of releases where a peek's hand-back
// counts as a delivery (before 4.3).
func (r *PeekRisk) assessCountedPeek(q topology.Queue, limit int, known bool) {
	r.ChangesBroker = true
	r.Effects = append(r.Effects, "a quorum queue counts the peek as a delivery: each message's x-delivery-count rises by one")
	switch {
	case r.Rung && known && limit == 0:
		// rungs declares its quorum rungs so on 4.0-4.2
		// (topology.Plan.ForRelease), and 3.x has no default: the count
		// rises in this rung only (the next queue starts its own), and
		// no limit acts on it.
		r.Why = fmt.Sprintf("%s is a rung of quorum ladder %s with no delivery limit: peeking raises each message's x-delivery-count in this rung, "+
			"which nothing acts on, and cannot move a message on early", q.Name, r.Ladder)
	case r.Rung:
		r.NeedsForce = true
		r.Why = fmt.Sprintf("%s is a rung of quorum ladder %s: peeking raises each message's x-delivery-count, and with a delivery limit "+
			"(a delivery-limit policy, x-delivery-limit, or RabbitMQ 4's default of 20) a message peeked once too often is dead-lettered "+
			"into the next rung before its time", q.Name, r.Ladder)
		switch {
		case known && limit > 0:
			r.Why += fmt.Sprintf("; this queue's limit is %d", limit)
		case known && limit < 0:
			r.Why += "; this queue's negative limit dead-letters at the first hand-back"
		}
	case known && limit < 0:
		r.NeedsForce = true
		r.Why = fmt.Sprintf("%s is a quorum queue with a negative delivery limit, which RabbitMQ 3 applies at the first hand-back: "+
			"a peek would dead-letter every message it reads (move it to the dead-letter exchange, or drop it without one)", q.Name)
	case known && limit > 0:
		r.NeedsForce = true
		r.Why = fmt.Sprintf("%s is a quorum queue with a delivery limit of %d: a message handed back more than %d times is dead-lettered "+
			"(moved to its dead-letter exchange, or dropped without one), and every peek hands it back once", q.Name, limit, limit)
	default:
		r.Why = fmt.Sprintf("%s is a quorum queue: peeking raises each message's x-delivery-count, which delivery limits act on", q.Name)
		if !known {
			r.Effects = append(r.Effects, "the queue's delivery limit could not be read (policies need the policymaker or monitoring tag)")
		}
	}
}

// DeliveryLimit reads the delivery limit in effect on a quorum queue: the
// least of its x-delivery-limit argument, the delivery-limit of the policy
// and of the operator policy that apply to it, or the broker's default
// when none sets one (20 from RabbitMQ 4.0). known is false when the
// policies could not be read (the user lacks the tag); 0 with known true
// means no limit, -1 that every hand-back dead-letters.
func (m *Management) DeliveryLimit(ctx context.Context, vhost string, q topology.Queue) (limit int, known bool, err error) {
	if q.Stats.DeliveryLimitReported {
		// The broker's own figure (4.3+) already folds in arguments,
		// policies, operator policies and its default.
		return q.Stats.DeliveryLimit, true, nil
	}
	ver, err := m.Version(ctx)
	if err != nil {
		return 0, false, err
	}
	var policies, operator []topology.Policy
	v := url.PathEscape(vhost)
	if err := m.get(ctx, "policies/"+v, nil, &policies); err != nil {
		if errors.Is(err, ErrUnauthorized) {
			return EffectiveDeliveryLimit(q, nil, nil, ver), false, nil
		}
		return 0, false, err
	}
	if err := m.get(ctx, "operator-policies/"+v, nil, &operator); err != nil && !errors.Is(err, ErrUnauthorized) && !errors.Is(err, ErrNotFound) {
		return 0, false, err
	}
	return EffectiveDeliveryLimit(q, policies, operator, ver), true, nil
}

// EffectiveDeliveryLimit applies RabbitMQ's rule for broker version v: of
// the policies matching the queue, the one with the highest priority
// applies; of the queue argument, the policy and the operator policy, the
// strictest limit wins; when none of them sets one, the release's default
// applies. The result reads as topology.Version.DeliveryLimitOf's.
func EffectiveDeliveryLimit(q topology.Queue, policies, operator []topology.Policy, v topology.Version) int {
	limit, set := 0, false
	take := func(raw any) {
		// 0 is taken as unset: what a release makes of it is not
		// documented, and assuming the default errs on the careful side.
		if n, ok := topology.HeaderInt(raw); ok && n != 0 {
			limit, set = minLimit(limit, v.DeliveryLimitOf(n)), true
		}
	}
	take(q.Args["x-delivery-limit"])
	for _, ps := range [][]topology.Policy{policies, operator} {
		var match []topology.Policy
		for _, p := range ps {
			if p.Applies(q) {
				match = append(match, p)
			}
		}
		if len(match) == 0 {
			continue
		}
		sort.SliceStable(match, func(i, j int) bool {
			if match[i].Priority != match[j].Priority {
				return match[i].Priority > match[j].Priority
			}
			return match[i].Name < match[j].Name
		})
		take(match[0].Definition["delivery-limit"])
	}
	if !set {
		return v.QuorumDefaultDeliveryLimit()
	}
	return limit
}

// minLimit is the stricter of two limits, 0 meaning none and -1 the
// strictest of all.
func minLimit(a, b int) int {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}
