package ops

import (
	"context"
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

// Run applies the plan's remedy to each target through r, then watches
// them drain (w, reading by name through qr) and fails with a
// *StillStalledError naming those that did not. A policy is deleted
// whatever happens, after the watch.
func (p UnstallPlan) Run(ctx context.Context, r Remedier, qr QueueReader, w DrainWatch, ev UnstallEvents) error {
	if p.Remedy == topology.RemedyPolicy {
		return p.nudge(ctx, r, qr, w, ev)
	}
	for _, t := range p.Targets {
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
	return p.watch(ctx, qr, w, ev)
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
	return p.watch(ctx, qr, w, ev)
}

// watch waits for the targets to drain; those that do not are the error.
func (p UnstallPlan) watch(ctx context.Context, qr QueueReader, w DrainWatch, ev UnstallEvents) error {
	draining := ev.Draining
	if draining == nil {
		draining = func(Drained) {}
	}
	stuck, err := w.WatchDrain(ctx, qr, p.Targets, draining)
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
