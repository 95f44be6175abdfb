package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
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
	// FromDelays, in From's place, is a delay group of other libraries'
	// delay queues (APP/NAME, as discover --delays lists them) found in
	// Delays, the vhost's inventory; Found are the vhost's ladders as
	// already discovered (nil: discovered in the snapshot).
	FromDelays   string
	Delays       topology.Inventory
	Found        []topology.Found
	To, ToLayout string
	Dest, Park   string
	Margin       time.Duration
	Rate         float64 // messages a second; 0 unlimited
	Window       int
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
	// Group is the delay group a migration of delays drains (its queues
	// are the Rungs, longest delay first); nil for a ladder's migration.
	Group *topology.DelayGroup
	// delays places a delay queue's messages; route is the vhost's
	// dead-lettering, where a delay queue's messages would have gone.
	delays topology.DelayMove
	route  func(exchange, key string) []string
}

// MigrateRung is one rung of the source and what it holds.
type MigrateRung struct {
	Rung    topology.Rung
	Queue   topology.Queue // as read; zero when Missing
	Ready   int64
	Missing bool // the queue does not exist on the broker
	// delay is the delay queue, in a migration of delays.
	delay topology.DelayQueue
}

// PlanMigrate finds both ladders in snap and checks, before anything
// moves, that they differ, that the park queue is neither's, that the
// target routes what its plan says and that the source's rungs hold
// messages for the TTLs its plan says (the estimate of a message's
// remaining delay assumes them).
//
// A migration of delays (FromDelays) is checked the same way where it
// can be: the park queue is neither the target's nor one of the group's
// queues, and the target routes as its plan says.
func PlanMigrate(snap topology.Snapshot, req MigrateRequest) (MigratePlan, error) {
	var mp MigratePlan
	found := req.Found
	if found == nil {
		found = topology.Discover(snap)
	}
	if req.FromDelays != "" {
		return planMigrateDelays(snap, found, req)
	}
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
	if err := checkTargetRoutes(snap, to, append([]string{req.Dest}, to.Targets...)); err != nil {
		return mp, err
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

// planMigrateDelays is PlanMigrate of a delay group into the --to ladder.
func planMigrateDelays(snap topology.Snapshot, found []topology.Found, req MigrateRequest) (MigratePlan, error) {
	var mp MigratePlan
	grp, ok := req.Delays.Group(req.FromDelays)
	if !ok {
		return mp, fmt.Errorf("no delay group %q in vhost %s (rungs discover --delays lists them as APP/NAME); nothing was migrated", req.FromDelays, snap.Vhost)
	}
	to, err := findMigrateLadder(found, snap.Vhost, "--to", req.To, req.ToLayout)
	if err != nil {
		return mp, err
	}
	mp.Ladders = Ladders(found)
	mp.Migration = topology.Migration{To: to, Margin: req.Margin}
	mp.delays, mp.route = topology.DelayMove{To: to, Margin: req.Margin}, topology.DeadLetterRoute(snap)
	mp.Park = req.Park
	if mp.Park == "" {
		mp.Park = to.Name + ".migrate.parked"
	}
	if role, _, ok := to.QueueRole(mp.Park); ok {
		return mp, badInput("--park %s is the %s queue of ladder %s", mp.Park, role, to.Name)
	}
	for _, q := range grp.Queues {
		if q.Name == mp.Park {
			return mp, badInput("--park %s is a delay queue of %s", mp.Park, grp.ID())
		}
	}
	if err := checkTargetRoutes(snap, to, to.Targets); err != nil {
		return mp, err
	}
	// Longest delays first, as a ladder's rungs are drained.
	grp.Queues = slices.Clone(grp.Queues)
	sort.SliceStable(grp.Queues, func(i, j int) bool { return grp.Queues[i].TTL > grp.Queues[j].TTL })
	mp.Group = &grp
	for _, q := range grp.Queues {
		mr := MigrateRung{Rung: topology.Rung{Queue: q.Name, TTL: q.TTL}, delay: q}
		if sq, ok := snap.Queue(q.Name); ok {
			mr.Queue, mr.Ready = sq, sq.Stats.Ready
			mp.Ready += mr.Ready
		} else {
			// Not listed: the peek gate weighs it as the queue it is named.
			mr.Queue = topology.Queue{Name: q.Name}
		}
		mp.Rungs = append(mp.Rungs, mr)
	}
	mp.Opts = broker.MoveOptions{Park: mp.Park, ParkType: to.QueueType, Window: req.Window, Rate: req.Rate}
	return mp, nil
}

// checkTargetRoutes refuses a target ladder that does not route its
// longest delay to dests as its plan says: the one route check of both
// kinds of migration, before anything moves.
func checkTargetRoutes(snap topology.Snapshot, to topology.Ladder, dests []string) error {
	g := topology.NewGraph(snap)
	for _, dest := range dests {
		tr, err := to.Place(to.MaxDelay(), dest)
		if err != nil {
			continue
		}
		if err := RouteErr(tr, g); err != nil {
			return fmt.Errorf("nothing migrated: ladder %s does not route as its plan says (%s to %s: %v); see rungs plan --ladder %s", to.Name, topology.FormatDelay(tr.Delay), tr.Target, errors.Unwrap(err), to.Name)
		}
	}
	return nil
}

// Source names what a migration drains: the delay group's APP/NAME, or
// the source ladder.
func (mp MigratePlan) Source() string {
	if mp.Group != nil {
		return mp.Group.ID()
	}
	return mp.Migration.From.String()
}

// MoveOptions is the Move that drains one rung (or delay queue) of the
// plan.
func (mp MigratePlan) MoveOptions(mr MigrateRung) broker.MoveOptions {
	if mp.Group != nil {
		return broker.MigrateDelayQueue(mp.Opts, mp.delays, mr.delay, mp.route)
	}
	return broker.MigrateRung(mp.Opts, mp.Migration, mr.Rung.Queue)
}

// Place is where a message read from a rung of the plan goes: the one
// placement a dry run shows and the Move uses.
func (mp MigratePlan) Place(mr MigrateRung, d broker.Delivery) topology.Placement {
	if mp.Group != nil {
		return mp.delays.PlaceDelay(topology.DelayMessage{Queue: mr.delay, Key: d.RoutingKey, Headers: d.Headers, Timestamp: d.Timestamp, Expiration: d.Expiration}, d.Received, mp.route)
	}
	p, _ := broker.MigrateRoute(mp.Migration, mr.Rung.Queue, d)
	return p
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
		// A delay queue with x-expires goes once unused: its messages
		// went with it or before, nothing to move.
		steps[i] = DrainStep{Queue: mr.Rung.Queue, Missing: mr.Missing, MayBeGone: mp.Group != nil}
		if !mr.Missing {
			steps[i].Options = mp.MoveOptions(mr)
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

// MigrateReader is what a migration reads: the ladders by name or, for a
// migration of delays, every ladder of the vhost and the delay inventory
// (*broker.Management).
type MigrateReader interface {
	ScopedInspector
	DelayReader
}

// Migrate is a migration's one entry point: it reads what req names and
// plans it (PlanMigrate). A migration between ladders lists both names
// with every binding into their queues (a ladder of another layout under
// one of the names, damaged or not, must be seen, to ask for a layout); a
// migration of delays reads every ladder of the vhost, so that their
// rungs are not taken for delay queues, then the inventory's paged
// listing. The front end previews or confirms the plan, then runs it
// (MigratePlan.Run).
func Migrate(ctx context.Context, r MigrateReader, vhost string, req MigrateRequest) (MigratePlan, error) {
	if req.FromDelays == "" {
		o, err := ReadLadders(ctx, r, Scope{Vhost: vhost, Ladders: []string{req.From, req.To}, Inbound: true})
		if err != nil {
			return MigratePlan{}, req.NeedsManagement(err)
		}
		return PlanMigrate(o.Snapshot(), req)
	}
	o, err := ReadLadders(ctx, r, Scope{Vhost: vhost})
	var (
		inv  topology.Inventory
		snap topology.Snapshot
	)
	if err == nil {
		inv, snap, err = Delays(ctx, r, vhost, o.Found())
	}
	if err != nil {
		return MigratePlan{}, req.NeedsManagement(err)
	}
	req.Delays, req.Found = inv, o.Found()
	return PlanMigrate(snap.Merge(o.Snapshot()), req)
}
