package broker

import (
	"context"
	"fmt"
	"strconv"
	"sync"
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
}

// Why a Scan stopped.
const (
	ScanTaken = "read every message the queue held"
	ScanEmpty = "no ready message is left"
)

// scanProbe is how often Scan asks whether anything is left to read.
const scanProbe = 50 * time.Millisecond

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
	if q.Messages == 0 && o.Listed == 0 {
		st.Stopped = ScanEmpty
		return st, nil
	}
	// Enough consumers for what is there, and room for what arrives.
	take := max(o.Take, q.Messages*2, o.Listed*2)
	tag := "rungs-scan-" + runID()
	deliveries, tags, err := consumeAll(ch, queue, tag, take)
	if err != nil {
		return st, c.ep.redact(fmt.Errorf("scan %q: %w", queue, err))
	}
	// Whatever ends the scan, nothing may stay blocked forwarding to it.
	defer func() {
		go func() {
			for range deliveries {
			}
		}()
	}()
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	var first time.Time
	each := func(d amqp.Delivery) {
		if first.IsZero() {
			first = time.Now()
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
		cancelAll(ch, tags)
		for d := range deliveries {
			if read {
				each(d)
			}
		}
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
			each(d)
			if o.Take > 0 && st.Seen >= o.Take {
				st.Stopped = ScanTaken
			}
		case <-tick.C:
			// Every message the queue holds is delivered at once (no
			// prefetch limit to speak of): when none is ready, the scan
			// holds them all.
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
			if pq.Messages == 0 {
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

// heldPerConsumer is the prefetch of each consumer that holds a whole
// queue: AMQP's largest. No limit (0) would do for a classic queue, but a
// quorum queue gives a consumer without one a credit of 2,000 (measured on
// 4.3.6: a scan of 3,000 stopped at 2,000), so a pass over a deep quorum
// queue needs n consumers of the largest prefetch.
const heldPerConsumer = 65535

// consumeAll starts enough consumers on ch to hold n messages unacknowledged
// and merges their deliveries into one channel, closed when all of theirs
// are. One channel's deliveries keep the queue's order within a consumer;
// across consumers they interleave.
func consumeAll(ch *amqp.Channel, queue, tag string, n int) (<-chan amqp.Delivery, []string, error) {
	if err := ch.Qos(heldPerConsumer, 0, false); err != nil {
		return nil, nil, err
	}
	count := n/heldPerConsumer + 1
	out := make(chan amqp.Delivery, 256)
	var wg sync.WaitGroup
	var tags []string
	for i := 0; i < count; i++ {
		t := tag + "-" + strconv.Itoa(i)
		ds, err := ch.Consume(queue, t, false, false, false, false, nil)
		if err != nil {
			cancelAll(ch, tags)
			return nil, nil, err
		}
		tags = append(tags, t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range ds {
				out <- d
			}
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return out, tags, nil
}

// cancelAll cancels the consumers, each waiting for its cancel-ok.
func cancelAll(ch *amqp.Channel, tags []string) {
	for _, t := range tags {
		_ = ch.Cancel(t, false)
	}
}
