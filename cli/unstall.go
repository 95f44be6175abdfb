package cli

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

func (e *env) unstallCommand() *cobra.Command {
	var ctl string
	cmd := &cobra.Command{
		Use:   "unstall [RUNG...]",
		Short: "Get stalled quorum rungs dead-lettering again (asks first)",
		Long: `unstall restarts the dead-letter worker of quorum rungs whose expired
messages wait to be dead-lettered and do not drain (doctor and status call
them stalled), then checks that their waiting count falls. Nothing is
purged: the messages move on to the next rung, late but not lost, at least
once (a message can arrive twice).

Without RUNG it finds the ladder's stalled rungs itself, which takes up to
15s of watching. A named RUNG must be a rung of the ladder with expired
messages waiting.

By default it works through the management API, with what revives a rung
on the broker's release (measured on 3.10.8, 4.0.5 and 4.3.6):

  - before 4.3, it declares for each rung a policy that matches that queue
    alone and changes nothing (it repeats the policy that applied before and
    the rung's own dead-letter exchange), which makes the quorum queue start
    its dead-letter worker again, and deletes the policy once the rung
    drains; this needs a user who may set policies (policymaker or
    administrator tag);
  - from 4.3, where a policy does not, it moves each rung's leader: it
    removes the member that leads the queue, waits for another to be
    elected (which starts a dead-letter worker of its own), and adds the
    removed node back as a follower. That needs a queue of two members or
    more (a cluster) and a user the broker lets change members (meant for
    administrators); on a single node unstall says so and needs
    --rabbitmqctl.

With --rabbitmqctl PREFIX it instead restarts each queue's Ra member on its
leader node through rabbitmqctl eval; PREFIX is how to run rabbitmqctl
against the node, e.g. "rabbitmqctl -n rabbit@host" or
"kubectl exec rabbit-0 -- rabbitmqctl". When the policy does not get a rung
moving and no PREFIX is given, unstall prints the rabbitmqctl command to run
on the node. --read-only refuses it.`,
		Example: `  rungs unstall --ladder jobs
  rungs unstall --ladder jobs jobs.rung.03.1 --yes
  rungs unstall --ladder jobs --rabbitmqctl "kubectl exec rabbit-0 -- rabbitmqctl"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return e.runUnstall(cmd.Context(), args, ctl)
		},
	}
	cmd.Flags().StringVar(&ctl, "rabbitmqctl", "", "command prefix that runs rabbitmqctl against the node: restart the Ra member instead of working through the management API")
	cmd.Flags().BoolVarP(&e.opts.yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func (e *env) runUnstall(ctx context.Context, args []string, ctl string) error {
	if err := ops.RefuseReadOnly(e.config(), "unstall"); err != nil {
		return err
	}
	snap, err := e.ladderSnapshot(ctx)
	if err != nil {
		return err
	}
	// Reading the ladder opened the management API.
	u := unstaller{m: e.clients().mgmt, vhost: e.vhost(), timeout: e.opts.timeout, view: e.view()}
	p, err := ops.PlanUnstall(ops.UnstallRequest{
		Vhost: e.vhost(), Ladder: e.opts.ladder.query(), Snap: snap, Rungs: args, Ctl: ctl,
		Observe: func(l topology.Ladder) (health.Report, error) {
			return observe(ctx, u.view, ops.Bounded{Insp: u.m, Timeout: u.timeout}, ops.ScopeOf(u.vhost, l), nil, e.readUnrouted)
		},
		Version: func() topology.Version {
			v, _ := u.m.Version(ctx) // unread: the policy, as before 4.3
			return v
		},
		Members: u.quorumMembers(ctx),
	})
	if err != nil {
		return err
	}
	if len(p.Targets) == 0 {
		fmt.Fprintf(e.Out, "no stalled rung in ladder %s\n", p.Ladder.Name)
		return nil
	}
	if ctl != "" {
		// Check the node answers before asking, so that a wrong prefix
		// fails with nothing changed.
		out, err := u.rabbitmqctlEval(ctx, ctl, "ok.")
		if err := ops.CtlUnreachable(ctl, out, err); err != nil {
			return err
		}
	}
	if err := e.view().confirm(e.opts.yes, p.Question(), p.Ladder.Name); err != nil {
		return err
	}
	return u.run(ctx, p, ctl)
}

// run has ops apply the plan's remedy and watch the rungs drain for
// ops.UnstallVerify, saying what it does as it goes; a policy that did
// not help ends with what to run on the node.
func (u unstaller) run(ctx context.Context, p ops.UnstallPlan, ctl string) error {
	w := ops.DrainWatch{Vhost: u.vhost, Until: time.Now().Add(ops.UnstallVerify), Timeout: u.timeout, Now: time.Now, Sleep: ops.Sleep}
	err := p.Run(ctx, remedier{u, ctl}, u.m, w, ops.UnstallEvents{Applied: u.printApplied, Draining: u.printDraining, UndoFailed: u.printUndoFailed})
	if still := ops.HintedStall(err); still != nil {
		fmt.Fprint(u.Err, ui.UnstallHintText(still))
		return &exitError{ExitError, nil}
	}
	return err
}

// unstaller applies a remedy to stalled rungs, through the management API
// of their vhost or through rabbitmqctl, and watches them drain: it needs
// no flag, only the open client and where to report.
type unstaller struct {
	m       *broker.Management
	vhost   string
	timeout time.Duration
	view
}

// quorumMembers counts a quorum queue's members, each read bounded by
// --timeout.
func (u unstaller) quorumMembers(ctx context.Context) func(queue string) (int, error) {
	return func(queue string) (int, error) {
		cctx, cancel := context.WithTimeout(ctx, u.timeout)
		defer cancel()
		_, members, err := u.m.QuorumMembers(cctx, u.vhost, queue)
		return len(members), err
	}
}

// remedier applies the remedies ops.UnstallPlan.Run chooses: through the
// management API, each request within --timeout (a leader move at least
// 30s), or through rabbitmqctl PREFIX.
type remedier struct {
	u   unstaller
	ctl string
}

func (r remedier) MoveLeader(ctx context.Context, vhost, queue string) (string, string, error) {
	cctx, cancel := context.WithTimeout(ctx, max(r.u.timeout, 30*time.Second))
	defer cancel()
	from, to, err := r.u.m.MoveLeader(cctx, vhost, queue)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", queue, err)
	}
	return from, to, nil
}

func (r remedier) NudgeDeadLettering(ctx context.Context, vhost string, q topology.Queue) (string, func(context.Context) error, error) {
	cctx, cancel := context.WithTimeout(ctx, r.u.timeout)
	defer cancel()
	name, undo, err := r.u.m.NudgeDeadLettering(cctx, vhost, q)
	if err != nil {
		return "", nil, err
	}
	return name, func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, r.u.timeout)
		defer cancel()
		return undo(cctx)
	}, nil
}

func (r remedier) RestartMember(ctx context.Context, vhost, queue string) (string, error) {
	out, err := r.u.rabbitmqctlEval(ctx, r.ctl, broker.RaftRestartExpr(vhost, queue))
	return ops.CtlRestarted(queue, out, err)
}

// printApplied says what the remedy did to one rung.
func (u unstaller) printApplied(a ops.Applied) { fmt.Fprint(u.Out, ui.UnstallAppliedText(a)) }

// printUndoFailed warns of a nudge policy left behind.
func (u unstaller) printUndoFailed(err error) {
	fmt.Fprintf(u.Err, "warning: %v (delete it by hand: its name starts with %s)\n", err, broker.NudgePolicyPrefix)
}

// rabbitmqctlEval runs `PREFIX eval EXPR`. The prefix is the operator's
// own shell words (kubectl exec ...), so a shell runs it; the expression is
// quoted as one argument.
func (u unstaller) rabbitmqctlEval(ctx context.Context, prefix, expr string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, max(u.timeout, 30*time.Second))
	defer cancel()
	out, err := exec.CommandContext(cctx, "sh", "-c", ops.RabbitmqctlEval(prefix, expr)).CombinedOutput()
	return string(out), err
}

// printDraining says that a rung drains again.
func (u unstaller) printDraining(d ops.Drained) { fmt.Fprint(u.Out, ui.UnstallDrainingText(d)) }
