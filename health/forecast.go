package health

import (
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// Forecast works out a ladder's forecast from its rows: their live
// statistics, and the stuck and stalled judgements the rows already carry
// (such a rung's messages get no upper bound). interval is the refresh interval
// (0: DefaultInterval): two of them are the slack for a head age judged
// impossible, as in Stuck. The console, status and the exporter all
// forecast through it.
func Forecast(l topology.Ladder, rows []Row, interval time.Duration) topology.Forecast {
	return forecast(l, rows, interval, 0)
}

// DrainForecast is Forecast for a ladder that may be backlogged: d is its
// measured capacity and hops (Flows). When rungs are backlogged and the
// capacity is known, the backlog's finish is the longer of the hops left
// at that capacity and the TTLs' bound, and no message is forecast to
// arrive sooner than its rung's turn allows: every rung holding messages
// has at least that finish as its latest. The finish is a range, from the
// fastest to the slowest of the rates measured; the forecast takes the
// slowest. The slow end allows for two things the rate does not show:
// the hops left are read up to a statistics interval stale (a message
// moving between rungs can be counted in neither), and the last message
// still waits out the rungs below the top one after it leaves it (the
// hops count its last hop as made at the rate; it is made a TTL later).
// Without them the slow end was the mean rate, and a steady drain's
// actual finish came after it at a fifth of the readings (500,000 plus
// 1,500/s on 4.3.6). It returns d with the backlog, finish and lateness
// filled in.
func DrainForecast(l topology.Ladder, rows []Row, d Drain, t Totals, interval time.Duration) (topology.Forecast, Drain) {
	fc := forecast(l, rows, interval, 0)
	d.Backlog = t.Backlog
	// A backlog that grows has no finish: while clients add to it faster
	// than it drains, the rate they will stop at decides it (a storm's
	// own publishing burst drains slower than its tail: 2,700 hops/s
	// while 13,000 a second were published on 4.3.6, 6,700 after).
	if t.Backlogged == 0 || d.Capacity <= 0 || d.Hops == 0 || d.Grows() {
		return fc, d
	}
	at := func(rate float64) time.Duration { return time.Duration(float64(d.Hops) / rate * float64(time.Second)) }
	slow, fast := d.Slowest, d.Fastest
	if slow <= 0 {
		slow = d.Capacity
	}
	fast = max(fast, slow)
	iv := interval
	if iv <= 0 {
		iv = DefaultInterval
	}
	hops := at(slow)
	d.Finish, d.FinishFast = max(hops+iv+lastWait(rows), fc.Latest), max(at(fast), soonest(rows, iv))
	if fc.Latest > 0 {
		d.Late = max(hops-fc.Latest, 0)
	}
	return forecast(l, rows, interval, d.Finish), d
}

func forecast(l topology.Ladder, rows []Row, interval, drained time.Duration) topology.Forecast {
	if interval <= 0 {
		interval = DefaultInterval
	}
	stats := map[string]topology.QueueStats{}
	stuck := map[string]bool{}
	for _, r := range rows {
		if r.Kind == RungRow {
			stats[r.Queue] = r.Stats
			stuck[r.Queue] = r.Stuck || r.Stalled
		}
	}
	return l.Forecast(stats, topology.ForecastOptions{
		Margin:  2 * interval,
		Stuck:   func(q string) bool { return stuck[q] },
		Drained: drained,
	})
}

// lastWait is the least TTL below the highest rung holding messages: the
// hops count a message's last hop as soon as made, but the last message
// of a backlog still waits out the rungs below after it leaves the top.
func lastWait(rows []Row) time.Duration {
	top := -1
	for _, r := range rows {
		if r.Kind == RungRow && r.Stats.Messages() > 0 {
			top = max(top, r.Level)
		}
	}
	var least time.Duration
	for _, r := range rows {
		if r.Kind == RungRow && r.Level < top && r.Stats.Messages() > 0 && (least == 0 || r.TTL < least) {
			least = r.TTL
		}
	}
	return least
}

// soonest is the least time the rungs' messages can still take: the
// freshest message in a rung of TTL T was published at most an interval
// before the reading, so it waits at least T less that. The forecast's
// Latest (each rung's TTL plus the longest rungs below it, and its
// margin) is a bound on the late side only: as the fast end's floor it put
// the last half minute of 500,000 plus 1,500/s on 4.0.5 at 31s, when the
// held messages all arrived in 18 to 28s.
func soonest(rows []Row, iv time.Duration) time.Duration {
	var least time.Duration
	for _, r := range rows {
		if r.Kind == RungRow && r.Stats.Ready > 0 {
			least = max(least, r.TTL-iv)
		}
	}
	return least
}
