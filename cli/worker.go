package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/retry"
	"github.com/rungs-dev/rungs/retry/demo"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

func (e *env) workerCommand() *cobra.Command {
	var wf demo.Input
	var demoFlag bool
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
			if !demoFlag {
				return usageErr("rungs worker runs only the demo worker (--demo); a real worker imports github.com/rungs-dev/rungs/retry")
			}
			return e.runWorker(cmd.Context(), wf)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&demoFlag, "demo", false, "run the demo worker (required)")
	f.StringVar(&wf.Queue, "queue", "", "queue to consume, a destination of the ladder (default: its first destination, else LADDER.work)")
	f.StringVar(&wf.Park, "park", "", "queue for jobs out of attempts (default: QUEUE.parked)")
	f.Float64Var(&wf.Fail, "fail", 0.3, "share of attempts that fail, 0 to 1")
	f.Uint64Var(&wf.Seed, "seed", 0, "random seed for failures and jitter (default: random)")
	f.IntVar(&wf.Attempts, "attempts", 5, "attempts per job before it is parked")
	f.StringVar(&wf.Initial, "initial", "1s", "delay after the first failure")
	f.Float64Var(&wf.Multiplier, "multiplier", 2, "growth of the delay per failure")
	f.StringVar(&wf.MaxBackoff, "max-backoff", "1m", "longest delay before jitter")
	f.Float64Var(&wf.Jitter, "jitter", 0.2, "spread each delay over [d, d·(1+jitter)), 0 to 1")
	f.StringVar(&wf.Steps, "steps", "", "explicit delays instead of exponential backoff, e.g. 5s,30s,2m")
	f.StringVar(&wf.Work, "work", "100ms", "time each attempt takes")
	f.StringVar(&wf.Feed, "feed", "", "publish new jobs into the queue at this rate, e.g. 2/s")
	f.IntVar(&wf.Jobs, "jobs", 0, "stop after this many jobs finished, succeeded or parked (with --feed: publish this many)")
	f.IntVar(&wf.Prefetch, "prefetch", 4, "unacknowledged jobs the worker holds")
	return cmd
}

func (e *env) runWorker(ctx context.Context, wf demo.Input) error {
	w, err := wf.Worker()
	if err != nil {
		return workerErr(err)
	}
	if err := ops.RefuseReadOnly(e.config(), "worker"); err != nil {
		return err
	}
	l, err := e.workerLadder(ctx)
	if err != nil {
		return err
	}
	queue := demo.QueueOf(l, wf.Queue)
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	rt, err := retry.New(conn, l, queue, wf.Park, w.Policy, retry.WithRand(w.Rand))
	if err != nil {
		return workerErr(err)
	}
	if err := rt.Setup(ctx, conn); err != nil {
		return err
	}
	fmt.Fprintf(e.Err, "rungs: worker on %s: %s; failing %.0f%% of attempts (seed %d); parking in %s\n",
		queue, describePolicy(w.Policy), w.Fail*100, w.Seed, rt.Parking())
	st, err := w.Serve(ctx, conn, rt, queue, e.view().printJob, func(err error) { fmt.Fprintf(e.Err, "rungs: feed: %v\n", err) })
	fmt.Fprintf(e.Err, "rungs: worker stopped: %d succeeded, %d retried, %d parked\n", st.OK, st.Retried, st.Parked)
	return err
}

// workerErr makes what demo.Refused says is refused input bad input.
func workerErr(err error) error {
	if demo.Refused(err) {
		return usageErr("%v", err)
	}
	return err
}

// workerLadder is the ladder the worker retries through.
func (e *env) workerLadder(ctx context.Context) (topology.Ladder, error) {
	r, err := e.resolveLadderFrom(ctx, e.ladderSnapshot)
	if err != nil {
		return topology.Ladder{}, err
	}
	if err := e.unreadShape(ctx, r, "worker not started"); err != nil {
		return topology.Ladder{}, err
	}
	if r.snap != nil && !r.discovered {
		return topology.Ladder{}, fmt.Errorf("%s (rungs apply creates one)", e.opts.ladder.noLadder(r))
	}
	return r.ladder, nil
}

func describePolicy(p retry.Policy) string {
	return ui.PolicyText(ui.RetryPolicy{Steps: p.Steps, Initial: p.Initial, Max: p.Max, Multiplier: p.Multiplier,
		Jitter: p.Jitter, MaxAttempts: p.MaxAttempts, DefaultMultiply: retry.DefaultMultiplier})
}

// printJob prints one line per job handled (a JSON object with --json).
func (v view) printJob(ev retry.Event) {
	j := ui.Job{At: time.Now(), ID: ev.Delivery.MessageID, Attempt: ev.Attempt, Err: ev.Err, RetryErr: ev.RetryErr,
		Action: ev.Outcome.Action.String(), Parked: ev.Outcome.Action == retry.Parked,
		Delay: ev.Outcome.Delay, Key: ev.Outcome.Key, Queue: ev.Outcome.Queue}
	_ = v.emit(ui.JobJSON(j), ui.JobLine(j)+"\n")
}
