package bridge

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// kind is where a copy goes.
type kind uint8

const (
	toLadder  kind = iota
	toExit         // no delay: straight out
	toExitDue      // out of the ladder, due
	toPark
)

// outgoing is one source message and the copy that settles it.
type outgoing struct {
	d      broker.Delivery
	msg    broker.Message
	kind   kind
	reason string        // why parked (toPark)
	late   time.Duration // how late it leaves (toExitDue)
}

// settleTimeout bounds the publish of one batch, and lets a batch under
// way when the bridge is stopped finish and ack, so that a graceful stop
// makes no duplicates.
const settleTimeout = 30 * time.Second

// retryPause is the wait after a failure (no connection, a batch the
// broker did not confirm) before trying again.
const retryPause = time.Second

// consume runs one loop: Workers consumers of queue, each on a channel
// of its own, each building its batches' copies, publishing them with
// confirms and settling the sources, until ctx ends.
func (b *Bridge) consume(ctx context.Context, queue string, build func([]broker.Delivery) []outgoing) error {
	// Workers keep several batches awaiting their confirms at once: one
	// batch at a time would move a confirm round trip's worth of messages
	// per round trip. Each has its own consumer, so that the deliveries
	// it settles are the only ones on its channel and a batch can be
	// acked with one frame (AckThrough); the loop's prefetch is shared
	// among them.
	prefetch := max((b.opt.Prefetch+b.opt.Workers-1)/b.opt.Workers, 1)
	var wg sync.WaitGroup
	fail := make(chan error, b.opt.Workers)
	for range b.opt.Workers {
		pub := b.opt.Publish
		if pub == nil {
			pub = b.conn
		}
		stream := pub.Stream()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer stream.Close()
			if err := b.work(ctx, queue, prefetch, stream, build); err != nil {
				fail <- err
			}
		}()
	}
	wg.Wait()
	close(fail)
	return <-fail
}

// work is one worker: consume, forward batch after batch, and consume
// again when the consumer ends while ctx lasts.
func (b *Bridge) work(ctx context.Context, queue string, prefetch int, stream *broker.Stream, build func([]broker.Delivery) []outgoing) error {
	for ctx.Err() == nil {
		// The consumer outlives ctx by the batch under way: it ends below,
		// after that batch is settled.
		cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		in, err := b.conn.Consume(cctx, queue, prefetch)
		if err != nil {
			cancel()
			if errors.Is(err, broker.ErrReadOnly) {
				return err
			}
			fmt.Fprintf(b.opt.Log, "rungs bridge: consume %s: %v\n", queue, err)
			pause(ctx, retryPause)
			continue
		}
		for {
			batch, open := take(ctx, in, b.opt.Batch)
			if len(batch) > 0 {
				b.forward(ctx, stream, build(batch))
			}
			if !open || ctx.Err() != nil {
				break
			}
		}
		cancel()
		if ctx.Err() == nil {
			fmt.Fprintf(b.opt.Log, "rungs bridge: consumer of %s ended (connection lost?); consuming again\n", queue)
			pause(ctx, retryPause)
		}
	}
	return nil
}

// take waits for one delivery (or ctx), then takes what else is already
// waiting, up to max. open is false once the consumer ended.
func take(ctx context.Context, in <-chan broker.Delivery, max int) (batch []broker.Delivery, open bool) {
	select {
	case d, ok := <-in:
		if !ok {
			return nil, false
		}
		batch = append(batch, d)
	case <-ctx.Done():
		return nil, true
	}
	// Linger a moment for more: a batch is one confirm round trip, and
	// under load the consumer hands messages over a few at a time, so
	// taking only what already waits would move a few per round trip.
	linger := time.NewTimer(lingerFor)
	defer linger.Stop()
	for len(batch) < max {
		select {
		case d, ok := <-in:
			if !ok {
				return batch, false
			}
			batch = append(batch, d)
		case <-linger.C:
			return batch, true
		}
	}
	return batch, true
}

// lingerFor is how long take waits to fill a batch: short beside the
// confirm round trip it saves, and beside the ladder's unit.
const lingerFor = 20 * time.Millisecond

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// forward publishes the copies and settles each source by its copy's
// fate: confirmed, acked; returned (no route from the exit exchange),
// parked with the reason; anything else, handed back to be tried again.
func (b *Bridge) forward(ctx context.Context, stream *broker.Stream, outs []outgoing) {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	msgs := make([]broker.Message, len(outs))
	for i, o := range outs {
		msgs[i] = o.msg
	}
	settled, err := stream.PublishEach(pctx, msgs)
	if allConfirmed(settled) {
		// Every earlier delivery of this worker's consumer is settled
		// (batches are settled whole, one after another), so one frame
		// acks the batch.
		aerr := outs[len(outs)-1].d.AckThrough()
		if aerr == nil {
			for _, o := range outs {
				b.count(o)
			}
			return
		}
		// The channel is gone: the broker hands the sources back, and
		// their copies, already confirmed, are marked when they come
		// again.
		b.unconfirmed(ctx, len(outs), len(outs), fmt.Errorf("ack: %w", aerr))
		return
	}
	var parks []outgoing
	failed := 0
	for i, o := range outs {
		switch {
		case settled[i] == broker.SettledConfirmed:
			if aerr := o.d.Ack(); aerr != nil {
				// The channel is gone: the broker hands the source back
				// and the copy made of it then is marked.
				failed++
				continue
			}
			b.count(o)
		case settled[i] == broker.SettledReturned && o.kind != toPark:
			parks = append(parks, b.park(o.d, o.msg.RoutingKey, fmt.Sprintf("%s: exchange %s routes key %q to no queue", topology.ReasonUnroutable, o.msg.Exchange, o.msg.RoutingKey)))
		default:
			_ = o.d.Nack(true)
			failed++
		}
	}
	if failed > 0 {
		b.unconfirmed(ctx, failed, len(outs), err)
	}
	if len(parks) > 0 {
		b.forward(ctx, stream, parks)
	}
}

