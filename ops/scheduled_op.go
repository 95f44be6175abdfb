package ops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// ScheduledReader is what a scheduled-messages operation reads: the
// ladder's objects by name and a quorum rung's peek facts
// (*broker.Management).
type ScheduledReader interface {
	ScopedInspector
	PeekFacter
}

// ScheduledAsk is a scheduled-messages command as a front end gathers
// it, before anything is read: the ladder, the filter's terms and, for an
// action, the action's terms (ActionTerms).
type ScheduledAsk struct {
	Vhost  string
	Ladder LadderQuery
	// Names are the names to read the ladder by (default Ladder.Name): a
	// layout whose ladder name is fixed names its objects by that name.
	Names []string
	Terms FilterTerms
	// Keep is how many of the earliest-due matches to list, at least 1.
	Keep            int
	Force, ReadOnly bool
	// Action is "" for a listing; DryRun lists what the action would
	// take, so read-only mode allows it.
	Action Action
	DryRun bool
	Act    ActionTerms
	Now    time.Time
}

// ScheduledJob is a checked scheduled-messages command: the scan to run
// and, for an action, the action (zero for a listing), which a front end
// runs after the operator confirmed it (ActionPlan.Run) unless DryRun.
type ScheduledJob struct {
	Scan   ScanPlan
	Action ActionPlan
	DryRun bool
}

// Acts reports whether the job changes the broker when run: an action
// that is not a dry run.
func (j ScheduledJob) Acts() bool { return j.Action.Action != "" && !j.DryRun }

// ErrNoScheduledLadder is a scheduled command whose ladder the vhost
// does not have.
var ErrNoScheduledLadder = errors.New("no such ladder")

// Scheduled is the one entry point of a scheduled-messages command: it
// reads the terms, reads the ladder's objects by name, finds the ladder,
// gates its rungs for a scan (PlanScan) and, for an action, checks it
// (PlanAction). A front end then runs the scan (ScanPlan.Run) for a
// listing or a dry run, or asks the operator and runs the action
// (ActionPlan.Run). Bad terms are *FieldErrors named as the CLI's flags
// ("limit", "delay", "at", "park", "window", the filter's terms); a rung
// the peek gate refuses is a *ScanRefusal; read-only mode refuses an
// action with broker.ErrReadOnly; a query matching several ladders is an
// *AmbiguousLadderError and none an error wrapping ErrNoScheduledLadder.
func Scheduled(ctx context.Context, r ScheduledReader, ask ScheduledAsk) (ScheduledJob, error) {
	var job ScheduledJob
	if ask.Keep < 1 {
		return job, fieldErr("limit", "must be at least 1")
	}
	f, err := ask.Terms.Filter(ask.Now)
	if err != nil {
		return job, err
	}
	var act ActionRequest
	if ask.Action != "" {
		if act, err = ask.Act.Request(ask.Action, ask.Now); err != nil {
			return job, err
		}
		if ask.ReadOnly && !ask.DryRun {
			return job, fmt.Errorf("scheduled %s: %w", act.Action, broker.ErrReadOnly)
		}
	}
	if err := topology.CheckName(ask.Ladder.Name); err != nil {
		return job, &FieldError{Field: "ladder", Err: err}
	}
	names := ask.Names
	if len(names) == 0 {
		names = []string{ask.Ladder.Name}
	}
	snap, err := ReadLadder(ctx, r, ask.Vhost, names...)
	if err != nil {
		return job, fmt.Errorf("scheduled needs the management API to find the ladder's rungs: %w", err)
	}
	found := topology.Discover(snap)
	fl, err := FindLadder(found, ask.Ladder)
	if errors.Is(err, ErrNoLadder) {
		return job, fmt.Errorf("no ladder %q in vhost %s; nothing was read or changed: %w", ask.Ladder.Name, ask.Vhost, ErrNoScheduledLadder)
	} else if err != nil {
		return job, err
	}
	job.Scan, err = PlanScan(ctx, r, ScanRequest{
		Ladder: fl.Ladder, Snap: snap, Ladders: Ladders(found), Filter: f, Keep: ask.Keep,
		Force: ask.Force, ReadOnly: ask.ReadOnly,
	})
	if err != nil || ask.Action == "" {
		return job, err
	}
	act.Scan = job.Scan
	job.Action, err = PlanAction(act, ask.Now)
	job.DryRun = ask.DryRun
	return job, err
}

// ActionTerms are a scheduled action's options as a front end takes
// them: cancel with Discard discards, reschedule takes one of Delay (a
// span from when each message is moved) and At (a time: RFC 3339, a clock
// time, or a span from now).
type ActionTerms struct {
	All       bool
	Park      string
	Discard   bool
	Delay, At string
	Window    int
}

// Request reads the terms of action a at now. A bad term is a
// *FieldError naming it ("park", "delay", "at", "window").
func (t ActionTerms) Request(a Action, now time.Time) (ActionRequest, error) {
	if a == ActCancel && t.Discard {
		a = ActDiscard
		if t.Park != "" {
			return ActionRequest{}, fieldErr("park", "a discarded message is not parked")
		}
	}
	req := ActionRequest{Action: a, All: t.All, Park: t.Park, Window: t.Window}
	if a == ActReschedule {
		var err error
		switch {
		case t.Delay != "" && t.At != "", t.Delay == "" && t.At == "":
			return ActionRequest{}, fieldErr("delay", "reschedule needs one of a delay or a time")
		case t.Delay != "":
			if req.Delay, err = topology.ParseDelay(t.Delay); err == nil {
				err = CheckRescheduleDelay(req.Delay, t.Delay)
			}
			if err != nil {
				return ActionRequest{}, &FieldError{Field: "delay", Err: err}
			}
		default:
			if req.At, err = ParseAt(t.At, now); err != nil {
				return ActionRequest{}, &FieldError{Field: "at", Err: err}
			}
		}
	}
	if t.Window < 1 {
		return ActionRequest{}, fieldErr("window", "must be at least 1")
	}
	return req, nil
}
