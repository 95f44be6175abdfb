// Package demo is the demo worker behind rungs worker --demo: a worker on
// the retry library that fails a share of its jobs on purpose, and may
// feed its own queue, so that an operator can watch failed jobs climb
// back into a ladder, come back, and park. It holds the demo's rules (its
// flags' checks, its queue, when it stops); the command prints.
package demo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/retry"
	"github.com/rungs-dev/rungs/topology"
)

// Input is the demo worker as the operator gives it, spans and rates as
// typed.
type Input struct {
	Queue, Park, Feed        string
	Fail, Jitter, Multiplier float64
	Seed                     uint64
	Attempts, Prefetch, Jobs int
	Initial, MaxBackoff      string
	Work, Steps              string
}

// Worker is the input checked: what Serve runs.
type Worker struct {
	Policy retry.Policy
	Work   time.Duration
	// Feed is how many jobs a second the worker publishes into its own
	// queue; 0: none.
	Feed     float64
	Fail     float64
	Prefetch int
	// Jobs stops the worker once that many jobs finished (and, with Feed,
	// is how many it publishes); 0: until interrupted.
	Jobs int
	// Seed seeds Rand (a random one when the input gave none), said so
	// that a run can be repeated.
	Seed uint64
	// Rand is the worker's random source, shared by the failures, the
	// retrier's jitter and the feeder.
	Rand func() float64
}

// Worker checks the input; a refusal is one line naming the flag, and
// ErrInput.
func (in Input) Worker() (Worker, error) {
	w := Worker{Fail: in.Fail, Prefetch: in.Prefetch, Jobs: in.Jobs}
	var err error
	if w.Policy, err = in.Policy(); err != nil {
		return w, err
	}
	if w.Work, err = topology.ParseDelay(in.Work); err != nil {
		return w, inputErr("--work: %v", err)
	}
	if in.Feed != "" {
		if w.Feed, err = topology.ParseRate(in.Feed); err != nil {
			return w, inputErr("--feed: %v", err)
		}
	}
	switch {
	case in.Fail < 0 || in.Fail > 1:
		return w, inputErr("--fail must be between 0 and 1, got %v", in.Fail)
	case in.Prefetch < 1:
		return w, inputErr("--prefetch must be at least 1")
	case in.Jobs < 0:
		return w, inputErr("--jobs cannot be negative")
	}
	w.Seed, w.Rand = seeded(in.Seed)
	return w, nil
}

// Policy is the retry policy the input describes: --steps, else
// exponential backoff.
func (in Input) Policy() (retry.Policy, error) {
	p := retry.Policy{MaxAttempts: in.Attempts, Jitter: in.Jitter, Multiplier: in.Multiplier}
	if in.Steps != "" {
		for _, s := range strings.Split(in.Steps, ",") {
			d, err := topology.ParseDelay(s)
			if err != nil {
				return p, inputErr("--steps: %v", err)
			}
			p.Steps = append(p.Steps, d)
		}
	} else {
		var err error
		if p.Initial, err = topology.ParseDelay(in.Initial); err != nil {
			return p, inputErr("--initial: %v", err)
		}
		if p.Max, err = topology.ParseDelay(in.MaxBackoff); err != nil {
			return p, inputErr("--max-backoff: %v", err)
		}
	}
	if err := p.Validate(); err != nil {
		return p, inputError{err}
	}
	return p, nil
}

// QueueOf is the queue the worker consumes: the one given, else the
// ladder's first destination, else NAME.work.
func QueueOf(l topology.Ladder, queue string) string {
	switch {
	case queue != "":
		return queue
	case len(l.Targets) > 0:
		return l.Targets[0]
	}
	return l.Name + ".work"
}

// seeded is a random source seeded by seed (a random seed when 0,
// returned), safe for the feeder and the worker to share.
func seeded(seed uint64) (uint64, func() float64) {
	if seed == 0 {
		seed = rand.Uint64()
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	var mu sync.Mutex
	return seed, func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return rng.Float64()
	}
}

