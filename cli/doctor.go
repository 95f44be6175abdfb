package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// check is one line of the doctor's report (ops.Finding).
type check = ops.Finding

// Check outcomes, mildest first.
const (
	checkOK      = ops.FindingOK
	checkInfo    = ops.FindingInfo
	checkWarn    = ops.FindingWarn
	checkProblem = ops.FindingProblem
)

func (e *env) doctorCommand() *cobra.Command {
	var allVhosts bool
	var target, definitions string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the broker and the ladders: version, feature flags, plugins, integrity",
		Long: `doctor checks what the ladders on a broker need and whether they are whole:

  broker          the management API answers; RabbitMQ and Erlang versions;
                  every node is running; AMQP accepts the credentials
  plugins         rabbitmq_management on every node
  feature flags   quorum ladders need quorum_queue, and their at-least-once
                  dead-lettering needs RabbitMQ 3.10+ and stream_queue
  each ladder     drift from its plan (missing, extra or changed objects),
                  stuck rungs, stalled dead-lettering (quorum rungs whose
                  expired messages do not move on), unroutable messages,
                  consumers on delay queues; quorum delayed retry on a rung
                  (x-delayed-retry-* arguments or policy keys: on RabbitMQ
                  4.3 it holds a handed-back message beyond the TTL)

When a quorum rung holds expired messages waiting to be dead-lettered,
doctor watches it for up to 15s (its TTL, at most one statistics interval,
plus two intervals) to tell a busy rung from a stalled one.

With --ladder it checks that ladder only (and says if it is not there). It
reads only: nothing on the broker changes. It exits 0 when nothing is wrong
(warnings included), 1 when a check found a problem.`,
		Example: `  rungs doctor
  rungs doctor --ladder jobs
  rungs doctor --all-vhosts --json | jq '.checks[] | select(.status == "problem")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := ops.ParseTarget(target)
			if err != nil {
				return err
			}
			if definitions != "" {
				return doctorDefinitions(e.view(), e.vhost(), definitions, t)
			}
			return e.runDoctor(cmd.Context(), e.opts.ladder.named(), allVhosts, t)
		},
	}
	cmd.Flags().BoolVar(&allVhosts, "all-vhosts", false, "check the ladders of every vhost")
	cmd.Flags().StringVar(&target, "target", "", "also check the delays against the release an upgrade goes to, e.g. 4.3 (see docs/delays.md)")
	cmd.Flags().StringVar(&definitions, "definitions", "", "check the delays of an exported definitions file instead of a broker (with --target)")
	return cmd
}

// runDoctor asks ops.Doctor, which reads and judges, and prints the
// findings: a problem among them exits 1.
func (e *env) runDoctor(ctx context.Context, only string, allVhosts bool, target topology.Version) error {
	c := e.clients()
	m, err := c.management()
	if err != nil {
		return err
	}
	v := e.view()
	checks, err := ops.Doctor(ctx, m, ops.DoctorRequest{
		Vhost: e.vhost(), Only: only, AllVhosts: allVhosts, Target: target, Timeout: e.opts.timeout,
		Conn:     func(ctx context.Context) (ops.DoctorConn, error) { return c.amqp(ctx) },
		Dial:     func(ctx context.Context, vhost string) (ops.DoctorConn, error) { return c.dial(ctx, vhost) },
		Watching: v.stallNote,
	})
	if err != nil {
		return err
	}
	return v.printDoctor(checks)
}

// printDoctor prints doctor's findings, text or JSON: a problem among them
// exits 1.
func (v view) printDoctor(checks ops.Findings) error {
	problems := checks.Problems()
	if err := v.emit(map[string]any{"ok": problems == 0, "problems": problems, "checks": checks}, ui.ChecksText(checks, problems)); err != nil {
		return err
	}
	return exitWith(checks.Exit())
}
