package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// MigrateRequest is a migration as an operator asks for it: the two
// ladders by name (and layout, where a name is several ladders'), where
// messages without a destination go, where those the target cannot take
// are parked, and how to move them.
type MigrateRequest struct {
	From, FromLayout string
	To, ToLayout     string
	Dest, Park       string
	Margin           time.Duration
	Rate             float64 // messages a second; 0 unlimited
	Window           int
}

// MigratePlan is a migration worked out: the two ladders, the rungs to
// drain (longest first) with what each holds, and how each Move runs.
type MigratePlan struct {
	Migration topology.Migration
	Park      string
	Opts      broker.MoveOptions // shared by every rung's Move (see broker.MigrateRung)
	Rungs     []MigrateRung
	Ready     int64
	// Ladders are the vhost's ladders, which a peek of a rung weighs.
	Ladders []topology.Ladder
}

// MigrateRung is one rung of the source and what it holds.
type MigrateRung struct {
	Rung    topology.Rung
	Queue   topology.Queue // as read; zero when Missing
	Ready   int64
	Missing bool // the queue does not exist on the broker
}

// PlanMigrate finds both ladders in snap and checks, before anything
// moves, that they differ, that the park queue is neither's, that the
// target routes what its plan says and that the source's rungs hold
// messages for the TTLs its plan says (the estimate of a message's
// remaining delay assumes them).
func PlanMigrate(snap topology.Snapshot, req MigrateRequest) (MigratePlan, error) {
	var mp MigratePlan
	found := topology.Discover(snap)
	from, err := findMigrateLadder(found, snap.Vhost, "--from", req.From, req.FromLayout)
	if err != nil {
		return mp, err
	}
	to, err := findMigrateLadder(found, snap.Vhost, "--to", req.To, req.ToLayout)
	if err != nil {
		return mp, err
	}
	if SameLadder(from, to) {
		return mp, badInput("--from and --to are the same ladder (%s)", from)
	}
	mp.Ladders = Ladders(found)
	mp.Migration = topology.Migration{From: from, To: to, Dest: req.Dest, Margin: req.Margin}
	mp.Park = req.Park
	if mp.Park == "" {
		mp.Park = from.Name + ".migrate.parked"
	}
	for _, l := range []topology.Ladder{from, to} {
		if role, _, ok := l.QueueRole(mp.Park); ok {
			return mp, badInput("--park %s is the %s queue of ladder %s", mp.Park, role, l.Name)
		}
	}
	// Where messages without a destination go must exist in the target.
	if _, err := to.Place(to.Unit, req.Dest); err != nil {
		if req.Dest != "" {
			return mp, badInput("--dest: %v", err)
		}
		// nsb and celery have no default; such messages are parked.
		if !errors.Is(err, topology.ErrBadDest) {
			return mp, badInput("%v", err)
		}
	}
	g := topology.NewGraph(snap)
	for _, dest := range append([]string{req.Dest}, to.Targets...) {
		tr, err := to.Place(to.MaxDelay(), dest)
		if err != nil {
			continue
		}
		if err := RouteErr(tr, g); err != nil {
			return mp, fmt.Errorf("nothing migrated: ladder %s does not route as its plan says (%s to %s: %v); see rungs plan --ladder %s", to.Name, topology.FormatDelay(tr.Delay), tr.Target, errors.Unwrap(err), to.Name)
		}
	}
	for _, r := range from.Rungs() {
		mr := MigrateRung{Rung: r}
		q, ok := snap.Queue(r.Queue)
		if !ok {
			mr.Missing = true
			mp.Rungs = append(mp.Rungs, mr)
			continue
		}
		// The estimate assumes the plan's TTL: a rung that holds messages
		// longer would make them early.
		if ttl, ok := q.TTL(); !ok || ttl != r.TTL {
			return mp, fmt.Errorf("nothing migrated: rung %s of %s has a TTL of %s on the broker, its plan %s (see rungs plan --ladder %s)", r.Queue, from.Name, ttlText(ttl, ok), topology.FormatDelay(r.TTL), from.Name)
		}
		mr.Queue, mr.Ready = q, q.Stats.Ready
		mp.Ready += mr.Ready
		mp.Rungs = append(mp.Rungs, mr)
	}
	mp.Opts = broker.MoveOptions{Park: mp.Park, ParkType: from.QueueType, Window: req.Window, Rate: req.Rate}
	return mp, nil
}

// findMigrateLadder picks the ladder a --from or --to names.
func findMigrateLadder(found []topology.Found, vhost, flag, name, layout string) (topology.Ladder, error) {
	f, err := FindLadder(found, LadderQuery{Name: name, Layout: layout})
	if errors.Is(err, ErrNoLadder) {
		in := ""
		if layout != "" {
			in = " " + layout
		}
		return topology.Ladder{}, fmt.Errorf("no%s ladder %q in vhost %s (rungs discover lists them); nothing was migrated", in, name, vhost)
	}
	if err != nil {
		return topology.Ladder{}, badInput("%v: add %s-layout", err, flag)
	}
	return f.Ladder, nil
}

func ttlText(ttl time.Duration, ok bool) string {
	if !ok {
		return "none"
	}
	return topology.FormatDelay(ttl)
}

