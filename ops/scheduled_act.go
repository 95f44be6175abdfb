package ops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// Action is what to do with the scheduled messages a filter selects.
type Action string

// Actions on scheduled messages.
const (
	// ActCancel parks them in a parking queue (x-rungs-reason,
	// x-rungs-queue naming the rung): replay can undo it.
	ActCancel Action = "cancel"
	// ActDiscard acknowledges them without a copy: gone for good.
	ActDiscard Action = "discard"
	// ActReschedule puts them back into the ladder with a new delay, or
	// for a new due time, keeping properties, headers and body.
	ActReschedule Action = "reschedule"
	// ActFire sends them to their destination now.
	ActFire Action = "fire"
)

// CancelReason is the x-rungs-reason of a cancelled message.
const CancelReason = "cancelled by rungs scheduled"

// DefaultPark is the parking queue cancelled messages of ladder l go to.
func DefaultPark(l topology.Ladder) string { return l.Name + ".scheduled.cancelled" }

// ActionRequest asks for an action on what a scan plan's filter selects.
type ActionRequest struct {
	// Scan is the checked scan whose ladder, rungs (gated as for reading:
	// an action reads every message it passes over) and filter the action
	// uses.
	Scan   ScanPlan
	Action Action
	// All must be set to act with an empty filter: on every message of
	// the ladder.
	All bool
	// Park is the parking queue for ActCancel ("" DefaultPark).
	Park string
	// Delay (from when each message is moved) or At (a due time) for
	// ActReschedule; exactly one.
	Delay time.Duration
	At    time.Time
	// Window is how many copies may await their confirm at once.
	Window int
}

// ActionPlan is a checked action.
type ActionPlan struct {
	ActionRequest
	// Describe is the action in words, for the confirmation.
	Describe string
}

// PlanAction checks an action at now. Refusals are FieldErrors: "action"
// (unknown, or an empty filter without All), "delay" (not positive, or past
// the ladder's maximum), "at" (in the past, or past the maximum), "park"
// (a queue of the ladder).
func PlanAction(req ActionRequest, now time.Time) (ActionPlan, error) {
	p := ActionPlan{ActionRequest: req}
	l := req.Scan.Ladder
	if req.Scan.Filter.Empty() && !req.All {
		return p, fieldErr("action", "no filter: say which messages (or --all for every message of %s)", l.Name)
	}
	what := req.Scan.Filter.String()
	switch req.Action {
	case ActCancel:
		if p.Park == "" {
			p.Park = DefaultPark(l)
		}
		if role, _, ok := l.QueueRole(p.Park); ok {
			return p, fieldErr("park", "%s is the %s queue of ladder %s", p.Park, role, l.Name)
		}
		p.Describe = fmt.Sprintf("cancel the scheduled messages of %s with %s: park them in %s", l.Name, what, p.Park)
	case ActDiscard:
		p.Describe = fmt.Sprintf("DISCARD the scheduled messages of %s with %s: they are deleted, not parked", l.Name, what)
	case ActFire:
		p.Describe = fmt.Sprintf("fire the scheduled messages of %s with %s now: send each to its destination", l.Name, what)
	case ActReschedule:
		var delayErr error
		if req.At.IsZero() {
			delayErr = CheckRescheduleDelay(req.Delay, "")
		}
		switch {
		case req.Delay != 0 && !req.At.IsZero(), req.Delay == 0 && req.At.IsZero():
			return p, fieldErr("delay", "give a new delay or a new time, one of them")
		case !req.At.IsZero() && !req.At.After(now):
			return p, fieldErr("at", "%s is in the past", req.At.UTC().Format(time.RFC3339))
		case !req.At.IsZero() && req.At.Sub(now) > l.MaxDelay():
			return p, fieldErr("at", "%s is %s away, past ladder %s's maximum delay of %s", req.At.UTC().Format(time.RFC3339), topology.FormatDelay(req.At.Sub(now)), l.Name, topology.FormatDelay(l.MaxDelay()))
		case delayErr != nil:
			return p, fieldErr("delay", "%v", delayErr)
		case req.Delay > l.MaxDelay():
			return p, fieldErr("delay", "%s is past ladder %s's maximum delay of %s", topology.FormatDelay(req.Delay), l.Name, topology.FormatDelay(l.MaxDelay()))
		}
		to := "with a delay of " + topology.FormatDelay(req.Delay)
		if !req.At.IsZero() {
			to = "to be due at " + req.At.UTC().Format(time.RFC3339)
		}
		p.Describe = fmt.Sprintf("reschedule the scheduled messages of %s with %s %s", l.Name, what, to)
	default:
		return p, fieldErr("action", "%q is not cancel, discard, reschedule or fire", req.Action)
	}
	return p, nil
}

// DepthMover moves messages with confirms and reads a queue's depth
// (*broker.Conn): an action passes each rung the depth it read.
type DepthMover interface {
	Mover
	Depth(ctx context.Context, queue string) (int, error)
}

// ActionProgress is how far an action is.
type ActionProgress struct {
	Rung         string
	Index, Rungs int
	// Move is the current rung's Move; Result the rungs before it.
	Move   broker.MoveProgress
	Result ActionResult
}

// ActionResult counts what an action did, over every rung.
type ActionResult struct {
	// Acted were moved (rescheduled, fired), parked (cancelled) or dropped
	// (discarded), each after its copy was confirmed (dropped: at once).
	Acted int
	// Left were read and not selected: they stayed, held until their
	// rung's pass ended.
	Left int
	// Kept were selected but stayed (no route, refused: see Reasons).
	Kept int
	// Unknown were republished, but rungs could not tell whether the
	// source copy was removed: possible duplicates, never lost ones.
	Unknown    int
	Reconnects int
	Reasons    map[string]int
	// Held is the longest any rung's pass took: the most it delayed a
	// message it did not select.
	Held    time.Duration
	Elapsed time.Duration
	Stopped string
}

