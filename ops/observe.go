package ops

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// The observer is rungs' one way of watching ladders: the console's
// refresh loop, the exporter's scrapes and the one-shot commands (status,
// discover, doctor, unstall) all read the broker through it and draw the
// health.Report it hands out. It owns the snapshot-or-stats strategy, the
// movement history the stuck rule needs and the waiting history of the
// stall rule, so that none of them is kept twice.

// Inspector is all the observer reads from the management API. Every
// read names the observer's Scope through Read.Do, so that a broker
// client able to read only the ladders in scope plugs in there and
// nowhere else.
type Inspector interface {
	Snapshot(ctx context.Context, vhost string) (topology.Snapshot, error)
	Stats(ctx context.Context, vhost string) ([]topology.Queue, error)
}

// ScopedInspector reads whole vhosts and, by name, ladders and queues
// (*broker.Management): what a front end that wraps the management API
// (the CLI bounds each request by --timeout) hands ops, so that a
// wrapper that forgets to pass a read by name on fails to compile rather
// than reading the whole vhost.
type ScopedInspector interface {
	Inspector
	broker.LadderInspector
}

// Reach is how far a read goes, said by the request rather than guessed
// from the inspector it is handed. ReachScoped, the zero value, reads the
// named objects alone (by name, or listings the broker filters), which
// costs the same beside 10,000 other queues; it needs a ScopedInspector,
// and fails with one that lacks a read by name (a wrapper that forgot to
// pass one on) instead of reading the vhost. ReachVhost reads the whole
// vhost: what an inspector without reads by name (a test's fake) is asked
// for.
type Reach int

const (
	ReachScoped Reach = iota
	ReachVhost
)

// String names the reach in errors.
func (r Reach) String() string {
	if r == ReachVhost {
		return "whole vhost"
	}
	return "scoped"
}

// ScopedReads is insp as a ScopedInspector, for a ReachScoped read; an
// inspector with some of broker.LadderInspector's reads or none is an
// error naming what it lacks, never a silent read of the whole vhost.
func ScopedReads(insp Inspector) (ScopedInspector, error) {
	if si, ok := insp.(ScopedInspector); ok {
		return si, nil
	}
	_, snap := insp.(interface {
		LadderSnapshot(context.Context, topology.Scope) (topology.Snapshot, error)
	})
	_, stats := insp.(interface {
		LadderStats(context.Context, topology.Scope) ([]topology.Queue, error)
	})
	_, qs := insp.(QueueReader)
	if snap || stats || qs {
		return nil, fmt.Errorf("%T reads some ladders by name but not all (LadderSnapshot %v, LadderStats %v, QueueStats %v): it would read the whole vhost", insp, snap, stats, qs)
	}
	return nil, fmt.Errorf("%T reads no ladder by name: a scoped read needs them (ask for ReachVhost to read the whole vhost)", insp)
}

// SnapshotEvery is how many reads make one full snapshot; the others read
// only the statistics (one request). Bindings change rarely, and a change
// of the queue set calls for a snapshot at once anyway.
const SnapshotEvery = 6

// Scope is what an observer watches: one vhost and, when Ladders is not
// empty, only the ladders of those names in it.
type Scope struct {
	Vhost   string
	Ladders []string
	// Layouts, when set, pins a named ladder to its layouts: ladders of
	// other layouts may share a name in one vhost (a suffix ladder and a
	// prefix one, say), and an operation on one must not watch the other.
	// A ladder is its vhost, name and layout (SameLadder), so two ladders
	// of one name both pinned are both watched.
	Layouts map[string][]string
	// Inbound makes each snapshot also read every binding into the
	// ladders' queues, from whatever exchange (topology.Scope.Inbound): a
	// check such as doctor wants a stray binding into a rung, which the
	// ladders' own exchanges do not show. A request per queue, so the
	// console's refreshes go without.
	Inbound bool
	// Reach is how far the observer's reads go (see Reach): its objects
	// alone, the default, or the whole vhost.
	Reach Reach
}

