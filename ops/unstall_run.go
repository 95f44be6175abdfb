package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// Remedier applies unstall's remedies to one rung: the management API's
// leader move and nudge policy (*broker.Management), and the Ra member
// restart through whatever runs rabbitmqctl on the node (the CLI's
// --rabbitmqctl PREFIX). Each call bounds itself; the undo of a policy
// is called with a fresh context, so that it runs after a cancel too.
type Remedier interface {
	MoveLeader(ctx context.Context, vhost, queue string) (from, to string, err error)
	NudgeDeadLettering(ctx context.Context, vhost string, q topology.Queue) (policy string, undo func(context.Context) error, err error)
	RestartMember(ctx context.Context, vhost, queue string) (member string, err error)
}

// Applied is the remedy applied to one rung: its leader moved From a node
// To another, the Policy declared, or its Ra Member restarted.
type Applied struct {
	Queue    string
	Remedy   topology.StallRemedy
	From, To string
	Policy   string
	Member   string
}

// UnstallEvents are what UnstallPlan.Run tells as it goes (nil: nothing):
// each remedy applied, each rung that drains again, and each policy that
// could not be deleted.
type UnstallEvents struct {
	Applied    func(Applied)
	Draining   func(Drained)
	UndoFailed func(error)
}

// StillStalledError says rungs did not drain after the remedy. Hint, for
// a policy that did not get them moving, is what to run on the node
// instead: one rabbitmqctl eval per rung.
type StillStalledError struct {
	Stuck  []StalledRung
	Remedy topology.StallRemedy
	Hint   []string
}

func (e *StillStalledError) Error() string {
	names := strings.Join(StalledNames(e.Stuck), ", ")
	switch e.Remedy {
	case topology.RemedyPolicy:
		return "the policy did not get " + names + " moving"
	case topology.RemedyLeaderMove:
		return names + " still not draining after the leader move; see the node's log"
	}
	return names + " still not draining after the Ra member restart; see the node's log"
}

// RestartAttempts is how often Run restarts the Ra member of a rung that
// does not drain after the restart. Each restart asks Ra who leads at
// that moment; a rung still stalled after the first (a 3.10.8 cluster,
// once, just after a cluster restart) gets a second, of whoever leads
// then, which costs seconds and loses nothing.
const RestartAttempts = 2

// Run applies the plan's remedy to each target through r, then watches
// them drain (w, reading by name through qr) and fails with a
// *StillStalledError naming those that did not. A policy is deleted
// whatever happens, after the watch. A Ra member restart is tried again,
// RestartAttempts in all, on the rungs it did not get moving, each
// attempt watched as long as the first.
func (p UnstallPlan) Run(ctx context.Context, r Remedier, qr QueueReader, w DrainWatch, ev UnstallEvents) error {
	if p.Remedy == topology.RemedyPolicy {
		return p.nudge(ctx, r, qr, w, ev)
	}
	window := w.Until.Sub(w.Now())
	pending := p.Targets
	for attempt := 1; ; attempt++ {
		for _, t := range pending {
			a := Applied{Queue: t.Queue.Name, Remedy: p.Remedy}
			var err error
			if p.Remedy == topology.RemedyLeaderMove {
				a.From, a.To, err = r.MoveLeader(ctx, p.Vhost, t.Queue.Name)
			} else {
				a.Member, err = r.RestartMember(ctx, p.Vhost, t.Queue.Name)
			}
			if err != nil {
				return err
			}
			ev.applied(a)
		}
		stuck, err := p.watch(ctx, qr, w, pending, ev)
		if err != nil || len(stuck) == 0 || p.Remedy != topology.RemedyRaRestart || attempt == RestartAttempts {
			return p.stillStalled(stuck, err)
		}
		pending = stuck
		w.Until = w.Now().Add(window)
	}
}

// nudge declares a policy on each target, watches them, and deletes the
// policies.
func (p UnstallPlan) nudge(ctx context.Context, r Remedier, qr QueueReader, w DrainWatch, ev UnstallEvents) error {
	var undos []func(context.Context) error
	defer func() {
		for _, undo := range undos {
			if err := undo(context.Background()); err != nil && ev.UndoFailed != nil {
				ev.UndoFailed(err)
			}
		}
	}()
	for _, t := range p.Targets {
		name, undo, err := r.NudgeDeadLettering(ctx, p.Vhost, t.Queue)
		if err != nil {
			return err
		}
		undos = append(undos, undo)
		ev.applied(Applied{Queue: t.Queue.Name, Remedy: p.Remedy, Policy: name})
	}
	return p.stillStalled(p.watch(ctx, qr, w, p.Targets, ev))
}

// watch waits for the rungs to drain and returns those that did not.
func (p UnstallPlan) watch(ctx context.Context, qr QueueReader, w DrainWatch, rungs []StalledRung, ev UnstallEvents) ([]StalledRung, error) {
	draining := ev.Draining
	if draining == nil {
		draining = func(Drained) {}
	}
	return w.WatchDrain(ctx, qr, rungs, draining)
}

// stillStalled is Run's outcome for the rungs that did not drain.
func (p UnstallPlan) stillStalled(stuck []StalledRung, err error) error {
	if err != nil || len(stuck) == 0 {
		return err
	}
	e := &StillStalledError{Stuck: stuck, Remedy: p.Remedy}
	if p.Remedy == topology.RemedyPolicy {
		for _, t := range stuck {
			e.Hint = append(e.Hint, fmt.Sprintf("rabbitmqctl eval '%s'", broker.RaftRestartExpr(p.Vhost, t.Queue.Name)))
		}
	}
	return e
}

func (ev UnstallEvents) applied(a Applied) {
	if ev.Applied != nil {
		ev.Applied(a)
	}
}

// HintedStall is err's *StillStalledError when it carries a hint (what to
// run on the node), nil otherwise: the front end then prints the hint in
// place of the error.
func HintedStall(err error) *StillStalledError {
	var still *StillStalledError
	if errors.As(err, &still) && len(still.Hint) > 0 {
		return still
	}
	return nil
}

// RabbitmqctlEval is the shell line that runs `PREFIX eval EXPR`: the
// prefix is the operator's own shell words (kubectl exec ...), the
// expression one quoted argument.
func RabbitmqctlEval(prefix, expr string) string {
	return prefix + " eval " + shellQuote(expr)
}

// CtlUnreachable is why --rabbitmqctl PREFIX cannot be used, from what
// its first eval printed (out) and how it failed; nil when it answered.
func CtlUnreachable(prefix, out string, err error) error {
	if err == nil {
		return nil
	}
	why := err.Error()
	if l := firstLine(out); l != "" {
		why += ": " + l
	}
	return fmt.Errorf("--rabbitmqctl %q cannot reach the node (%s); nothing was changed", prefix, why)
}

// CtlRestarted is the Ra member a restart through rabbitmqctl reported
// (its output's last line), or why it failed.
func CtlRestarted(queue, out string, err error) (string, error) {
	if err != nil {
		return "", fmt.Errorf("%s: rabbitmqctl eval failed (%v): %s", queue, err, firstLine(out))
	}
	return lastLine(out), nil
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
