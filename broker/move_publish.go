package broker

import (
	"context"
	"fmt"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/topology"
)

// The republishing half of a run (see move_run.go for taking messages off
// the source): copies go out under the window and the rate limit, their
// confirms and returns settle them, and only then is the source copy
// acknowledged.

// bucketWait is how long the rate limit holds back the next publish; 0
// when nothing waits or nothing could go anyway.
func (r *moveRun) bucketWait() time.Duration {
	if r.m.bucket == nil || len(r.pending) == 0 || len(r.inflight) >= r.m.o.Window {
		return 0
	}
	return r.m.bucket.wait(time.Now())
}

// publishPending republishes pending messages while the window and the
// rate allow.
func (r *moveRun) publishPending(ctx context.Context) error {
	m := r.m
	for len(r.pending) > 0 && len(r.inflight) < m.o.Window && ctx.Err() == nil {
		if m.bucket != nil && !m.bucket.take(time.Now()) {
			return nil
		}
		e := r.pending[0]
		r.pending[0] = nil
		r.pending = r.pending[1:]
		if err := r.publish(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

func (r *moveRun) publish(ctx context.Context, e *entry) error {
	m := r.m
	m.seq++
	e.id = m.run + "." + strconv.Itoa(m.seq)
	e.returned = ""
	msg := m.copyOf(e)
	ex, key := e.route.Exchange, e.route.RoutingKey
	if e.park {
		ex, key = "", m.o.Park
	}
	seq := r.pub.GetNextPublishSeqNo()
	if err := r.pub.PublishWithContext(ctx, ex, key, true, false, msg); err != nil {
		switch {
		case r.pub.IsClosed():
			r.held++ // not sent: back to the source with the channel
			return r.channelClosed("publishing", nil)
		case ctx.Err() != nil:
			r.held++ // the loop handles the cancellation
			return nil
		}
		// The message itself cannot be encoded (a header AMQP cannot
		// carry): keep it on the source.
		r.hold("cannot republish: "+err.Error(), false)
		return nil
	}
	r.inflight[seq] = e
	r.byID[e.id] = e
	return nil
}

// copyOf builds the republished copy: every property, the headers, plus
// rungs' replay headers.
func (m *mover) copyOf(e *entry) amqp.Publishing {
	d := e.d
	h := make(amqp.Table, len(d.Headers)+5)
	for k, v := range d.Headers {
		h[k] = v
	}
	delete(h, topology.HeaderDeliveryCount)
	delete(h, topology.HeaderAcquiredCount)
	if e.route.SaveDeath {
		if deaths, ok := h[topology.HeaderDeath].([]any); ok {
			saved, _ := h[topology.HeaderSavedDeath].([]any)
			h[topology.HeaderSavedDeath] = append(append([]any(nil), deaths...), saved...)
		}
		h = amqp.Table(topology.StripBrokerHeaders(h))
	}
	if !e.park || e.route.Park != "" {
		for k, v := range e.stamp {
			h[k] = fieldValue(v)
		}
	}
	if !e.park && len(e.route.BCC) > 0 {
		h[topology.HeaderBCC] = topology.BCCValue(e.route.BCC)
	}
	now := time.Now().UTC().Truncate(time.Second)
	if e.park {
		h[topology.HeaderReason] = topology.CutReason(e.why)
		h[topology.HeaderQueue] = m.o.Source
		h[topology.HeaderParkedAt] = now
	} else {
		n, _ := topology.HeaderInt(h[topology.HeaderReplayed])
		h[topology.HeaderReplayed] = n + 1
		h[topology.HeaderReplayedFrom] = m.o.Source
		h[topology.HeaderReplayedAt] = now
	}
	h[topology.HeaderReplayID] = e.id
	p := amqp.Publishing{
		Headers: h, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding,
		DeliveryMode: d.DeliveryMode, Priority: d.Priority, CorrelationId: d.CorrelationId,
		ReplyTo: d.ReplyTo, Expiration: d.Expiration, MessageId: d.MessageId, Timestamp: d.Timestamp,
		Type: d.Type, UserId: d.UserId, AppId: d.AppId, Body: d.Body,
	}
	if (e.route.SaveDeath || e.park) && p.Expiration != "" {
		// Into a ladder, a per-message TTL shorter than a rung's would
		// expire the copy early into the next level, and it would arrive
		// before its delay; in a parking queue it would expire and be
		// dropped (a retry tier's message carries one). Keep the value as
		// a header instead.
		h["x-rungs-expiration"] = p.Expiration
		p.Expiration = ""
	}
	if p.UserId != "" && p.UserId != m.c.ep.amqpURI.Username {
		// The broker refuses a user-id other than the connection's (and
		// closes the channel); keep it as a header instead.
		h["x-rungs-user-id"] = p.UserId
		p.UserId = ""
	}
	return p
}

// noteReturn marks the copy a basic.return is about. Returns come before
// their message's confirm, on the same channel.
func (r *moveRun) noteReturn(ret amqp.Return) {
	id, _ := ret.Headers[topology.HeaderReplayID].(string)
	e, ok := r.byID[id]
	if !ok {
		return
	}
	e.returned = fmt.Sprintf("unroutable: %s (%d %s)", Route{Exchange: ret.Exchange, RoutingKey: ret.RoutingKey}, ret.ReplyCode, ret.ReplyText)
}

// drainReturns reads every return already delivered, so that a confirm is
// never handled before the return that came ahead of it.
func (r *moveRun) drainReturns() {
	for {
		select {
		case ret := <-r.returns:
			r.noteReturn(ret)
		default:
			return
		}
	}
}

// settle handles one confirm: remove the source copy, park, or keep it.
func (r *moveRun) settle(cf amqp.Confirmation) error {
	m := r.m
	e, ok := r.inflight[cf.DeliveryTag]
	if !ok {
		return nil
	}
	delete(r.inflight, cf.DeliveryTag)
	delete(r.byID, e.id)
	switch {
	case !cf.Ack:
		r.hold("refused by the broker (nack): a queue may be full with reject-publish overflow", false)
		r.stop(StopRefused)
		return nil
	case e.returned != "" && !e.park && m.o.Park != "":
		e.park, e.why = true, e.returned
		r.pending = append([]*entry{e}, r.pending...)
		return nil
	case e.returned != "":
		r.hold(e.returned, false)
		return nil
	}
	if r.remaining > 0 && !r.stopping && r.acked+1+r.prefetch > r.remaining {
		r.deferred = append(r.deferred, e)
		return nil
	}
	return r.ack(e)
}

// ack removes a moved message from the source and counts it.
func (r *moveRun) ack(e *entry) error {
	m := r.m
	if err := r.src.Ack(e.d.DeliveryTag, false); err != nil {
		// Confirmed at the target, but the source keeps its copy.
		m.p.Unknown++
		return r.lost(fmt.Errorf("acknowledge on the source: %w", err))
	}
	r.unsynced++
	r.acked++
	if e.park {
		m.p.Parked++
		m.p.Reasons[e.why]++
	} else {
		m.p.Moved++
	}
	return nil
}

// ackDeferred sends the acks held back for the limit once the consumer is
// cancelled (stop waits for the broker's cancel-ok), when no ack can bring
// another delivery.
func (r *moveRun) ackDeferred() error {
	if !r.stopping || len(r.deferred) == 0 {
		return nil
	}
	for len(r.deferred) > 0 {
		e := r.deferred[0]
		r.deferred = r.deferred[1:]
		if err := r.ack(e); err != nil {
			return err
		}
	}
	return nil
}

// bucket is a token bucket: rate tokens a second, up to a twentieth of a
// second's worth (at least one) at once.
type bucket struct {
	rate, tokens, burst float64
	last                time.Time
}

func newBucket(rate float64, now time.Time) *bucket {
	burst := max(1, rate/20)
	return &bucket{rate: rate, tokens: 1, burst: burst, last: now}
}

func (b *bucket) refill(now time.Time) {
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
}

func (b *bucket) take(now time.Time) bool {
	b.refill(now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (b *bucket) wait(now time.Time) time.Duration {
	b.refill(now)
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
}