func allConfirmed(settled []broker.Settled) bool {
	for _, s := range settled {
		if s != broker.SettledConfirmed {
			return false
		}
	}
	return len(settled) > 0
}

// unconfirmed records copies whose sources went back to the broker, and
// waits before the next batch.
func (b *Bridge) unconfirmed(ctx context.Context, failed, of int, err error) {
	b.mu.Lock()
	b.p.Unconfirmed += int64(failed)
	b.mu.Unlock()
	fmt.Fprintf(b.opt.Log, "rungs bridge: %d of %d copies not confirmed, their sources handed back: %v\n", failed, of, err)
	pause(ctx, retryPause)
}

// count records a settled copy.
func (b *Bridge) count(o outgoing) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch o.kind {
	case toLadder:
		b.p.Scheduled++
	case toExit:
		b.p.Now++
	case toExitDue:
		b.p.Exited++
		b.p.ExitLate = o.late
		b.p.ExitLateMax = max(b.p.ExitLateMax, o.late)
	case toPark:
		b.p.Parked[reasonWords(o.reason)]++
	}
}

// reasonWords is a park reason's stable part, before its colon: what
// Progress counts by.
func reasonWords(r string) string {
	for i := range r {
		if r[i] == ':' {
			return r[:i]
		}
	}
	return r
}

// carry copies a delivery's body and properties into a message, with a
// copy of its headers.
func carry(d broker.Delivery) broker.Message {
	h := make(map[string]any, len(d.Headers)+4)
	for k, v := range d.Headers {
		h[k] = v
	}
	return broker.Message{
		Body: d.Body, Headers: h, ContentType: d.ContentType, MessageID: d.MessageID, Persistent: d.Persistent,
		Timestamp: d.Timestamp, ContentEncoding: d.ContentEncoding, CorrelationID: d.CorrelationID,
		ReplyTo: d.ReplyTo, Type: d.Type, AppID: d.AppID, Priority: d.Priority,
	}
}

// intakeBatch reads each intake message's x-delay and makes its copy:
// into the ladder, straight out, or parked.
func (b *Bridge) intakeBatch(ds []broker.Delivery) []outgoing {
	now := b.opt.Now()
	maxDelay := b.opt.Ladder.MaxDelay()
	outs := make([]outgoing, 0, len(ds))
	var redelivered, noReceipt int64
	var lag time.Duration
	for _, d := range ds {
		if d.Redelivered {
			redelivered++
		}
		if !d.Timestamp.IsZero() {
			lag = max(now.Sub(d.Timestamp), 0)
		}
		dec := topology.DecideDelay(d.Headers, maxDelay, b.opt.Clamp)
		if b.opt.FromReceipt && dec.Action == topology.Schedule {
			var ok bool
			if dec, ok = dec.FromReceipt(d.Headers, now); !ok {
				noReceipt++
			}
		}
		switch dec.Action {
		case topology.DeliverNow:
			m := carry(d)
			b.stamp(&m, d)
			m.Exchange, m.RoutingKey = b.opt.Names.Exit, d.RoutingKey
			outs = append(outs, outgoing{d: d, msg: m, kind: toExit})
		case topology.Schedule:
			tr, err := b.route(dec.Delay)
			if err != nil {
				outs = append(outs, b.park(d, d.RoutingKey, fmt.Sprintf("%s: %v", topology.ReasonTooLong, err)))
				continue
			}
			m := carry(d)
			b.stamp(&m, d)
			// A producer's own x-death would meet the ladder's: keep it
			// aside, as replay does, and give it back at the exit.
			if xd, ok := m.Headers[topology.HeaderDeath]; ok {
				m.Headers[topology.HeaderSavedDeath] = xd
			}
			m.Headers = topology.StripBrokerHeaders(m.Headers)
			m.Headers[topology.HeaderBridgeKey] = d.RoutingKey
			m.Headers[topology.HeaderBridgeDue] = now.Add(dec.Delay).UnixMilli()
			m.Headers[topology.HeaderDelayMS] = dec.Delay.Milliseconds()
			m.Exchange, m.RoutingKey, m.BCC = tr.Exchange, tr.Key, tr.BCC
			outs = append(outs, outgoing{d: d, msg: m, kind: toLadder})
		default:
			outs = append(outs, b.park(d, d.RoutingKey, dec.Reason))
		}
	}
	if noReceipt > 0 {
		b.noReceiptSaid.Do(func() {
			fmt.Fprintf(b.opt.Log, "rungs bridge: messages without %s: their delays count from when the bridge takes them (turn on the broker's timestamp interceptor, docs/bridge.md)\n", topology.HeaderReceivedMS)
		})
	}
	b.mu.Lock()
	b.p.Received += int64(len(ds))
	b.p.NoReceipt += noReceipt
	b.p.Redelivered += redelivered
	if lag > 0 {
		b.p.IntakeLag = lag
	}
	b.mu.Unlock()
	return outs
}

