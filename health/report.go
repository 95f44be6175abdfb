package health

import (
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// Totals are a ladder's figures summed over its rows, or several ladders'
// summed again (Sum). Every front end (the console's list and summary,
// status, discover, doctor, the exporter) reads these fields and folds
// nothing itself, so "stuck" and "stalled" mean one thing everywhere:
//
//   - Stalled counts rungs whose expired messages are not dead-lettered
//     (Row.Stalled; the cure is rungs unstall);
//   - Stuck counts rungs that do not drain for any other reason (Row.Stuck;
//     a stalled rung is never also stuck);
//   - Attention is both together: the rungs whose messages do not move on.
type Totals struct {
	// Ladders counts the ladders summed: 1 for one ladder's totals.
	Ladders int
	// InFlight counts the messages in the rungs, expired ones waiting to
	// be dead-lettered and ones a delayed retry holds included; Expired
	// and Delayed count those alone.
	InFlight int64
	Expired  int64
	Delayed  int64
	// Unroutable counts the messages in unroutable queues; HasUnroutable
	// is false when no ladder summed has one (its layout keeps none).
	Unroutable    int64
	HasUnroutable bool
	Stuck         int
	Stalled       int
	// LostRoute counts the rungs and unroutable queues that hold messages
	// for a destination whose route is gone (Row.Why); those rungs are
	// counted in Stuck too, the cure being a route, not unstall.
	LostRoute int
	// LostRungs counts the rungs among them (each counted in Stuck too).
	LostRungs int
	// Backlogged counts rungs whose expired messages wait while messages
	// leave (Row.Backlogged): busy, not broken; Backlog their expired
	// messages.
	Backlogged int
	Backlog    int64
	// MembersLost counts queues with a member offline (Row.LostMembers),
	// NoQuorum those of them without a majority online.
	MembersLost int
	NoQuorum    int
	// Missing counts planned queues the broker lacks; Problems the other
	// rows at Warning or worse that are neither stuck nor stalled, nor
	// counted already (a lost member, an unroutable queue's messages).
	Missing  int
	Problems int
	// Drift counts objects that differ from the plan; Drifted the ladders
	// with any.
	Drift   int
	Drifted int
}

// Attention counts the rungs whose messages do not move on: stuck or stalled.
func (t Totals) Attention() int { return t.Stuck + t.Stalled }

// Total folds one ladder's rows into its totals. It is the only fold of
// rows into ladder figures.
func Total(f topology.Found, rows []Row) Totals {
	t := Totals{Ladders: 1, Drift: len(f.Drift)}
	if t.Drift > 0 {
		t.Drifted = 1
	}
	for _, r := range rows {
		switch r.Kind {
		case RungRow:
			t.InFlight += r.Stats.Messages()
			t.Expired += r.Stats.Expired
			t.Delayed += r.Stats.Delayed
		case UnroutableRow:
			t.HasUnroutable = true
			t.Unroutable += r.Stats.Messages()
		}
		if r.Why.Cause == CauseLostRoute {
			t.LostRoute++
			if r.Kind == RungRow {
				t.LostRungs++
			}
		}
		if r.Backlogged {
			t.Backlogged++
			t.Backlog += r.Stats.Expired
		}
		switch {
		case r.Stalled:
			t.Stalled++
		case r.Stuck:
			t.Stuck++
		// MembersLost counts the rows whose status is a lost member, and
		// Unroutable the unroutable queue's messages: each is said once.
		case r.Severity >= Warning && !r.StatusIsMembership() && !r.StatusIsUnrouted():
			t.Problems++
		}
		if r.Missing {
			t.Missing++
		}
		if len(r.Stats.LostMembers()) > 0 {
			t.MembersLost++
			if !r.Stats.HasQuorum() {
				t.NoQuorum++
			}
		}
	}
	return t
}

// Sum adds up the totals of several ladders (the list's last line).
func Sum(ls []LadderReport) Totals {
	var t Totals
	for _, l := range ls {
		o := l.Totals
		t.Ladders += o.Ladders
		t.InFlight += o.InFlight
		t.Expired += o.Expired
		t.Delayed += o.Delayed
		t.Unroutable += o.Unroutable
		t.HasUnroutable = t.HasUnroutable || o.HasUnroutable
		t.Stuck += o.Stuck
		t.Stalled += o.Stalled
		t.LostRoute += o.LostRoute
		t.LostRungs += o.LostRungs
		t.Backlogged += o.Backlogged
		t.Backlog += o.Backlog
		t.Missing += o.Missing
		t.MembersLost += o.MembersLost
		t.NoQuorum += o.NoQuorum
		t.Problems += o.Problems
		t.Drift += o.Drift
		t.Drifted += o.Drifted
	}
	return t
}

// LadderReport is one ladder as judged at one refresh: its rows (none
// folded), their totals and its forecast.
type LadderReport struct {
	Found    topology.Found
	Rows     []Row
	Totals   Totals
	Forecast topology.Forecast
	// Drain is the ladder's measured drain: its capacity always, when
	// backlogged its backlog and predicted finish.
	Drain Drain
	// Placement is where the ladder's rungs lead and replicate.
	Placement Placement
	// Lost are the ladder's destinations whose route is gone, with the
	// messages held for each (LadderLost); nil when every route resolves
	// or nothing is held.
	Lost []LostDest
}

// Report is everything one observation of a vhost judged: every ladder
// the observer watches, in discovery order, and their totals. Front ends
// draw it; none calls back into health to judge, total or forecast.
type Report struct {
	Vhost string
	// At is when the statistics were read; Interval the slack the rules
	// and the forecast allowed for stale figures.
	At       time.Time
	Interval time.Duration
	// Snapshot is the vhost as last read, with the freshest statistics.
	Snapshot topology.Snapshot
	Ladders  []LadderReport
	Totals   Totals
	// Retry is what RabbitMQ 4.3's delayed retry holds across the vhost's
	// quorum queues (WithRetry); unread unless a front end asked.
	Retry RetryHold
}

// NewReport judges the found ladders against snap with what w knows.
func NewReport(found []topology.Found, snap topology.Snapshot, w Watch) Report {
	if w.Interval <= 0 {
		w.Interval = DefaultInterval
	}
	r := Report{Vhost: snap.Vhost, Interval: w.Interval, Snapshot: snap, Ladders: make([]LadderReport, 0, len(found))}
	for _, f := range found {
		rows := LadderRows(f, snap, w)
		t := Total(f, rows)
		fc, d := DrainForecast(f.Ladder, rows, w.Flows.ladderDrain(f.Ladder, rows), t, w.Interval)
		d.Dests = w.Flows.destFlows(f.Ladder)
		r.Ladders = append(r.Ladders, LadderReport{Found: f, Rows: rows, Totals: t, Forecast: fc, Drain: d, Placement: Place(rows), Lost: LadderLost(rows)})
	}
	r.Totals = Sum(r.Ladders)
	return r
}

// LadderItems are the ladder list's entries: NewReport's ladders.
func LadderItems(found []topology.Found, snap topology.Snapshot, w Watch) []LadderReport {
	return NewReport(found, snap, w).Ladders
}

// FilterLadders keeps the ladders whose name or layout contains every
// word of filter.
func FilterLadders(ls []LadderReport, filter string) []LadderReport {
	return filterWords(ls, filter, func(lr LadderReport) string { return lr.Found.Ladder.Name + " " + lr.Found.Ladder.Layout })
}