// perQueueStats bounds the queues whose statistics a refresh reads one
// request each (broker.LadderInspector.QueueStats): beyond it, one
// filtered listing per 500 queues costs fewer requests. It covers the
// default ladder (105 rungs and its target's queues, 107): at 100 that
// ladder's refresh was a listing the broker evaluates over every queue of
// the vhost, 12 ms alone and 235 ms beside 10,000 queues on 4.3.6.
const perQueueStats = 128

// Same reports whether two scopes watch the same objects.
func (s Scope) Same(t Scope) bool {
	return s.Vhost == t.Vhost && s.Inbound == t.Inbound && s.Reach == t.Reach && slices.Equal(s.Ladders, t.Ladders) && maps.EqualFunc(s.Layouts, t.Layouts, slices.Equal)
}

// ScopeOf is the scope of exactly these ladders of one vhost, each by name
// and layout.
func ScopeOf(vhost string, ls ...topology.Ladder) Scope {
	s := Scope{Vhost: vhost, Layouts: map[string][]string{}}
	for _, l := range ls {
		if !slices.Contains(s.Ladders, l.Name) {
			s.Ladders = append(s.Ladders, l.Name)
		}
		if !slices.Contains(s.Layouts[l.Name], l.Layout) {
			s.Layouts[l.Name] = append(s.Layouts[l.Name], l.Layout)
			slices.Sort(s.Layouts[l.Name])
		}
	}
	return s
}

// Watches reports whether the ladder is in scope: by name, and by layout
// where the scope pins its name (SameLadder's identity, in the scope's
// vhost).
func (s Scope) Watches(l topology.Ladder) bool {
	if len(s.Ladders) == 0 {
		return true
	}
	if !slices.Contains(s.Ladders, l.Name) {
		return false
	}
	layouts, pinned := s.Layouts[l.Name]
	return !pinned || slices.Contains(layouts, l.Layout)
}

// Read is one request the observer asks for: the full snapshot of its
// scope, or only the statistics of the scope's queues.
type Read struct {
	Scope    Scope
	Snapshot bool
	// Reach says whether the read asks for Objects alone (ReachScoped) or
	// for the whole vhost (ReachVhost, which ignores Objects and Queues).
	Reach Reach
	// Objects are the ladders' names as the broker can filter its
	// listings by, so that what a read costs follows the ladders and not
	// the vhost (broker.LadderInspector); Queues, when set, are the queues
	// whose statistics to read one by one.
	Objects topology.Scope
	Queues  []string
	// Narrow says Objects were the named ladders' own, not every name a
	// ladder may have (what a first snapshot reads to find them).
	Narrow bool
}

// Op names the read in error messages.
func (r Read) Op() string {
	if r.Snapshot {
		return "read vhost " + r.Scope.Vhost
	}
	return "read queue statistics"
}

// Do performs the read. It is the only place the observer calls the
// broker, and it may run off the caller's goroutine (the console runs it
// in a tea.Cmd): it touches nothing but its arguments.
func (r Read) Do(ctx context.Context, insp Inspector, now func() time.Time) Reading {
	if r.Reach == ReachVhost {
		return r.doVhost(ctx, insp, now)
	}
	li, err := ScopedReads(insp)
	if err != nil {
		return Reading{Read: r, At: now(), Err: err}
	}
	switch {
	case r.Objects.Empty():
		return Reading{Read: r, At: now(), Err: fmt.Errorf("%s: a scoped read names no objects", r.Op())}
	case r.Snapshot:
		snap, err := li.LadderSnapshot(ctx, r.Objects)
		return Reading{Read: r, Snap: snap, Queues: snap.Queues, At: now(), Err: err, Scoped: true}
	case len(r.Queues) > 0:
		qs, err := li.QueueStats(ctx, r.Scope.Vhost, r.Queues)
		return Reading{Read: r, Queues: qs, At: now(), Err: err}
	}
	qs, err := li.LadderStats(ctx, r.Objects)
	return Reading{Read: r, Queues: qs, At: now(), Err: err}
}

// doVhost reads the whole vhost: its snapshot, or every queue's statistics.
func (r Read) doVhost(ctx context.Context, insp Inspector, now func() time.Time) Reading {
	if r.Snapshot {
		snap, err := insp.Snapshot(ctx, r.Scope.Vhost)
		return Reading{Read: r, Snap: snap, Queues: snap.Queues, At: now(), Err: err}
	}
	qs, err := insp.Stats(ctx, r.Scope.Vhost)
	return Reading{Read: r, Queues: qs, At: now(), Err: err}
}