// exitBatch makes each due message's copy for the exit exchange, with
// the routing key it was published with and the headers it had.
func (b *Bridge) exitBatch(ds []broker.Delivery) []outgoing {
	now := b.opt.Now()
	outs := make([]outgoing, 0, len(ds))
	var redelivered int64
	for _, d := range ds {
		if d.Redelivered {
			redelivered++
		}
		key, ok := d.Headers[topology.HeaderBridgeKey].(string)
		if !ok {
			outs = append(outs, b.park(d, d.RoutingKey, fmt.Sprintf("%s: a message reached %s without the routing key to leave with", topology.ReasonNoKey, b.opt.Names.Due)))
			continue
		}
		m := carry(d)
		if d.Redelivered {
			m.Headers[topology.HeaderPossibleDuplicate] = true
		}
		var late time.Duration
		if due, ok := topology.NormalizeArg(d.Headers[topology.HeaderBridgeDue]).(int64); ok {
			late = max(now.Sub(time.UnixMilli(due)), 0)
		}
		saved, hasSaved := m.Headers[topology.HeaderSavedDeath]
		m.Headers = topology.StripBrokerHeaders(m.Headers)
		for _, k := range []string{topology.HeaderBridgeKey, topology.HeaderBridgeDue, topology.HeaderDelayMS, topology.HeaderSavedDeath} {
			delete(m.Headers, k)
		}
		if hasSaved {
			m.Headers[topology.HeaderDeath] = saved
		}
		m.Exchange, m.RoutingKey = b.opt.Names.Exit, key
		outs = append(outs, outgoing{d: d, msg: m, kind: toExitDue, late: late})
	}
	b.mu.Lock()
	b.p.Redelivered += redelivered
	b.mu.Unlock()
	return outs
}

// stamp gives an intake message's copy its replay id (unique per copy)
// and, when the broker delivered the source again, the mark of a
// possible duplicate.
func (b *Bridge) stamp(m *broker.Message, d broker.Delivery) {
	m.Headers[topology.HeaderReplayID] = b.run + "." + strconv.FormatInt(b.seq.Add(1), 10)
	if d.Redelivered {
		m.Headers[topology.HeaderPossibleDuplicate] = true
	}
}

// park makes the copy of d for the parked queue, with the reason, when,
// where it came from and the routing key it was published with.
func (b *Bridge) park(d broker.Delivery, key, reason string) outgoing {
	m := carry(d)
	if _, ok := m.Headers[topology.HeaderReplayID]; !ok {
		b.stamp(&m, d)
	} else if d.Redelivered {
		m.Headers[topology.HeaderPossibleDuplicate] = true
	}
	if _, ok := m.Headers[topology.HeaderBridgeKey]; !ok {
		m.Headers[topology.HeaderBridgeKey] = key
	}
	m.Headers[topology.HeaderReason] = reason
	m.Headers[topology.HeaderParkedAt] = b.opt.Now().UTC().Truncate(time.Second)
	m.Headers[topology.HeaderQueue] = b.opt.Names.Intake
	m.Exchange, m.RoutingKey, m.BCC = "", b.opt.Names.Parked, nil
	return outgoing{d: d, msg: m, kind: toPark, reason: reason}
}

// maxRoutes bounds the cache of routes: one per distinct delay in units,
// which at a 1s unit is a day's worth of distinct delays.
const maxRoutes = 100000

// route is the ladder's route for delay d into the due queue. Tracing is
// what the bridge spends most of its CPU on otherwise (it lays out the
// ladder's rungs each time: half the bridge's CPU, measured on 3.10.8),
// and a route depends only on the delay in whole units, so routes are
// kept.
func (b *Bridge) route(d time.Duration) (topology.Trace, error) {
	u, err := b.opt.Ladder.Units(d)
	if err != nil {
		return topology.Trace{}, err
	}
	b.routeMu.Lock()
	tr, ok := b.routes[u]
	b.routeMu.Unlock()
	if ok {
		return tr, nil
	}
	tr, err = b.opt.Ladder.Trace(time.Duration(u)*b.opt.Ladder.Unit, b.opt.Names.Due)
	if err != nil {
		return tr, err
	}
	b.routeMu.Lock()
	if len(b.routes) >= maxRoutes {
		clear(b.routes)
	}
	b.routes[u] = tr
	b.routeMu.Unlock()
	return tr, nil
}
