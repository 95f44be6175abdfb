package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// DefaultHistory is how many attempts the history header keeps, newest
// last: enough to tell a pattern, small enough for any frame size.
const DefaultHistory = 20

// Publisher publishes with confirms; *broker.Conn is one.
type Publisher interface {
	Publish(ctx context.Context, msgs []broker.Message) (broker.PublishResult, error)
}

// Retrier sends failed jobs back through a delay ladder to the worker's own
// queue, and parks them once they have had all their attempts.
//
// It is safe for concurrent use if its Publisher is.
type Retrier struct {
	pub     Publisher
	ladder  topology.Ladder
	queue   string // the worker's queue, where retried jobs come back
	dest    string // the ladder destination that reaches queue
	parking string
	policy  Policy
	rand    func() float64
	now     func() time.Time
	keep    int
	metrics *Metrics // nil: lateness is not recorded
}

// Option adjusts a Retrier.
type Option func(*Retrier)

// WithRand sets the source of jitter, for reproducible runs: f returns a
// number in [0, 1), as rand.Float64 does.
func WithRand(f func() float64) Option { return func(r *Retrier) { r.rand = f } }

// WithClock sets the clock the history's times come from.
func WithClock(now func() time.Time) Option { return func(r *Retrier) { r.now = now } }

// WithHistory sets how many attempts the history header keeps (newest).
func WithHistory(n int) Option { return func(r *Retrier) { r.keep = max(n, 1) } }

// New builds a Retrier for a worker consuming queue, a destination of the
// ladder (or the ladder's done queue), that parks jobs in parking (queue
// + ".parked" if empty). It checks that the ladder can hold every delay
// the policy asks for and that the ladder can address queue; it does no
// I/O (see Setup).
func New(pub Publisher, l topology.Ladder, queue, parking string, p Policy, opts ...Option) (*Retrier, error) {
	l, err := l.Normalize()
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if longest := p.Longest(); longest > l.MaxDelay() {
		return nil, fmt.Errorf("%w: the policy waits up to %s, ladder %s holds at most %s (cap the policy with Max, or use a taller ladder)",
			topology.ErrDelayTooLong, topology.FormatDelay(longest), l.Name, topology.FormatDelay(l.MaxDelay()))
	}
	if queue == "" {
		return nil, fmt.Errorf("%w: the worker's queue is empty", topology.ErrBadDest)
	}
	dest := queue
	if done, err := l.Trace(0, ""); err == nil && done.Target == queue {
		dest = "" // the ladder's default destination
	}
	tr, err := l.Trace(0, dest)
	if err != nil {
		return nil, fmt.Errorf("ladder %s cannot send jobs back to %s: %w", l.Name, queue, err)
	}
	if tr.Target != queue {
		return nil, fmt.Errorf("%w: ladder %s delivers to %s, not %s", topology.ErrBadDest, l.Name, tr.Target, queue)
	}
	if parking == "" {
		parking = queue + ".parked"
	}
	if parking == queue {
		return nil, fmt.Errorf("%w: the parking queue cannot be the worker's queue %s", topology.ErrBadDest, queue)
	}
	if c, ok := pub.(*broker.Conn); ok {
		// One channel for every retry rather than one per retry: opening
		// and closing a channel costs the broker more than the job.
		pub = c.Stream()
	}
	r := &Retrier{
		pub: pub, ladder: l, queue: queue, dest: dest, parking: parking, policy: p,
		rand: rand.Float64, now: time.Now, keep: DefaultHistory,
	}
	for _, o := range opts {
		o(r)
	}
	if r.metrics != nil {
		// Series exist from the start, so an early count of 0 is
		// scraped as 0 rather than missing.
		r.metrics.early.WithLabelValues(queue)
		r.metrics.lateness.WithLabelValues(queue)
	}
	return r, nil
}

// Queue is the worker's queue; Parking the queue parked jobs go to.
func (r *Retrier) Queue() string { return r.queue }

// Parking is the queue jobs go to after their last attempt.
func (r *Retrier) Parking() string { return r.parking }

// Policy is the policy the Retrier follows.
func (r *Retrier) Policy() Policy { return r.policy }

// Ladder is the ladder jobs wait in.
func (r *Retrier) Ladder() topology.Ladder { return r.ladder }

// Declarer declares queues and bindings; *broker.Conn is one.
type Declarer interface {
	EnsureQueue(ctx context.Context, name string, qt topology.QueueType) (bool, error)
	Apply(ctx context.Context, p topology.Plan) (broker.ApplyResult, error)
}

// Setup makes sure the worker's queue and the parking queue exist
// (declaring them with the ladder's queue type if missing, never touching
// existing ones) and that the ladder delivers to the worker's queue. The
// ladder itself must exist: `rungs apply` declares it.
func (r *Retrier) Setup(ctx context.Context, d Declarer) error {
	for _, q := range []string{r.queue, r.parking} {
		if _, err := d.EnsureQueue(ctx, q, r.ladder.QueueType); err != nil {
			return fmt.Errorf("retry setup: %w", err)
		}
	}
	if r.dest == "" {
		return nil
	}
	l := r.ladder
	l.Targets = []string{r.dest}
	var p topology.Plan
	for _, b := range l.Plan().Bindings {
		if b.Destination == r.queue && b.DestinationType == topology.ToQueue {
			p.Bindings = append(p.Bindings, b)
		}
	}
	if _, err := d.Apply(ctx, p); err != nil {
		return fmt.Errorf("retry setup: bind %s to ladder %s (does the ladder exist? rungs apply declares it): %w", r.queue, l.Name, err)
	}
	return nil
}

// Action is what Retry did with a failed job.
type Action int