// Reading is what one Read returned: a snapshot (Snap, with its queues
// also in Queues) or the queues with their statistics, or an error.
type Reading struct {
	Read   Read
	Snap   topology.Snapshot
	Queues []topology.Queue
	At     time.Time
	Err    error
	// Scoped says the broker was asked for the Read's Objects only.
	Scoped bool
}

// Observer is what is known of a scope after the readings so far. It is a
// value: Observe returns a new one and never changes what an older value
// holds, so that a copy handed to Bubble Tea stays what it was.
type Observer struct {
	scope Scope
	// refresh is how often the caller reads, stats the broker's
	// statistics interval; the rules' slack is the slower of the two.
	refresh, stats time.Duration

	loaded bool
	snap   topology.Snapshot // the last snapshot, statistics merged in
	found  []topology.Found  // its ladders in scope
	moves  topology.Movements
	waits  health.Waits
	flows  health.Flows
	at     time.Time
	// since counts reads since the last snapshot; due asks for a
	// snapshot next, whatever the count.
	since int
	due   bool
	// listNamed makes the named ladders' next first read a listing: one
	// by name found none of them, or drift.
	listNamed bool
	// unrouted are the destinations read from unroutable queues
	// (ReadUnrouted), by queue; nil when none was read.
	unrouted map[string]map[string]int64
	// bound are, by ladder, the destinations the session's snapshots saw
	// bound to it (each ladder's Targets, since the first): what names a
	// route lost while the observer watched. Replaced, never changed in
	// place, as the observer is a value.
	bound map[string][]string
}

// WithUnrouted gives the report the destinations read from the ladders'
// unroutable queues (ReadUnrouted), so that it can name a lost route whose
// every binding is gone.
func (o Observer) WithUnrouted(read map[string]map[string]int64) Observer {
	o.unrouted = read
	return o
}

// Unrouted is what WithUnrouted gave the observer: a watcher that read
// off its own goroutine lays it over the observer it holds by then, which
// may have changed its intervals or asked for a snapshot meanwhile.
func (o Observer) Unrouted() map[string]map[string]int64 { return o.unrouted }

// NewObserver watches scope; it knows nothing until its first reading.
func NewObserver(scope Scope) Observer {
	return Observer{scope: scope, snap: topology.Snapshot{Vhost: scope.Vhost}, moves: topology.Movements{}}
}

// Scope is what the observer watches.
func (o Observer) Scope() Scope { return o.scope }

// WithScope watches another scope: the console narrows to the ladder it
// shows and widens back for its ladder list, so that a refresh reads what
// is on screen. Within the vhost, what is known carries over (the last
// snapshot, and the movement and waiting histories, which are the
// queues' whoever watches them); the ladders found are those the new
// scope watches, and the next read is its snapshot. Another vhost starts
// afresh.
func (o Observer) WithScope(s Scope) Observer {
	switch {
	case o.scope.Same(s):
		return o
	case o.scope.Vhost != s.Vhost:
		return NewObserver(s).WithIntervals(o.refresh, o.stats)
	}
	o.scope = s
	found := o.found[:0:0]
	for _, f := range o.found {
		if s.Watches(f.Ladder) {
			found = append(found, f)
		}
	}
	o.found, o.due = found, true
	return o
}

// WithIntervals sets how often the caller reads (0: unknown) and the
// broker's statistics interval (0: health.DefaultInterval).
func (o Observer) WithIntervals(refresh, stats time.Duration) Observer {
	o.refresh, o.stats = refresh, stats
	return o
}

// Interval is the slack the rules and the forecast allow for stale
// figures: the slower of the refresh and the broker's statistics
// interval, since no figure changes more often than that.
func (o Observer) Interval() time.Duration {
	every := o.stats
	if every <= 0 {
		every = health.DefaultInterval
	}
	return max(o.refresh, every)
}

// Loaded reports whether a snapshot has been read.
func (o Observer) Loaded() bool { return o.loaded }

