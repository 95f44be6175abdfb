package broker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/topology"
)

// publishWindow is how many messages may await their confirm at once. It
// keeps the pipe full on a slow link without letting one call queue up
// unbounded work on the broker.
const publishWindow = 512

// outcome is what became of one message of a Publish call.
type outcome uint8

const (
	unsent outcome = iota
	inFlight
	confirmed
	returned
	nacked
	failed
)

// publishRun is one Publish call's bookkeeping across channels.
type publishRun struct {
	msgs    []Message
	outcome []outcome
	// returns groups unroutable messages by exchange, key and reason, for
	// the error text.
	returns map[returnKey]int
}

type returnKey struct{ exchange, key, reason string }

// Publish implements Publisher. Each call uses its own channel in confirm
// mode with the mandatory flag. If the connection drops, messages awaiting
// a confirm count as Failed and the rest are sent once it is back (while
// ctx lasts). The counts are exact even when an error is returned.
//
// It reads outcomes from NotifyPublish rather than from deferred
// confirmations: amqp091 nacks every pending deferred confirmation when a
// channel closes, which would make a dropped connection look like the
// broker refusing the messages.
func (c *Conn) Publish(ctx context.Context, msgs []Message) (PublishResult, error) {
	run := &publishRun{msgs: msgs, outcome: make([]outcome, len(msgs)), returns: map[returnKey]int{}}
	if c.ep.readOnly {
		return run.result(), ErrReadOnly
	}
	var cause error
	for next := 0; next < len(msgs); {
		n, retry, err := c.publishOn(ctx, run, next)
		next = n
		if !retry {
			cause = err
			break
		}
		// The connection dropped mid-run: continue on the next one.
	}
	return run.result(), c.ep.redact(run.err(cause))
}

// publishOn publishes msgs[from:] on one channel. It returns where the next
// run starts, and retry=true if the connection dropped (not a channel error
// and not ctx), in which case the unsent rest may go out on a new one.
func (c *Conn) publishOn(ctx context.Context, run *publishRun, from int) (next int, retry bool, err error) {
	ch, conn, err := c.channel(ctx)
	if err != nil {
		return from, false, err
	}
	defer ch.Close()
	lost := func(err error) (int, bool, error) {
		if conn.IsClosed() && ctx.Err() == nil {
			return from, true, err
		}
		if ctx.Err() != nil {
			return from, false, ctx.Err()
		}
		return from, false, err
	}
	if err := checkExchanges(ch, run.msgs[from:], c.ep.vhost); err != nil {
		return lost(err)
	}
	if err := ch.Confirm(false); err != nil {
		return lost(fmt.Errorf("enable publisher confirms: %w", err))
	}
	// Capacity publishWindow: amqp091 drops a notification that waits more
	// than 5 s for a full listener, and at most publishWindow are pending.
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, publishWindow))
	closes := ch.NotifyClose(make(chan *amqp.Error, 1))
	returnsCh := ch.NotifyReturn(make(chan amqp.Return, 64))
	var rets []amqp.Return
	retsDone := make(chan struct{})
	go func() {
		defer close(retsDone)
		for r := range returnsCh {
			rets = append(rets, r)
		}
	}()

	sent := confirmLoop{ch: ch, confirms: confirms}.send(ctx, run, from)
	// Closing the channel closes the returns listener; every return came
	// before its message's confirm, so rets is then complete.
	_ = ch.Close()
	<-retsDone
	run.settle(sent.tags, sent.acked, rets)
	return sent.outcome(ctx, closes, conn)
}

// confirmLoop sends a run's messages on one channel in confirm mode, with
// at most publishWindow awaiting a confirm, then waits for the confirms of
// all it sent. Conn.Publish runs it on a channel of its own, a Stream on
// its long-lived one.
type confirmLoop struct {
	ch       *amqp.Channel
	confirms <-chan amqp.Confirmation
	// base is the delivery tags the channel used before this loop.
	base uint64
	// beforeConfirm runs as each confirm arrives, before it is counted.
	beforeConfirm func()
}

