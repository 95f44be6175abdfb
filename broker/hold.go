package broker

import (
	"errors"
	"strconv"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"
)

// holdWindow is the prefetch of each consumer a holder starts. A queue
// delivers as much as its consumers' prefetch allows, and amqp091 buffers
// every delivery its reader has not taken, without bound: a 300,000-message
// quorum rung on 4.3.6, read by consumers of AMQP's largest prefetch, was
// sent within a second and took the client's live heap to 205 MB before
// the scan could process it. A holder therefore opens one window at a time,
// so the client holds at most one and a half windows of messages it has
// not processed, and the broker holds the rest.
//
// It is also the credit a quorum queue grants: without a prefetch it
// grants 2,000 (measured on 4.3.6: a scan of 3,000 stopped at 2,000).
const holdWindow = 8192

// errHolderClosed is a holder whose consumers the broker has all cancelled.
var errHolderClosed = errors.New("the broker cancelled every consumer (the queue was deleted?)")

// holder keeps a queue's messages unacknowledged on one channel, as many as
// there are, through consumers it adds as the caller processes deliveries:
// a consumer holds at most its prefetch, and the next one starts when the
// caller has half of the current one's window still to process.
//
// Its deliveries merge into one channel, closed once every consumer has
// ended. Within a consumer they keep the queue's order; across consumers
// they interleave only at a window's edge.
type holder struct {
	ch     *amqp.Channel
	queue  string
	tag    string
	window int
	out    chan amqp.Delivery

	mu     sync.Mutex
	tags   []string
	active int
	closed bool
}

// hold sets ch's prefetch to window and starts the first consumer.
func hold(ch *amqp.Channel, queue, tag string, window int) (*holder, error) {
	if err := ch.Qos(window, 0, false); err != nil {
		return nil, err
	}
	h := &holder{ch: ch, queue: queue, tag: tag, window: window, out: make(chan amqp.Delivery, 256)}
	if err := h.add(); err != nil {
		return nil, err
	}
	return h, nil
}

// deliveries is every consumer's deliveries, merged.
func (h *holder) deliveries() <-chan amqp.Delivery { return h.out }

// grow adds a consumer once outstanding, the caller's deliveries not yet
// acknowledged, leaves less than half a window of credit: the consumers
// are then about full, and without another nothing more would arrive.
func (h *holder) grow(outstanding int) error {
	h.mu.Lock()
	n := len(h.tags)
	h.mu.Unlock()
	if !needsConsumer(outstanding, n, h.window) {
		return nil
	}
	return h.add()
}

// needsConsumer reports whether consumers of a window each, with
// outstanding deliveries not yet acknowledged, have less than half a
// window of credit left. Adding one then keeps the client's unprocessed
// deliveries under one and a half windows while the broker never waits
// for credit.
func needsConsumer(outstanding, consumers, window int) bool {
	return outstanding >= consumers*window-window/2
}

// consumers is how many consumers the holder has started.
func (h *holder) consumers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.tags)
}

// add starts one more consumer.
func (h *holder) add() error {
	h.mu.Lock()
	t := h.tag + "-" + strconv.Itoa(len(h.tags))
	h.mu.Unlock()
	// Consume, not ConsumeWithContext: the caller cancels the consumers
	// itself, and a second canceller would race it.
	ds, err := h.ch.Consume(h.queue, t, false, false, false, false, nil)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		// Every other consumer is gone, and with them the merged channel.
		_ = h.ch.Cancel(t, false)
		return errHolderClosed
	}
	h.tags = append(h.tags, t)
	h.active++
	go func() {
		for d := range ds {
			h.out <- d
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.active--; h.active == 0 {
			h.closed = true
			close(h.out)
		}
	}()
	return nil
}

// cancel cancels every consumer, each waiting for its cancel-ok: after it,
// the merged channel yields what was sent before, then closes.
func (h *holder) cancel() {
	h.mu.Lock()
	tags := append([]string(nil), h.tags...)
	h.mu.Unlock()
	cancelAll(h.ch, tags)
}

// drop lets the forwarders end without anyone reading: whatever is left
// is discarded (it returns to the queue with the channel).
func (h *holder) drop() {
	go func() {
		for range h.out {
		}
	}()
}

// cancelAll cancels the consumers, each waiting for its cancel-ok.
func cancelAll(ch *amqp.Channel, tags []string) {
	for _, t := range tags {
		_ = ch.Cancel(t, false)
	}
}