// At is when the last successful reading was taken.
func (o Observer) At() time.Time { return o.at }

// Snapshot is the last snapshot with the freshest statistics laid over it.
func (o Observer) Snapshot() topology.Snapshot { return o.snap }

// Found lists the ladders in scope, as of the last snapshot.
func (o Observer) Found() []topology.Found { return o.found }

// Next is the read the next refresh makes: a full snapshot before the
// first one, when one is due, and every SnapshotEvery reads; otherwise
// the statistics alone.
func (o Observer) Next() Read {
	r := Read{Scope: o.scope, Reach: o.scope.Reach, Snapshot: !o.loaded || o.due || o.since >= SnapshotEvery-1}
	r.Objects, r.Narrow = o.objects()
	if r.Snapshot {
		return r
	}
	// Statistics follow every queue the last snapshot held, the queues
	// its targets dead-letter to included.
	r.Objects = r.Objects.Covering(o.snap)
	if len(o.scope.Ladders) > 0 && len(o.snap.Queues) <= perQueueStats {
		// A few named ladders: each queue by name costs the same beside
		// 10,000 other queues as alone, where even a filtered listing
		// makes the broker walk the vhost. A queue that appears is found
		// by the next snapshot.
		for _, q := range o.snap.Queues {
			r.Queues = append(r.Queues, q.Name)
		}
	}
	return r
}

// objects is what the broker is asked for: the named ladders in scope
// once they are known (narrow); before that, and always when the scope is
// every ladder of the vhost, whatever any ladder may be named as well, so
// that a new ladder is seen.
func (o Observer) objects() (sc topology.Scope, narrow bool) {
	ls := o.ladders()
	sc = topology.ScopeOf(o.scope.Vhost, ls)
	// Named ladders, once found, are read by name (topology.Scope.Bound),
	// so that their cost does not grow with the vhost: each one's planned
	// queues, bound or not, so that a rung that lost its binding reads as
	// that, not as missing. Until found, what their names own in any
	// layout is read by name too, and listed only when that found no
	// ladder or drift (listNamed): discovery needs every queue, bound or
	// not, to tell a damaged ladder's shape. A check (Inbound) lists
	// always, to see left-over rungs too.
	bound := len(o.scope.Ladders) > 0 && !o.scope.Inbound
	if len(o.scope.Ladders) > 0 && len(ls) > 0 && !o.listNamed {
		sc.Inbound = o.scope.Inbound
		if bound {
			var planned []string
			for _, l := range ls {
				for _, q := range l.Plan().Queues {
					planned = append(planned, q.Name)
				}
			}
			sc.Queues, sc.Bound = planned, true
		}
		return sc, true
	}
	if len(o.scope.Ladders) > 0 {
		sc = topology.NamedScope(o.scope.Vhost, o.scope.Ladders)
		sc.Bound = bound && !o.listNamed
		return sc, false
	}
	sc.Patterns = append(sc.Patterns, topology.DiscoveryScope().Patterns...)
	// Inbound bindings of every ladder's queues when every ladder is in
	// scope; for named ladders not yet found, the narrowed snapshot that
	// follows reads theirs alone.
	sc.Inbound = o.scope.Inbound && len(o.scope.Ladders) == 0
	return sc.With(), false
}

// covered reports whether a scoped read asked for every object of the
// ladders found: their targets' queues included.
func (o Observer) covered(read topology.Scope) bool {
	match := read.Matcher()
	for _, n := range topology.ScopeOf(o.scope.Vhost, o.ladders()).Names {
		if !match(n) {
			return false
		}
	}
	return true
}

// drifted reports whether a found ladder differs from its plan in snap.
func drifted(found []topology.Found, snap topology.Snapshot) bool {
	for _, f := range found {
		if len(topology.Diff(f.Ladder.Plan(), snap)) > 0 {
			return true
		}
	}
	return false
}

// ladders are the ladders found.
func (o Observer) ladders() []topology.Ladder {
	var ls []topology.Ladder
	for _, f := range o.found {
		ls = append(ls, f.Ladder)
	}
	return ls
}

