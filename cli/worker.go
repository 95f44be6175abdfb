package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/retry"
	"github.com/rungs-dev/rungs/topology"
)

type workerFlags struct {
	demo                                 bool
	queue, park, feed                    string
	fail, jitter, multiplier             float64
	seed                                 uint64
	attempts, prefetch, jobs             int
	initial, maxBackoff, work, stepsFlag string
}

func (e *env) workerCommand() *cobra.Command {
	var wf workerFlags
	cmd := &cobra.Command{
		Use:   "worker --demo",
		Short: "Run a demo worker that fails some jobs and retries them through a ladder",
		Long: `worker --demo runs a worker built on rungs' retry library (package
github.com/rungs-dev/rungs/retry): it consumes a destination queue of the
ladder, fails a share of its jobs on purpose, and sends each failed job back
into the ladder, addressed to its own queue, with exponential backoff (or
--steps). After --attempts attempts a job is parked in --park with the
reason. Each job's attempt count and history travel in headers
(x-rungs-attempt, x-rungs-history); rungs peek shows them.

It prints one line per job handled and runs until interrupted, or until
--jobs jobs have finished. With --feed it also publishes new jobs into its
queue. Open the console alongside to watch failed jobs climb back into the
ladder, come back, and park.

It declares the worker's queue, the parking queue and the ladder's binding
to the queue if they are missing; the ladder itself must exist.`,
		Example: `  rungs apply --ladder demo --unit 1s --max-delay 1h --target demo.work
  rungs worker --demo --ladder demo --queue demo.work --feed 2/s --fail 0.3
  rungs worker --demo --ladder demo --steps 5s,30s,2m --attempts 4 --jobs 20 --feed 20/s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !wf.demo {
				return usageErr("rungs worker runs only the demo worker (--demo); a real worker imports github.com/rungs-dev/rungs/retry")
			}
			return e.runWorker(cmd.Context(), wf)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&wf.demo, "demo", false, "run the demo worker (required)")
	f.StringVar(&wf.queue, "queue", "", "queue to consume, a destination of the ladder (default: its first destination, else LADDER.work)")
	f.StringVar(&wf.park, "park", "", "queue for jobs out of attempts (default: QUEUE.parked)")
	f.Float64Var(&wf.fail, "fail", 0.3, "share of attempts that fail, 0 to 1")
	f.Uint64Var(&wf.seed, "seed", 0, "random seed for failures and jitter (default: random)")
	f.IntVar(&wf.attempts, "attempts", 5, "attempts per job before it is parked")
	f.StringVar(&wf.initial, "initial", "1s", "delay after the first failure")
	f.Float64Var(&wf.multiplier, "multiplier", 2, "growth of the delay per failure")
	f.StringVar(&wf.maxBackoff, "max-backoff", "1m", "longest delay before jitter")
	f.Float64Var(&wf.jitter, "jitter", 0.2, "spread each delay over [d, d·(1+jitter)), 0 to 1")
	f.StringVar(&wf.stepsFlag, "steps", "", "explicit delays instead of exponential backoff, e.g. 5s,30s,2m")
	f.StringVar(&wf.work, "work", "100ms", "time each attempt takes")
	f.StringVar(&wf.feed, "feed", "", "publish new jobs into the queue at this rate, e.g. 2/s")
	f.IntVar(&wf.jobs, "jobs", 0, "stop after this many jobs finished, succeeded or parked (with --feed: publish this many)")
	f.IntVar(&wf.prefetch, "prefetch", 4, "unacknowledged jobs the worker holds")
	return cmd
}

// policy builds the retry policy the flags describe.
func (wf workerFlags) policy() (retry.Policy, error) {
	p := retry.Policy{MaxAttempts: wf.attempts, Jitter: wf.jitter, Multiplier: wf.multiplier}
	if wf.stepsFlag != "" {
		for _, s := range strings.Split(wf.stepsFlag, ",") {
			d, err := topology.ParseDelay(s)
			if err != nil {
				return p, usageErr("--steps: %v", err)
			}
			p.Steps = append(p.Steps, d)
		}
	} else {
		var err error
		if p.Initial, err = topology.ParseDelay(wf.initial); err != nil {
			return p, usageErr("--initial: %v", err)
		}
		if p.Max, err = topology.ParseDelay(wf.maxBackoff); err != nil {
			return p, usageErr("--max-backoff: %v", err)
		}
	}
	if err := p.Validate(); err != nil {
		return p, usageErr("%v", err)
	}
	return p, nil
}

func (e *env) runWorker(ctx context.Context, wf workerFlags) error {
	in, err := wf.parse()
	if err != nil {
		return err
	}
	if err := refuseReadOnly(e.config(), "worker"); err != nil {
		return err
	}
	l, queue, err := e.workerLadder(ctx, wf.queue)
	if err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	seed, random := workerRand(wf.seed)
	rt, err := retry.New(conn, l, queue, wf.park, in.policy, retry.WithRand(random))
	if err != nil {
		if errors.Is(err, topology.ErrDelayTooLong) || errors.Is(err, topology.ErrBadDest) || errors.Is(err, topology.ErrNoDest) {
			return usageErr("%v", err)
		}
		return err
	}
	if err := rt.Setup(ctx, conn); err != nil {
		return err
	}
	fmt.Fprintf(e.Err, "rungs: worker on %s: %s; failing %.0f%% of attempts (seed %d); parking in %s\n",
		queue, describePolicy(in.policy), wf.fail*100, seed, rt.Parking())
	st, err := e.serveWorker(ctx, conn, rt, wf, in, queue, random)
	fmt.Fprintf(e.Err, "rungs: worker stopped: %d succeeded, %d retried, %d parked\n", st.ok, st.retried, st.parked)
	return err
}

// workerInput is what the worker's flags say once parsed.
type workerInput struct {
	policy retry.Policy
	work   time.Duration
	feed   float64 // jobs a second the worker feeds itself; 0: none
}

// parse reads and checks the flags; bad input is a usage error.
func (wf workerFlags) parse() (workerInput, error) {
	var in workerInput
	var err error
	if in.policy, err = wf.policy(); err != nil {
		return in, err
	}
	if in.work, err = topology.ParseDelay(wf.work); err != nil {
		return in, usageErr("--work: %v", err)
	}
	if wf.feed != "" {
		if in.feed, err = topology.ParseRate(wf.feed); err != nil {
			return in, usageErr("--feed: %v", err)
		}
	}
	switch {
	case wf.fail < 0 || wf.fail > 1:
		return in, usageErr("--fail must be between 0 and 1, got %v", wf.fail)
	case wf.prefetch < 1:
		return in, usageErr("--prefetch must be at least 1")
	case wf.jobs < 0:
		return in, usageErr("--jobs cannot be negative")
	}
	return in, nil
}

// workerLadder is the ladder the worker retries through and the queue it
// consumes: --queue, else the ladder's first target, else NAME.work.
func (e *env) workerLadder(ctx context.Context, queue string) (topology.Ladder, string, error) {
	r, err := e.resolveLadderFrom(ctx, e.ladderSnapshot)
	if err != nil {
		return topology.Ladder{}, "", err
	}
	if err := e.unreadShape(ctx, r, "worker not started"); err != nil {
		return topology.Ladder{}, "", err
	}
	if r.snap != nil && !r.discovered {
		return topology.Ladder{}, "", fmt.Errorf("%s (rungs apply creates one)", e.opts.ladder.noLadder(r))
	}
	l := r.ladder
	if queue == "" {
		queue = l.Name + ".work"
		if len(l.Targets) > 0 {
			queue = l.Targets[0]
		}
	}
	return l, queue, nil
}

// workerRand is the worker's random source, seeded by seed (a random seed
// when 0, returned so that a run can be repeated); the feeder and the
// worker share it.
func workerRand(seed uint64) (uint64, func() float64) {
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

// serveWorker feeds the queue (--feed) and works its jobs, failing a
// share of them, until ctx ends or --jobs have finished.
func (e *env) serveWorker(ctx context.Context, conn *broker.Conn, rt *retry.Retrier, wf workerFlags, in workerInput, queue string, random func() float64) (workerStats, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var feeder sync.WaitGroup
	if in.feed > 0 {
		feeder.Add(1)
		go func() {
			defer feeder.Done()
			feedJobs(ctx, conn, e.Err, queue, in.feed, wf.jobs)
		}()
	}
	var st workerStats
	handle := func(ctx context.Context, d broker.Delivery) error {
		select {
		case <-time.After(in.work):
		case <-ctx.Done():
			return ctx.Err()
		}
		if random() < wf.fail {
			return fmt.Errorf("simulated failure (--fail %v)", wf.fail)
		}
		return nil
	}
	notify := func(ev retry.Event) {
		st.count(ev)
		e.view().printJob(ev)
		if wf.jobs > 0 && st.finished() >= wf.jobs {
			stop()
		}
	}
	err := rt.Serve(ctx, conn, wf.prefetch, handle, notify)
	stop()
	feeder.Wait()
	return st, err
}

type workerStats struct{ ok, retried, parked, failedRetry int }

func (s *workerStats) count(ev retry.Event) {
	switch {
	case ev.RetryErr != nil:
		s.failedRetry++
	case ev.Err == nil:
		s.ok++
	case ev.Outcome.Action == retry.Parked:
		s.parked++
	default:
		s.retried++
	}
}

func (s *workerStats) finished() int { return s.ok + s.parked }

func describePolicy(p retry.Policy) string {
	var d string
	if len(p.Steps) > 0 {
		steps := make([]string, len(p.Steps))
		for i, s := range p.Steps {
			steps[i] = topology.FormatDelay(s)
		}
		d = "steps " + strings.Join(steps, ", ")
	} else {
		m := p.Multiplier
		if m == 0 {
			m = retry.DefaultMultiplier
		}
		d = fmt.Sprintf("backoff %s ×%v up to %s", topology.FormatDelay(p.Initial), m, topology.FormatDelay(p.Max))
	}
	if p.Jitter > 0 {
		d += fmt.Sprintf(" +%.0f%% jitter", p.Jitter*100)
	}
	return fmt.Sprintf("%s, %d attempts", d, p.MaxAttempts)
}

// printJob prints one line per job handled (a JSON object with --json).
func (v view) printJob(ev retry.Event) {
	id := ev.Delivery.MessageID
	if id == "" {
		id = "job"
	}
	now := time.Now()
	if v.json {
		line := map[string]any{"time": now.UTC().Format(time.RFC3339Nano), "job": id, "attempt": ev.Attempt, "ok": ev.Err == nil}
		if ev.Err != nil {
			line["error"] = ev.Err.Error()
			line["action"] = ev.Outcome.Action.String()
			line["delay_ms"] = ev.Outcome.Delay.Milliseconds()
			line["routing_key"] = ev.Outcome.Key
			line["queue"] = ev.Outcome.Queue
		}
		if ev.RetryErr != nil {
			line["retry_error"] = ev.RetryErr.Error()
		}
		_ = writeJSON(v.Out, line)
		return
	}
	var what string
	switch {
	case ev.RetryErr != nil:
		what = fmt.Sprintf("failed: %v; could not retry it (%v), handed it back", ev.Err, ev.RetryErr)
	case ev.Err == nil:
		what = "ok"
	case ev.Outcome.Action == retry.Parked:
		what = fmt.Sprintf("failed: %v; parked in %s", ev.Err, ev.Outcome.Queue)
	default:
		what = fmt.Sprintf("failed: %v; retry in %s (key %s)", ev.Err, topology.FormatDelay(ev.Outcome.Delay), ev.Outcome.Key)
	}
	fmt.Fprintf(v.Out, "%s  %s  attempt %d  %s\n", now.Format("15:04:05.000"), id, ev.Attempt, what)
}

// feedJobs publishes demo jobs into the worker's queue at rate a second,
// n of them (0: until ctx ends).
func feedJobs(ctx context.Context, conn *broker.Conn, errs io.Writer, queue string, rate float64, n int) {
	every := time.Duration(float64(time.Second) / rate)
	tick := time.NewTicker(max(every, time.Millisecond))
	defer tick.Stop()
	prefix := fmt.Sprintf("job-%04x-", rand.Uint32()&0xffff)
	for i := 1; n == 0 || i <= n; i++ {
		id := fmt.Sprintf("%s%d", prefix, i)
		body := fmt.Sprintf(`{"job":%d,"demo":true}`, i)
		msg := broker.Message{RoutingKey: queue, MessageID: id, Body: []byte(body), ContentType: "application/json", Persistent: true, Timestamp: time.Now()}
		if _, err := conn.Publish(ctx, []broker.Message{msg}); err != nil && ctx.Err() == nil {
			fmt.Fprintf(errs, "rungs: feed: %v\n", err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}
