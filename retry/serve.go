package retry

import (
	"context"
	"time"

	"github.com/rungs-dev/rungs/broker"
)

// Handler processes one job. A nil error acknowledges it; an error sends
// it through Retry (wrap it with Permanent to park the job at once).
type Handler func(ctx context.Context, d broker.Delivery) error

// Consumer delivers a queue's messages with manual acknowledgement;
// *broker.Conn is one.
type Consumer interface {
	Consume(ctx context.Context, queue string, prefetch int) (<-chan broker.Delivery, error)
}

// Event reports one handled job to Serve's observer.
type Event struct {
	Delivery broker.Delivery
	Attempt  int   // the attempt this delivery was, from 1
	Err      error // the handler's error; nil when the job succeeded
	// Outcome is what Retry did when the handler failed.
	Outcome Outcome
	// RetryErr is why Retry could not republish or park the job; it was
	// handed back to the queue after a pause.
	RetryErr error
}

// backOffAfterRetryError is how long Serve waits before handing back a job
// it could not retry, so that a broken ladder does not turn into a hot loop.
const backOffAfterRetryError = time.Second

// Serve consumes the worker's queue until ctx ends: each delivery goes to
// h, is acknowledged if h succeeds and retried or parked if it fails. When
// the connection drops it consumes again once the connection is back
// (unacknowledged jobs return to the queue meanwhile). With WithMetrics,
// each delayed job's lateness is recorded as it arrives. notify, if not nil,
// sees every job, from Serve's goroutine. Jobs are handled one at a time;
// run several Serve calls for concurrency.
func (r *Retrier) Serve(ctx context.Context, c Consumer, prefetch int, h Handler, notify func(Event)) error {
	for {
		deliveries, err := c.Consume(ctx, r.queue, prefetch)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := r.serveOne(ctx, deliveries, h, notify); err != nil {
			return nil // ctx ended
		}
	}
}

// serveOne handles deliveries until the channel closes (nil: consume
// again) or ctx ends (ctx's error). Once ctx ends it returns without
// waiting for the deliveries channel to close: broker.Conn.Consume closes
// it only after the AMQP channel, and that close can stall when it races
// amqp091's own cancel. Unacknowledged jobs return to the queue either way.
func (r *Retrier) serveOne(ctx context.Context, deliveries <-chan broker.Delivery, h Handler, notify func(Event)) error {
	for {
		var d broker.Delivery
		select {
		case <-ctx.Done():
			return ctx.Err()
		case got, ok := <-deliveries:
			if !ok {
				return ctx.Err()
			}
			d = got
		}
		r.Observe(d)
		ev := Event{Delivery: d, Attempt: Attempt(d)}
		ev.Err = h(ctx, d)
		switch {
		case ev.Err == nil:
			if err := d.Ack(); err != nil {
				ev.RetryErr = err
			}
		default:
			ev.Outcome, ev.RetryErr = r.Retry(ctx, d, ev.Err)
			if ev.RetryErr != nil && ctx.Err() == nil {
				select {
				case <-time.After(backOffAfterRetryError):
				case <-ctx.Done():
				}
				_ = d.Nack(true)
			}
		}
		if notify != nil {
			notify(ev)
		}
	}
}
