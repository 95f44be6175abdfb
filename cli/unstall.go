package cli

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
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
	if err := refuseReadOnly(e.config(), "unstall"); err != nil {
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
			return observe(ctx, u.view, timed{u.m, u.timeout}, ops.ScopeOf(u.vhost, l), nil, e.readUnrouted)
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
	targets := p.Targets
	if ctl != "" {
		// Check the node answers before asking, so that a wrong prefix
		// fails with nothing changed.
		if out, err := u.rabbitmqctlEval(ctx, ctl, "ok."); err != nil {
			why := err.Error()
			if l := firstLine(out); l != "" {
				why += ": " + l
			}
			return fmt.Errorf("--rabbitmqctl %q cannot reach the node (%s); nothing was changed", ctl, why)
		}
	}
	if err := e.view().confirm(e.opts.yes, p.Question(), p.Ladder.Name); err != nil {
		return err
	}
	switch p.Remedy {
	case topology.RemedyLeaderMove:
		return u.unstallLeaderMove(ctx, targets)
	case topology.RemedyPolicy:
		return u.unstallPolicy(ctx, targets)
	}
	return u.unstallRaft(ctx, targets, ctl)
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

// unstallLeaderMove moves every target's leader to another member, then
// waits for each waiting count to fall.
func (u unstaller) unstallLeaderMove(ctx context.Context, targets []ops.StalledRung) error {
	for _, t := range targets {
		cctx, cancel := context.WithTimeout(ctx, max(u.timeout, 30*time.Second))
		from, to, err := u.m.MoveLeader(cctx, u.vhost, t.Queue.Name)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", t.Queue.Name, err)
		}
		fmt.Fprintf(u.Out, "%s: moved its leader from %s to %s (%s is a follower again)\n", t.Queue.Name, from, to, from)
	}
	return u.reportDrain(ctx, targets, "the leader move")
}

// unstallPolicy nudges every target with a policy, waits for each waiting
// count to fall, and deletes the policies whatever happened.
func (u unstaller) unstallPolicy(ctx context.Context, targets []ops.StalledRung) error {
	m := u.m
	var undos []func(context.Context) error
	defer func() {
		for _, undo := range undos {
			// A fresh context: the policies must go even if ctx was cancelled.
			cctx, cancel := context.WithTimeout(context.Background(), u.timeout)
			if err := undo(cctx); err != nil {
				fmt.Fprintf(u.Err, "warning: %v (delete it by hand: its name starts with %s)\n", err, broker.NudgePolicyPrefix)
			}
			cancel()
		}
	}()
	for _, t := range targets {
		cctx, cancel := context.WithTimeout(ctx, u.timeout)
		name, undo, err := m.NudgeDeadLettering(cctx, u.vhost, t.Queue)
		cancel()
		if err != nil {
			return err
		}
		undos = append(undos, undo)
		fmt.Fprintf(u.Out, "%s: declared policy %s\n", t.Queue.Name, name)
	}
	stuck, err := u.verifyDrain(ctx, targets)
	if err != nil {
		return err
	}
	if len(stuck) == 0 {
		return nil
	}
	fmt.Fprintf(u.Err, "the policy did not get %s moving; on the node, run:\n", strings.Join(ops.StalledNames(stuck), ", "))
	for _, t := range stuck {
		fmt.Fprintf(u.Err, "  rabbitmqctl eval '%s'\n", broker.RaftRestartExpr(u.vhost, t.Queue.Name))
	}
	fmt.Fprintln(u.Err, "or run unstall again with --rabbitmqctl PREFIX")
	return &exitError{ExitError, nil}
}

// unstallRaft restarts every target's Ra member through rabbitmqctl.
func (u unstaller) unstallRaft(ctx context.Context, targets []ops.StalledRung, prefix string) error {
	for _, t := range targets {
		out, err := u.rabbitmqctlEval(ctx, prefix, broker.RaftRestartExpr(u.vhost, t.Queue.Name))
		if err != nil {
			return fmt.Errorf("%s: rabbitmqctl eval failed (%v): %s", t.Queue.Name, err, firstLine(out))
		}
		fmt.Fprintf(u.Out, "%s: restarted Ra member %s\n", t.Queue.Name, lastLine(out))
	}
	return u.reportDrain(ctx, targets, "the Ra member restart")
}

// reportDrain verifies that every target drains after a remedy, and fails
// naming those that do not.
func (u unstaller) reportDrain(ctx context.Context, targets []ops.StalledRung, remedy string) error {
	stuck, err := u.verifyDrain(ctx, targets)
	if err != nil {
		return err
	}
	if len(stuck) > 0 {
		return fmt.Errorf("%s still not draining after %s; see the node's log", strings.Join(ops.StalledNames(stuck), ", "), remedy)
	}
	return nil
}

// rabbitmqctlEval runs `PREFIX eval EXPR`. The prefix is the operator's
// own shell words (kubectl exec ...), so a shell runs it; the expression is
// quoted as one argument.
func (u unstaller) rabbitmqctlEval(ctx context.Context, prefix, expr string) (string, error) {
	cctx, cancel := context.WithTimeout(ctx, max(u.timeout, 30*time.Second))
	defer cancel()
	out, err := exec.CommandContext(cctx, "sh", "-c", prefix+" eval "+shellQuote(expr)).CombinedOutput()
	return string(out), err
}

// verifyDrain has ops watch the targets drain for ops.UnstallVerify,
// reporting each rung as it starts to, and returns those that did not.
func (u unstaller) verifyDrain(ctx context.Context, targets []ops.StalledRung) ([]ops.StalledRung, error) {
	w := ops.DrainWatch{Vhost: u.vhost, Until: time.Now().Add(ops.UnstallVerify), Timeout: u.timeout, Now: time.Now, Sleep: ops.Sleep}
	return w.WatchDrain(ctx, u.m, targets, u.printDraining)
}

// printDraining says that a rung drains again.
func (u unstaller) printDraining(d ops.Drained) {
	fmt.Fprintf(u.Out, "%s: draining, %s waiting to be dead-lettered (was %s)\n", d.Queue.Name,
		topology.FormatCount(d.Now.Stats.Expired), topology.FormatCount(d.Before))
}

// shellQuote quotes s as one POSIX shell word.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	first, _, _ := strings.Cut(s, "\n")
	return first
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
