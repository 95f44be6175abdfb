// Package retry is retry with backoff over a rungs delay ladder, for
// workers to import: a job that fails is published back into the ladder,
// addressed to the worker's own queue, with a longer delay each time, and
// after its last attempt it is parked in a queue of its own with the reason.
//
//	conn, _ := broker.Dial(ctx, broker.Config{URL: url})
//	ladder := found.Ladder // from topology.Discover: its layout, radix and queue type as on the broker
//	r, err := retry.New(conn, ladder, "orders.work", "orders.parked", retry.Policy{
//		Initial: time.Second, Multiplier: 2, Max: 10 * time.Minute, Jitter: 0.2, MaxAttempts: 8,
//	})
//	if err != nil { ... }                // the ladder is too short for the policy, say
//	_ = r.Setup(ctx, conn)               // worker and parking queues, ladder binding
//	err = r.Serve(ctx, conn, 16, func(ctx context.Context, d broker.Delivery) error {
//		return process(d.Body)            // nil acks; an error retries or parks
//	}, nil)
//
// Or, with your own consumer loop, call Retry for a failed delivery:
//
//	out, err := r.Retry(ctx, d, cause) // acks d once the new copy is confirmed
//
// # Guarantees
//
// The original delivery is acknowledged only after the broker confirmed its
// republished copy, so a crash or a dropped connection in between may run a
// job twice but never loses one: make jobs idempotent.
//
// Delays are never shorter than the policy's: jitter only lengthens them and
// the ladder rounds up to its unit. New refuses a policy whose longest delay
// the ladder cannot hold.
//
// # Two traps it avoids
//
// RabbitMQ's dead-letter cycle detection silently drops a message that
// expires into a queue its x-death header already names, unless a rejection
// happened in between. A job that passes the same rungs on its second retry
// would vanish (Celery met this with quorum ladders). The library drops the
// broker's headers (x-death and friends, and the quorum x-delivery-count)
// from the copy it republishes and keeps its own: x-rungs-attempt counts
// attempts and x-rungs-history lists them (time, delay, reason).
//
// Re-delaying by prefixing digits to the key a message arrived with grows
// the key with every retry until it passes AMQP's 255-byte limit (kombu
// #2556). The library builds the key afresh from the delay and the worker's
// queue each time, so it has the same length on the tenth retry as on the
// first.
//
// # Headers
//
// A retried job carries x-rungs-attempt (the attempts it has had),
// x-rungs-history (an array of tables: attempt, at, reason, queue, delay-ms
// or parked) and x-rungs-delay-ms. A parked job also carries x-rungs-reason,
// x-rungs-queue (the worker's queue, where `rungs replay --to-origin` sends
// it back) and x-rungs-parked-at. The topology package parses them
// (ParseHistory), as the console and `rungs peek` do.
//
// A parked job replayed to its queue keeps its attempt count and history:
// it gets one more attempt, and is parked again at once if that fails.
package retry