func (r *ActionResult) add(p broker.MoveProgress) {
	r.Acted += p.Moved + p.Parked + p.Dropped
	r.Left += p.Skipped
	r.Kept += p.Kept
	r.Unknown += p.Unknown
	r.Reconnects += p.Reconnects
	for k, v := range p.Reasons {
		r.Reasons[k] += v
	}
	r.Held = max(r.Held, p.Elapsed)
}

// Run carries the action out, one rung at a time, highest level first
// (messages only move down, so one leaving a rung already passed is met
// again below): one Move per rung that takes every message the rung holds
// until none is ready, republishes
// those the filter selects (at the moment each is read) with confirms,
// acknowledging each only after its confirm, and holds the others until
// the pass ends. A kill at any point loses nothing: unacknowledged
// messages go back to their rung, and a copy confirmed whose source ack
// was lost is a duplicate, counted in Unknown when rungs survives to see
// it (each copy carries x-rungs-replay-id).
func (p ActionPlan) Run(ctx context.Context, mv DepthMover, progress func(ActionProgress)) (ActionResult, error) {
	res := ActionResult{Reasons: map[string]int{}}
	start := time.Now()
	l := p.Scan.Ladder
	run := newRunID()
	for i, r := range p.Scan.ordered() {
		depth, err := mv.Depth(ctx, r.Queue.Name)
		if err != nil {
			return res, err
		}
		if listed := int(r.Queue.Stats.Messages()); depth == 0 && listed == 0 {
			// Empty twice over: a rung listed with messages is passed even
			// when it reads empty, as messages handed back a moment ago
			// by another channel may not be ready again yet.
			continue
		} else {
			depth = max(depth, listed)
		}
		o := p.moveOptions(r.Queue.Name, depth, run)
		if progress != nil {
			before := res
			o.Progress = func(mp broker.MoveProgress) {
				progress(ActionProgress{Rung: r.Queue.Name, Index: i, Rungs: len(p.Scan.Rungs), Move: mp, Result: before})
			}
		}
		mp, err := mv.Move(ctx, o)
		res.add(mp)
		if err != nil {
			res.Stopped, res.Elapsed = mp.Stopped, time.Since(start)
			return res, fmt.Errorf("%s on ladder %s, rung %s: %w", p.Action, l.Name, r.Queue.Name, err)
		}
	}
	res.Elapsed = time.Since(start)
	res.Stopped = broker.StopTaken
	return res, nil
}

// moveOptions is one rung's Move: the filter selects, the route acts.
func (p ActionPlan) moveOptions(rung string, depth int, run string) broker.MoveOptions {
	l := p.Scan.Ladder
	o := broker.MoveOptions{Source: rung, HoldAll: true, Depth: depth, Window: p.Window, ParkType: l.QueueType}
	// Route and Stamp are called one after the other for each message on
	// Move's goroutine, so the message Filter described and the trace
	// Route chose carry over to Stamp.
	var cur ScheduledMessage
	var tr topology.Trace
	o.Filter = func(d broker.Delivery) bool {
		if id, _ := d.Headers[topology.HeaderScheduledRun].(string); id == run {
			return false // this action's own copy, in a rung it passes later
		}
		m, err := Schedule(l, rung, d, 0, time.Now())
		if err != nil || !p.Scan.matcher.Match(m, d.Body) {
			return false
		}
		cur = m
		return true
	}
	switch p.Action {
	case ActCancel:
		o.Park = p.Park
		o.Route = func(broker.Delivery) (broker.Route, error) { return broker.Route{Park: CancelReason}, nil }
	case ActDiscard:
		o.Route = func(broker.Delivery) (broker.Route, error) { return broker.Route{Drop: true}, nil }
	case ActFire, ActReschedule:
		o.Route = func(broker.Delivery) (broker.Route, error) {
			var delay time.Duration
			switch {
			case p.Action == ActFire:
			case p.At.IsZero():
				delay = p.Delay
			default:
				delay = max(time.Until(p.At), 0)
			}
			var err error
			if tr, err = l.Place(delay, cur.destKey); err != nil {
				return broker.Route{}, err
			}
			return broker.Route{Exchange: tr.Exchange, RoutingKey: tr.Key, SaveDeath: true, BCC: tr.BCC}, nil
		}
	}
	o.Stamp = func(d broker.Delivery, _ broker.Route) map[string]any {
		now := time.Now().UTC()
		h := map[string]any{
			topology.HeaderRescheduledFrom: rung,
			topology.HeaderRescheduledDue:  cur.Earliest.UTC().Format(time.RFC3339),
			topology.HeaderScheduledRun:    run,
		}
		if p.Action == ActFire || p.Action == ActReschedule {
			h[topology.HeaderRescheduledAt] = now.Truncate(time.Second)
			h[topology.HeaderDelayMS] = tr.Delay.Milliseconds()
			if _, ok := d.Headers[topology.HeaderCeleryETA]; ok && l.Layout == "celery" {
				// A Celery worker holds a task until its eta: move the eta
				// with the message, or firing it would not run it.
				h[topology.HeaderCeleryETA] = topology.CeleryETA(now.Add(tr.Delay))
			}
		}
		return h
	}
	return o
}

func newRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