// Stats count the jobs the worker handled.
type Stats struct{ OK, Retried, Parked, FailedRetry int }

// Count adds one handled job.
func (s *Stats) Count(ev retry.Event) {
	switch {
	case ev.RetryErr != nil:
		s.FailedRetry++
	case ev.Err == nil:
		s.OK++
	case ev.Outcome.Action == retry.Parked:
		s.Parked++
	default:
		s.Retried++
	}
}

// Finished are the jobs done with: succeeded or parked.
func (s Stats) Finished() int { return s.OK + s.Parked }

// Serve feeds the queue (Feed) and works its jobs through rt, failing a
// share of them, until ctx ends or Jobs have finished. notify hears each
// job handled, feedErr each publish of the feeder that failed.
func (w Worker) Serve(ctx context.Context, conn *broker.Conn, rt *retry.Retrier, queue string, notify func(retry.Event), feedErr func(error)) (Stats, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var feeder sync.WaitGroup
	if w.Feed > 0 {
		feeder.Add(1)
		go func() {
			defer feeder.Done()
			Feed(ctx, conn, queue, w.Feed, w.Jobs, feedErr)
		}()
	}
	var st Stats
	err := rt.Serve(ctx, conn, w.Prefetch, w.handle, func(ev retry.Event) {
		st.Count(ev)
		notify(ev)
		if w.Jobs > 0 && st.Finished() >= w.Jobs {
			stop()
		}
	})
	stop()
	feeder.Wait()
	return st, err
}

// handle is one attempt: it takes Work, then fails with chance Fail.
func (w Worker) handle(ctx context.Context, _ broker.Delivery) error {
	select {
	case <-time.After(w.Work):
	case <-ctx.Done():
		return ctx.Err()
	}
	if w.Rand() < w.Fail {
		return fmt.Errorf("simulated failure (--fail %v)", w.Fail)
	}
	return nil
}

// Feed publishes demo jobs into queue at rate a second, n of them (0:
// until ctx ends); feedErr hears a publish that failed while ctx lived.
func Feed(ctx context.Context, conn *broker.Conn, queue string, rate float64, n int, feedErr func(error)) {
	every := time.Duration(float64(time.Second) / rate)
	tick := time.NewTicker(max(every, time.Millisecond))
	defer tick.Stop()
	prefix := fmt.Sprintf("job-%04x-", rand.Uint32()&0xffff)
	for i := 1; n == 0 || i <= n; i++ {
		id := fmt.Sprintf("%s%d", prefix, i)
		body := fmt.Sprintf(`{"job":%d,"demo":true}`, i)
		msg := broker.Message{RoutingKey: queue, MessageID: id, Body: []byte(body), ContentType: "application/json", Persistent: true, Timestamp: time.Now()}
		if _, err := conn.Publish(ctx, []broker.Message{msg}); err != nil && ctx.Err() == nil {
			feedErr(err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// ErrInput is what every refusal of the input is (errors.Is): bad input,
// which the command shows as a usage error.
var ErrInput = errors.New("bad input to the demo worker")

// Refused says whether err refuses what the worker was asked rather than
// reports a failure: the demo's own refusals (ErrInput), and a policy the
// ladder cannot serve (a delay too long for it, a destination it lacks).
func Refused(err error) bool {
	return errors.Is(err, ErrInput) || errors.Is(err, topology.ErrDelayTooLong) || errors.Is(err, topology.ErrBadDest) || errors.Is(err, topology.ErrNoDest)
}

// inputError is a refusal: its own one line, and ErrInput.
type inputError struct{ err error }

func (e inputError) Error() string        { return e.err.Error() }
func (e inputError) Unwrap() error        { return e.err }
func (e inputError) Is(target error) bool { return target == ErrInput }

// inputErr is a refused flag.
func inputErr(format string, a ...any) error {
	return inputError{fmt.Errorf(format, a...)}
}