// Resnap makes the next read a full snapshot (the operator asked, or a
// snapshot was abandoned).
func (o Observer) Resnap() Observer {
	o.due = true
	return o
}

// Observe takes in one reading. again is set when the statistics show a
// queue that came or went, or a first snapshot found ladders whose target
// queues it did not read: the caller should read a snapshot now rather
// than at the next refresh. A failed snapshot
// is due again next time. A reading of another scope is ignored.
func (o Observer) Observe(r Reading) (next Observer, again bool) {
	if !r.Read.Scope.Same(o.scope) {
		// Read for the scope before WithScope: it may hold other
		// ladders' objects, or lack this scope's.
		return o, false
	}
	if r.Err != nil {
		o.due = o.due || r.Read.Snapshot
		return o, false
	}
	if r.Read.Snapshot {
		o.snap, o.loaded, o.since, o.due = r.Snap, true, 0, false
		o.found = o.found[:0:0]
		for _, f := range topology.Discover(r.Snap) {
			if o.scope.Watches(f.Ladder) {
				o.found = append(o.found, f)
			}
		}
		o.bound = remember(o.bound, o.found)
		// A snapshot that had to look for the named ladders holds other
		// ladders' objects too: the next read narrows to theirs.
		o.due = len(o.scope.Ladders) > 0 && len(o.found) > 0 && r.Scoped && !r.Read.Narrow
		if r.Scoped && r.Read.Objects.Bound && !r.Read.Narrow {
			// A first read by name sees what the ladders' exchanges bind:
			// the whole of a healthy ladder, which needs no other read.
			// When it found none, or drift, a queue nothing binds may be
			// missing from what it read (and discovery's idea of the
			// ladder wrong with it): list what the names own, once.
			o.listNamed = len(o.found) == 0 || drifted(o.found, r.Snap)
			o.due = o.listNamed
		} else if r.Scoped && !r.Read.Narrow {
			o.listNamed = false // listed: what follows narrows as usual
		}
		// One that looked for every ladder read what any ladder may own,
		// not the queues their targets are, whatever those are named:
		// read them now, as a new queue calls for.
		again = len(o.scope.Ladders) == 0 && r.Scoped && !o.covered(r.Read.Objects)
	} else {
		o.since++
		again = !topology.SameQueueNames(r.Queues, o.snap.Queues)
		o.snap = o.snap.WithStats(topology.StatsByName(r.Queues))
	}
	o.moves = o.moves.Observe(r.Queues, r.At)
	o.waits = o.waits.Observe(r.Queues, r.At)
	o.flows = o.flows.Observe(o.snap.Queues, r.At)
	o.at = r.At
	return o, again
}

// Refresh reads the broker once, as Next says, and the snapshot a changed
// queue set calls for in the same go: what a caller without a loop of its
// own (the exporter's scrape) does. snapshotted says a full snapshot was
// read.
func (o Observer) Refresh(ctx context.Context, insp Inspector, now func() time.Time) (next Observer, snapshotted bool, err error) {
	r := o.Next().Do(ctx, insp, now)
	o, again := o.Observe(r)
	if r.Err != nil {
		return o, r.Read.Snapshot, fmt.Errorf("%s: %w", r.Read.Op(), r.Err)
	}
	if !again {
		return o, r.Read.Snapshot, nil
	}
	r = o.Resnap().Next().Do(ctx, insp, now)
	o, _ = o.Resnap().Observe(r)
	if r.Err != nil {
		return o, true, fmt.Errorf("%s: %w", r.Read.Op(), r.Err)
	}
	return o, true, nil
}

// Report judges the ladders in scope as of now: rows, totals and each
// forecast, at the observer's interval, with the history of its readings.
func (o Observer) Report(now time.Time) health.Report {
	moves, waits := o.moves, o.waits
	w := health.Watch{
		Interval: o.Interval(),
		Still:    func(q string) time.Duration { return moves.Still(q, now) },
		Waited:   func(q string) time.Duration { return waits.Waited(q, now) },
		Flows:    o.flows,
		Now:      now,
		Unrouted: o.unrouted,
		Bound:    o.bound,
	}
	r := health.NewReport(o.found, o.snap, w)
	r.At = o.at
	return r
}