// loopResult is what a confirmLoop did: tags maps delivery tag - base - 1 to the
// message's index, acked counts the confirms taken.
type loopResult struct {
	next     int
	tags     []int
	acked    int
	chClosed bool
	badMsg   error
	// stalled is set when no confirm came for confirmStall while some
	// were due.
	stalled bool
}

// confirmStall is how long a publish waits for the next confirm before it
// gives up on those still due. A broker confirms within milliseconds, or
// seconds under load; one that says nothing for a minute while its
// connection stays open is blocked (a memory or disk alarm) or cannot
// reach a queue (a quorum queue without a leader after a restart, seen on
// RabbitMQ 3.10.8 in CI), and a publish that waits for it waits forever
// with nothing on the screen.
var confirmStall = time.Minute

func (l confirmLoop) send(ctx context.Context, run *publishRun, from int) loopResult {
	out := loopResult{next: from}
	quiet := time.NewTimer(confirmStall)
	defer quiet.Stop()
	// await takes one confirm; false when the channel closed, ctx ended
	// or no confirm came for confirmStall.
	await := func() bool {
		select {
		case <-quiet.C:
			out.stalled = true
			return false
		case cf, ok := <-l.confirms:
			if !ok {
				out.chClosed = true
				return false
			}
			quiet.Reset(confirmStall)
			if l.beforeConfirm != nil {
				l.beforeConfirm()
			}
			if i := int(cf.DeliveryTag-l.base) - 1; i >= 0 && i < len(out.tags) {
				if cf.Ack {
					run.outcome[out.tags[i]] = confirmed
				} else {
					run.outcome[out.tags[i]] = nacked
				}
			}
			out.acked++
			return true
		case <-ctx.Done():
			return false
		}
	}
	i := from
send:
	for ; i < len(run.msgs); i++ {
		for len(out.tags)-out.acked >= publishWindow {
			if !await() {
				break send
			}
		}
		if ctx.Err() != nil {
			break
		}
		if len(out.tags) == out.acked {
			// Nothing due: the quiet spell starts with the next send.
			quiet.Reset(confirmStall)
		}
		m := run.msgs[i]
		if err := l.ch.PublishWithContext(ctx, m.Exchange, m.RoutingKey, true, false, publishing(m)); err != nil {
			if !l.ch.IsClosed() && ctx.Err() == nil {
				// Not a channel problem: the message itself is bad (say, a
				// header type AMQP cannot encode). Stop sending, but still
				// collect the confirms of those already sent.
				out.badMsg = fmt.Errorf("message %d (id %q): %w", i, m.MessageID, err)
			}
			break
		}
		run.outcome[i] = inFlight
		out.tags = append(out.tags, i)
	}
	for out.acked < len(out.tags) && await() {
	}
	out.next = i
	out.chClosed = out.chClosed || l.ch.IsClosed()
	return out
}

// outcome is publishOn's answer for a loop that ended as s says: where the
// next run starts, and retry=true if the connection dropped (not a channel
// error and not ctx).
func (s loopResult) outcome(ctx context.Context, closes <-chan *amqp.Error, conn *amqp.Connection) (next int, retry bool, err error) {
	switch {
	case ctx.Err() != nil:
		return s.next, false, ctx.Err()
	case s.badMsg != nil:
		return s.next, false, s.badMsg
	case s.stalled:
		return s.next, false, fmt.Errorf("the broker confirmed nothing for %s while the connection stayed open: it may be blocking publishers (a memory or disk alarm) or a queue may have no leader", confirmStall)
	case s.chClosed:
		var cerr error = errors.New("channel closed")
		select {
		case aerr := <-closes:
			if aerr != nil {
				cerr = aerr
			}
		default:
		}
		if conn.IsClosed() {
			return s.next, true, fmt.Errorf("connection lost: %w", cerr)
		}
		return s.next, false, fmt.Errorf("channel closed by the broker: %w", cerr)
	}
	return s.next, false, nil
}

