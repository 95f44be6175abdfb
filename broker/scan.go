package broker

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// ScanOptions describe a Scan.
type ScanOptions struct {
	// Take, if > 0, stops the scan after this many messages. Without it
	// the scan ends when the queue has no ready message left: it then
	// holds everything the queue had, and what arrives later is not read.
	Take int
	// Each is called, from Scan's goroutine, with every message. It must be
	// quick: the broker keeps sending while it runs, and the client buffers
	// what it has not taken yet.
	Each func(PeekedMessage)
	// Listed is how many messages the management API last listed in the
	// queue. A queue that reads as empty is still read when it listed some:
	// messages another channel handed back a moment ago may not be ready
	// again yet.
	Listed int
}

// ScanStats are what a Scan did.
type ScanStats struct {
	Queue string
	// Ready is the queue's ready count when the scan began, Seen the
	// messages read.
	Ready, Seen int
	// Held is how long the scan kept the first message it read out of the
	// queue: the most it can have delayed any message.
	Held time.Duration
	// Stopped says why it ended: ScanTaken, ScanEmpty or StopCancelled.
	Stopped string
	// Consumers is how many consumers held the queue, a window each.
	Consumers int
}

// Why a Scan stopped.
const (
	ScanTaken = "read every message the queue held"
	ScanEmpty = "no ready message is left"
)

// scanProbe is how often Scan asks whether anything is left to read.
const scanProbe = 50 * time.Millisecond

// scanQuiet is how long a scan that has read less than the depth it began
// with waits for more, once none is ready.
const scanQuiet = 2 * time.Second

// Scan reads every message of a queue without removing any: it holds the
// whole queue unacknowledged, a window at a time (see holder), hands each
// message to o.Each, and when it has read o.Take of them (or the queue has
// nothing ready) cancels its consumers and hands every message back with
// one basic.nack(requeue), in their order. Its memory is a window's, not
// the queue's.
//
// That is a peek of the whole queue, with a peek's effects (see Peek and
// AssessPeek): a quorum queue before 4.3 counts it as a delivery, and a
// message cannot expire while the scan holds it, so one whose TTL passed
// meanwhile leaves late by up to Held, never early. A message cannot be
// handed back before the scan ends: the queue would deliver it straight
// back. Read-only mode allows Scan, as it allows Peek.
func (c *Conn) Scan(ctx context.Context, queue string, o ScanOptions) (ScanStats, error) {
	st := ScanStats{Queue: queue}
	ch, conn, err := c.channel(ctx)
	if err != nil {
		return st, err
	}
	defer func() { _ = ch.Close() }()
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if isCode(err, amqp.NotFound) {
		return st, fmt.Errorf("scan %q: no such queue in vhost %q", queue, c.ep.vhost)
	}
	if err != nil {
		return st, c.ep.redact(fmt.Errorf("scan %q: %w", queue, err))
	}
	st.Ready = q.Messages
	if q.Messages == 0 && o.Listed == 0 {
		st.Stopped = ScanEmpty
		return st, nil
	}
	h, err := hold(ch, queue, "rungs-scan-"+runID(), holdWindow)
	if err != nil {
		return st, c.ep.redact(fmt.Errorf("scan %q: %w", queue, err))
	}
	deliveries := h.deliveries()
	// Whatever ends the scan, nothing may stay blocked forwarding to it.
	defer h.drop()
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	// last starts at the scan's start, not at zero: until the first
	// message comes, "nothing has come for scanQuiet" counts from there. A
	// zero start once ended a scan of 24,676 messages of a quorum queue on
	// a loaded 3.10.8 at its first probe, with none read: the queue had
	// already reported none ready, all of them on their way.
	first, last := time.Time{}, time.Now()
	each := func(d amqp.Delivery) {
		last = time.Now()
		if first.IsZero() {
			first = last
		}
		if o.Each != nil {
			o.Each(peeked(d, st.Seen))
		}
		st.Seen++
	}
	tick := time.NewTicker(scanProbe)
	defer tick.Stop()
	var probe *amqp.Channel
	defer func() {
		if probe != nil {
			_ = probe.Close()
		}
	}()
	giveBack := func(read bool) {
		// Cancel first (waiting for cancel-ok), or the queue would deliver
		// the returned messages straight back; what was sent before the
		// cancel is still read (it was in the queue when the scan ended),
		// then one nack returns everything.
		h.cancel()
		for d := range deliveries {
			if read {
				each(d)
			}
		}
		_ = ch.Nack(0, true, true)
		st.Consumers = h.consumers()
		if !first.IsZero() {
			st.Held = time.Since(first)
		}
	}
	for st.Stopped == "" {
		select {
		case d, ok := <-deliveries:
			if !ok {
				return st, c.ep.redact(fmt.Errorf("scan %q: the broker cancelled the scan (the queue was deleted?)", queue))
			}
			each(d)
			if o.Take > 0 && st.Seen >= o.Take {
				st.Stopped = ScanTaken
			} else if err := h.grow(st.Seen); err != nil {
				giveBack(false)
				return st, c.ep.redact(fmt.Errorf("scan %q: %w", queue, err))
			}
		case <-tick.C:
			// The holder keeps credit ahead of what the scan has read:
			// when none is ready, the scan holds them all. Held is not
			// read yet, though: a quorum queue marks a window's messages
			// as delivered at once and sends them over a second or more
			// (measured on 3.10.8: none ready with 4,196 still on their
			// way), and a cancel then takes back what it has not sent.
			// So the scan also waits until it has read the depth it
			// began with, or, when some of that left meanwhile (a
			// message at the head of what is ready can expire while the
			// scan holds those before it), until nothing has come for
			// scanQuiet.
			if probe == nil || probe.IsClosed() {
				if probe, err = conn.Channel(); err != nil {
					giveBack(false)
					return st, c.ep.redact(fmt.Errorf("scan %q: %w", queue, err))
				}
			}
			pq, err := probe.QueueDeclarePassive(queue, false, false, false, false, nil)
			if err != nil {
				giveBack(false)
				return st, c.ep.redact(fmt.Errorf("scan %q: %w", queue, err))
			}
			if pq.Messages == 0 && (st.Seen >= st.Ready || time.Since(last) >= scanQuiet) {
				st.Stopped = ScanEmpty
			}
		case e := <-closed:
			return st, c.ep.redact(fmt.Errorf("scan %q: channel closed: %v", queue, e))
		case <-ctx.Done():
			st.Stopped = StopCancelled
		}
	}
	giveBack(st.Stopped != StopCancelled)
	if st.Stopped == StopCancelled {
		return st, ctx.Err()
	}
	return st, nil
}
