package broker

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// ScanOptions describe a Scan.
type ScanOptions struct {
	// Take stops the scan after this many messages: the depth when it was
	// planned, so that messages arriving behind the scan cannot keep it
	// going. 0 takes the ready count when the scan starts.
	Take int
	// Each is called, from Scan's goroutine, with every message. It must be
	// quick: the broker keeps sending while it runs, and the client buffers
	// what it has not taken yet.
	Each func(PeekedMessage)
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
}

// Why a Scan stopped.
const (
	ScanTaken = "read every message the queue held"
	ScanEmpty = "no ready message is left"
)

// scanQuiet is how long the queue must stay silent before Scan asks
// whether anything is left to read.
const scanQuiet = 150 * time.Millisecond

// Scan reads every message of a queue without removing any: it consumes
// with no prefetch limit and no acknowledgement, hands each message to
// o.Each, and when it has read o.Take of them (or the queue has nothing
// ready) cancels its consumer and hands every message back with one
// basic.nack(requeue), in their order.
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
	take := o.Take
	if take <= 0 {
		take = q.Messages
	}
	if take == 0 {
		st.Stopped = ScanEmpty
		return st, nil
	}
	if err := ch.Qos(0, 0, false); err != nil {
		return st, c.ep.redact(fmt.Errorf("scan %q: %w", queue, err))
	}
	tag := "rungs-scan-" + runID()
	deliveries, err := ch.Consume(queue, tag, false, false, false, false, nil)
	if err != nil {
		return st, c.ep.redact(fmt.Errorf("scan %q: %w", queue, err))
	}
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	var first, lastIn time.Time
	tick := time.NewTicker(scanQuiet / 3)
	defer tick.Stop()
	var probe *amqp.Channel
	defer func() {
		if probe != nil {
			_ = probe.Close()
		}
	}()
	giveBack := func() {
		// Cancel first (waiting for cancel-ok), or the queue would deliver
		// the returned messages straight back; then one nack for all.
		_ = ch.Cancel(tag, false)
		_ = ch.Nack(0, true, true)
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
			lastIn = time.Now()
			if first.IsZero() {
				first = lastIn
			}
			if o.Each != nil {
				o.Each(peeked(d, st.Seen))
			}
			st.Seen++
			if st.Seen >= take {
				st.Stopped = ScanTaken
			}
		case <-tick.C:
			if time.Since(lastIn) < scanQuiet {
				continue
			}
			if probe == nil || probe.IsClosed() {
				if probe, err = conn.Channel(); err != nil {
					return st, c.ep.redact(fmt.Errorf("scan %q: %w", queue, err))
				}
			}
			pq, err := probe.QueueDeclarePassive(queue, false, false, false, false, nil)
			if err != nil {
				giveBack()
				return st, c.ep.redact(fmt.Errorf("scan %q: %w", queue, err))
			}
			if pq.Messages == 0 {
				st.Stopped = ScanEmpty
			}
			lastIn = time.Now()
		case e := <-closed:
			return st, c.ep.redact(fmt.Errorf("scan %q: channel closed: %v", queue, e))
		case <-ctx.Done():
			st.Stopped = StopCancelled
		}
	}
	giveBack()
	if st.Stopped == StopCancelled {
		return st, ctx.Err()
	}
	return st, nil
}