// settle matches returns to messages and marks those still in flight as
// failed. Returns arrive in publish order, so each one is matched to the
// next in-flight message with the same exchange, key and message id.
func (run *publishRun) settle(tags []int, acked int, rets []amqp.Return) {
	p := 0
	for _, r := range rets {
		for p < len(tags) {
			idx := tags[p]
			p++
			m := run.msgs[idx]
			if m.Exchange == r.Exchange && m.RoutingKey == r.RoutingKey && m.MessageID == r.MessageId {
				run.outcome[idx] = returned
				run.returns[returnKey{r.Exchange, r.RoutingKey, r.ReplyText}]++
				break
			}
		}
	}
	for _, idx := range tags[acked:] {
		if run.outcome[idx] == inFlight {
			run.outcome[idx] = failed
		}
	}
}

func (run *publishRun) result() PublishResult {
	var r PublishResult
	for _, o := range run.outcome {
		switch o {
		case confirmed:
			r.Confirmed++
		case returned:
			r.Returned++
		case nacked:
			r.Nacked++
		case failed, inFlight:
			r.Failed++
		default:
			r.Unsent++
		}
	}
	return r
}

// err explains every message that was not confirmed, or returns nil.
func (run *publishRun) err(cause error) error {
	r := run.result()
	total := len(run.msgs)
	var parts []string
	if r.Returned > 0 {
		keys := make([]returnKey, 0, len(run.returns))
		for k := range run.returns {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := keys[i], keys[j]
			if run.returns[a] != run.returns[b] {
				return run.returns[a] > run.returns[b]
			}
			if a.exchange != b.exchange {
				return a.exchange < b.exchange
			}
			return a.key < b.key
		})
		var why []string
		for i, k := range keys {
			if i == 3 {
				why = append(why, fmt.Sprintf("%d more", len(keys)-3))
				break
			}
			why = append(why, fmt.Sprintf("%d returned by exchange %q with key %q: %s", run.returns[k], k.exchange, k.key, k.reason))
		}
		parts = append(parts, fmt.Sprintf("%d of %d messages were unroutable (%s)", r.Returned, total, strings.Join(why, "; ")))
	}
	if r.Nacked > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d messages were refused by the broker (nack: a queue may be full with reject-publish overflow)", r.Nacked, total))
	}
	if r.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d messages have an unknown outcome: the broker did not confirm them (the connection dropped, or no confirm came), so they may or may not have been delivered", r.Failed, total))
	}
	if r.Unsent > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d messages were not sent", r.Unsent, total))
	}
	switch {
	case len(parts) == 0 && cause == nil:
		return nil
	case cause == nil:
		return errors.New(strings.Join(parts, "; "))
	case len(parts) == 0:
		return cause
	}
	return fmt.Errorf("%s: %w", strings.Join(parts, "; "), cause)
}

// checkExchanges makes sure every exchange the messages name exists, so that
// a typo is one clear error instead of a channel closed halfway through.
func checkExchanges(ch *amqp.Channel, msgs []Message, vhost string) error {
	seen := map[string]bool{"": true}
	for _, m := range msgs {
		if seen[m.Exchange] {
			continue
		}
		seen[m.Exchange] = true
		if err := ch.ExchangeDeclarePassive(m.Exchange, "topic", false, false, false, false, nil); err != nil {
			if isCode(err, amqp.NotFound) {
				return fmt.Errorf("exchange %q does not exist in vhost %q", m.Exchange, vhost)
			}
			return fmt.Errorf("check exchange %q: %w", m.Exchange, err)
		}
	}
	return nil
}

func publishing(m Message) amqp.Publishing {
	h := table(m.Headers) // a copy: the caller's map may be shared by a batch
	if len(m.BCC) > 0 {
		if h == nil {
			h = amqp.Table{}
		}
		h[topology.HeaderBCC] = topology.BCCValue(m.BCC)
	}
	p := amqp.Publishing{
		Headers:         h,
		ContentType:     m.ContentType,
		ContentEncoding: m.ContentEncoding,
		MessageId:       m.MessageID,
		CorrelationId:   m.CorrelationID,
		ReplyTo:         m.ReplyTo,
		Type:            m.Type,
		AppId:           m.AppID,
		Priority:        m.Priority,
		Timestamp:       m.Timestamp,
		Body:            m.Body,
	}
	if m.Persistent {
		p.DeliveryMode = amqp.Persistent
	}
	return p
}