// GatePreview weighs a dry run's peek at one rung with GatePeek, the
// peek gate of rungs peek and the console; facts are the rung's peek facts
// as read (broker.Management.PeekFacts). It returns why the rung is not
// previewed, or "" and a note of what previewing it changes.
func (mp MigratePlan) GatePreview(mr MigrateRung, facts broker.PeekFacts, force, readOnly bool) (skipped, note string) {
	if mr.Missing {
		return "the queue does not exist", ""
	}
	g := GatePeek(PeekRequest{
		Queue: mr.Queue, Ladders: mp.Ladders, Version: facts.Version,
		Limit: facts.Limit, LimitKnown: facts.LimitKnown, DelayedRetries: facts.DelayedRetries,
		Force: force, ReadOnly: readOnly,
	})
	switch g.Verdict {
	case PeekReadOnly:
		return g.Why + ", which --read-only refuses", ""
	case PeekNeedsForce:
		return g.Why + " (add --force to preview it)", ""
	}
	return "", g.Note
}

// Mover moves messages from one queue on (broker.Conn).
type Mover interface {
	Move(ctx context.Context, o broker.MoveOptions) (broker.MoveProgress, error)
}

// MigrateResult is what a migration did, per rung and in all.
type MigrateResult struct {
	Rungs                          []RungResult
	Moved, Parked, Stayed, Unknown int
	Reconnects                     int
	Reasons                        map[string]int
	Elapsed                        time.Duration
	Stopped                        string
}

// RungResult is what a migration did to one rung.
type RungResult struct {
	Queue                          string
	Moved, Parked, Stayed, Unknown int
	Left                           int // ready when its Move ended; -1 unknown
	Stopped                        string
	// OthersHolding counts other consumers the queue had when it read
	// empty (broker.MoveProgress.OthersHolding).
	OthersHolding int
}

// HeldElsewhere says which queues read empty while other consumers held
// messages of theirs, which a run after those consumers close will take;
// nil when none did.
func (r MigrateResult) HeldElsewhere() []string {
	var out []string
	for _, rr := range r.Rungs {
		if rr.OthersHolding > 0 {
			out = append(out, fmt.Sprintf("%s read empty with %s attached: what they hold unacknowledged returns to it when they close (a killed run's connection, once the broker notices); run again then", rr.Queue, topology.Counted(rr.OthersHolding, "other consumer", "other consumers")))
		}
	}
	return out
}

// Run drains the source's rungs, longest first, one Move each, until
// limit messages (0: every one) have moved or been parked, or a Move
// stops before its rung is empty. progress, when set, hears each Move's
// progress with the rung's index and what the earlier rungs did.
func (mp MigratePlan) Run(ctx context.Context, m Mover, limit int, progress func(i int, queue string, done MigrateResult, p broker.MoveProgress)) (MigrateResult, error) {
	steps := make([]DrainStep, len(mp.Rungs))
	for i, mr := range mp.Rungs {
		steps[i] = DrainStep{Queue: mr.Rung.Queue, Missing: mr.Missing}
		if !mr.Missing {
			steps[i].Options = broker.MigrateRung(mp.Opts, mp.Migration, mr.Rung.Queue)
		}
	}
	return Drain(ctx, m, steps, limit, progress)
}

// DrainStep is one queue a migration empties with one Move.
type DrainStep struct {
	Queue   string
	Options broker.MoveOptions
	// Missing: the queue does not exist, nothing to move. MayBeGone: a
	// queue that deletes itself once unused (x-expires) may be gone by
	// the time it is drained, its messages with it or moved before.
	Missing, MayBeGone bool
}

// Drain runs the steps in order, one Move each, until limit messages (0:
// every one) have moved or been parked, or a Move stops before its queue
// is empty: the one loop of a ladder's migration and of a migration of
// other libraries' delay queues. progress, when set, hears each Move's
// progress with the step's index and what the earlier steps did.
func Drain(ctx context.Context, m Mover, steps []DrainStep, limit int, progress func(i int, queue string, done MigrateResult, p broker.MoveProgress)) (MigrateResult, error) {
	res := MigrateResult{Reasons: map[string]int{}, Stopped: broker.StopEmpty}
	start := time.Now()
	for i, st := range steps {
		if st.Missing {
			res.Rungs = append(res.Rungs, RungResult{Queue: st.Queue, Left: -1, Stopped: "the queue does not exist"})
			continue
		}
		o := st.Options
		if limit > 0 {
			o.Limit = limit - res.Moved - res.Parked - res.Unknown
			if o.Limit <= 0 {
				res.Stopped = broker.StopLimit
				break
			}
		}
		if progress != nil {
			o.Progress = func(p broker.MoveProgress) { progress(i, st.Queue, res, p) }
		}
		p, err := m.Move(ctx, o)
		if err != nil && st.MayBeGone && p.Moved+p.Parked+p.Unknown == 0 && strings.Contains(err.Error(), "no such queue") {
			res.Rungs = append(res.Rungs, RungResult{Queue: st.Queue, Left: -1, Stopped: "the queue is gone"})
			continue
		}
		rr := RungResult{Queue: st.Queue, Moved: p.Moved, Parked: p.Parked, Stayed: p.Kept + p.Skipped,
			Unknown: p.Unknown, Left: p.SourceReady, Stopped: p.Stopped, OthersHolding: p.OthersHolding}
		res.Rungs = append(res.Rungs, rr)
		res.Moved += rr.Moved
		res.Parked += rr.Parked
		res.Stayed += rr.Stayed
		res.Unknown += rr.Unknown
		res.Reconnects += p.Reconnects
		for k, v := range p.Reasons {
			res.Reasons[k] += v
		}
		if err != nil || p.Stopped != broker.StopEmpty {
			res.Stopped = p.Stopped
			res.Elapsed = time.Since(start)
			return res, err
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}