// StallSampleEvery is how often WatchStalls re-reads the statistics: twice
// a statistics interval, so that no emission is missed.
const StallSampleEvery = health.DefaultInterval / 2

// StallWatch is how long WatchStalls will watch, and how many rungs.
type StallWatch struct {
	Rungs  int
	Window time.Duration
}

// Waiting says how long the stall rule must watch the ladders in scope:
// the longest health.StallWindow of the rungs holding expired messages
// waiting to be dead-lettered. Rungs is 0 when none does.
func (o Observer) Waiting() StallWatch {
	var sw StallWatch
	live := topology.StatsByName(o.snap.Queues)
	for _, f := range o.found {
		for _, r := range f.Ladder.Rungs() {
			if live[r.Queue].Expired > 0 {
				sw.Rungs++
				sw.Window = max(sw.Window, health.StallWindow(r.TTL, o.Interval()))
			}
		}
	}
	return sw
}

// WatchStalls gives a one-shot command the history the stall rule needs.
// When no rung in scope holds expired messages waiting to be
// dead-lettered, it returns at once. When some do, it tells start how long
// it will watch, then re-reads the statistics every StallSampleEvery until
// that window has passed, or until every waiting rung's count has fallen:
// a rung that dead-letters is not stalled, and a busy ladder (half a
// million expired messages in the scale phase, always some waiting) would
// otherwise cost every status the whole window. A stalled rung's count
// never falls. sleep waits (or returns the context's error); now is the
// clock.
func (o Observer) WatchStalls(ctx context.Context, insp Inspector, now func() time.Time, sleep func(context.Context, time.Duration) error, start func(StallWatch)) (Observer, error) {
	sw := o.Waiting()
	if sw.Rungs == 0 {
		return o, nil
	}
	if start != nil {
		start(sw)
	}
	// The history starts with these rungs seen waiting now, not at the
	// older reading the observer may hold.
	begin := now()
	o.waits = health.Waits{}.Observe(o.snap.Queues, begin)
	for last := begin; last.Sub(begin) < sw.Window; last = o.at {
		if err := sleep(ctx, StallSampleEvery); err != nil {
			return o, err
		}
		// Every queue's statistics, as the stall rule has always sampled
		// them: the rungs' figures, whatever else the vhost holds.
		r := Read{Scope: o.scope, Reach: ReachVhost}.Do(ctx, insp, now)
		if r.Err != nil {
			return o, fmt.Errorf("%s: %w", r.Read.Op(), r.Err)
		}
		o, _ = o.Observe(r)
		if o.settled(begin) {
			break
		}
	}
	return o, nil
}

// settled reports whether every rung seen waiting since begin has shown
// messages leaving it since: its waiting count fell, or its depth did (a
// storm's rungs forward thousands a second while their count grows). None
// of them can then be judged stalled.
func (o Observer) settled(begin time.Time) bool {
	if o.waits.MovedSince(begin) {
		return true
	}
	live := topology.StatsByName(o.snap.Queues)
	for _, f := range o.found {
		for _, r := range f.Ladder.Rungs() {
			if live[r.Queue].Expired > 0 && !o.flows.MovedSince(r.Queue, r.TTL, o.Interval(), begin) && !o.waits.Fell(r.Queue, begin) {
				return false
			}
		}
	}
	return true
}

// Sleep waits d or until ctx is done: WatchStalls' sleep in real time.
func Sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// remember adds the targets of found to bound, by ladder: a new map when
// one is new, bound itself when none is, so that an older observer keeps
// what it had. A ladder's destinations are few, and a session's ladders
// the ones it watched: what is remembered stays small.
func remember(bound map[string][]string, found []topology.Found) map[string][]string {
	var next map[string][]string
	for _, f := range found {
		l := f.Ladder
		for _, t := range l.Targets {
			if slices.Contains(bound[l.Name], t) || slices.Contains(next[l.Name], t) {
				continue
			}
			if next == nil {
				next = maps.Clone(bound)
				if next == nil {
					next = map[string][]string{}
				}
			}
			next[l.Name] = append(slices.Clip(next[l.Name]), t)
		}
	}
	if next == nil {
		return bound
	}
	return next
}