// Actions.
const (
	Retried Action = iota + 1 // republished into the ladder
	Parked                    // published to the parking queue
)

// String names the action.
func (a Action) String() string {
	switch a {
	case Retried:
		return "retried"
	case Parked:
		return "parked"
	}
	return "none"
}

// Outcome is what became of a failed job.
type Outcome struct {
	Action  Action
	Attempt int // the attempt that failed, from 1
	// Delay is how long the job waits, as the ladder holds it (the policy's
	// delay rounded up to the ladder's unit); 0 when parked.
	Delay time.Duration
	// Exchange and Key are what the job was published with.
	Exchange, Key string
	// Queue is where the job goes: the worker's queue after Delay, or the
	// parking queue.
	Queue string
}

// String is one line for a log.
func (o Outcome) String() string {
	if o.Action == Parked {
		return fmt.Sprintf("attempt %d failed: parked in %s", o.Attempt, o.Queue)
	}
	return fmt.Sprintf("attempt %d failed: retry in %s via %s", o.Attempt, topology.FormatDelay(o.Delay), o.Key)
}

// Attempt is the attempt a delivery is: 1 for a new job, n+1 for a job the
// library republished after its n-th failure.
func Attempt(d broker.Delivery) int {
	n, ok := topology.HeaderInt(d.Headers[topology.HeaderAttempt])
	if !ok || n < 0 {
		return 1
	}
	return int(min(n, 1<<30)) + 1
}

// History is the retry history a delivery carries, oldest first.
func History(d broker.Delivery) []topology.Attempt { return topology.ParseHistory(d.Headers) }

// permanent marks an error that retrying cannot fix.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent marks err as one that retrying cannot fix (a malformed job, a
// missing record): Retry parks the job at once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

// Retry handles a delivery whose processing failed with reason. Unless
// this was its last attempt (or reason is Permanent), the job is published
// into the ladder, addressed back to the worker's queue, with the next
// delay; otherwise it is published to the parking queue with the reason.
// Either way the delivery is acknowledged only after the broker confirmed
// the new copy, so a crash in between duplicates the job but never loses it.
//
// The new copy keeps the body and properties, and the headers but for the
// broker's own: x-death would make RabbitMQ's cycle detection drop a job
// that passes the same rungs again, so the library keeps its own history
// (x-rungs-history) and attempt count (x-rungs-attempt) instead. The
// routing key is built afresh from the delay and the worker's queue, never
// from the key the job arrived with, so it does not grow with retries.
//
// On error the delivery is left unacknowledged: hand it back with
// Nack(true), or let the channel's closing return it.
func (r *Retrier) Retry(ctx context.Context, d broker.Delivery, reason error) (Outcome, error) {
	n := Attempt(d)
	now := r.now()
	why := "failed"
	if reason != nil {
		why = reason.Error()
	}
	headers := topology.StripBrokerHeaders(d.Headers)
	history := topology.ParseHistory(d.Headers)
	entry := topology.Attempt{N: n, At: now, Reason: why, Queue: r.queue}
	msg := broker.Message{
		Body: d.Body, ContentType: d.ContentType, MessageID: d.MessageID,
		Persistent: d.Persistent, Timestamp: d.Timestamp, Headers: headers,
		ContentEncoding: d.ContentEncoding, CorrelationID: d.CorrelationID, ReplyTo: d.ReplyTo,
		Type: d.Type, AppID: d.AppID, Priority: d.Priority,
	}
	var out Outcome
	if n >= r.policy.MaxAttempts || IsPermanent(reason) {
		entry.Parked = true
		headers[topology.HeaderReason] = topology.CutReason(why)
		headers[topology.HeaderQueue] = r.queue
		headers[topology.HeaderParkedAt] = now.UTC().Truncate(time.Second)
		delete(headers, topology.HeaderDelayMS)
		delete(headers, HeaderSentMS)
		msg.RoutingKey = r.parking
		out = Outcome{Action: Parked, Attempt: n, Key: r.parking, Queue: r.parking}
	} else {
		delay := r.policy.Delay(n, r.rand())
		tr, err := r.ladder.Trace(delay, r.dest)
		if err != nil {
			return Outcome{Attempt: n}, fmt.Errorf("retry %s: %w", describe(d), err)
		}
		entry.Delay = tr.Delay
		headers[topology.HeaderDelayMS] = tr.Delay.Milliseconds()
		// The delay starts no earlier than now, so arrival − (sent +
		// delay) is never negative for a punctual ladder (see Metrics).
		headers[HeaderSentMS] = now.UnixMilli()
		msg.Exchange, msg.RoutingKey, msg.BCC = tr.Exchange, tr.Key, tr.BCC
		out = Outcome{Action: Retried, Attempt: n, Delay: tr.Delay, Exchange: tr.Exchange, Key: tr.Key, Queue: r.queue}
	}
	headers[topology.HeaderAttempt] = int64(n)
	headers[topology.HeaderHistory] = topology.HistoryValue(append(history, entry), r.keep)

	res, err := r.pub.Publish(ctx, []broker.Message{msg})
	if err != nil || res.Confirmed != 1 {
		if err == nil {
			err = fmt.Errorf("not confirmed: %+v", res)
		}
		return out, fmt.Errorf("%s %s: %w; the delivery was left unacknowledged", out.Action, describe(d), err)
	}
	if err := d.Ack(); err != nil {
		return out, fmt.Errorf("%s %s, but acknowledging the original failed, so it will be delivered again: %w", out.Action, describe(d), err)
	}
	return out, nil
}

func describe(d broker.Delivery) string {
	if d.MessageID != "" {
		return "job " + d.MessageID
	}
	return "job"
}
