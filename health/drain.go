package health

import (
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// A retry storm is not a stall. When a million messages expire at once, a
// quorum rung's expired count (messages_dlx) rises for minutes while its
// dead-letter worker forwards thousands a second: the node's quorum write
// path, not the worker, is the bound. The count alone cannot tell that from
// a worker that stopped, so a rung is judged by whether messages leave it.
// The management API reports no dead-lettered counter per queue, so
// leaving is shown from the depths the observer samples:
//
//   - the depth fell between two readings: only leaving removes messages
//     from a rung (a consumer on a rung is a finding of its own);
//   - the expired count fell (the old rule's evidence);
//   - for a rung whose depth rose (fed from above faster than it drains):
//     every message ready at one reading has expired by a reading its TTL
//     and two statistics intervals later, so if that reading counts fewer
//     expired messages than the first counted ready and expired together,
//     the difference left.
//
// A stalled worker shows none of these: its rung's depth stands still (or
// only rises), its expired count never falls.
//
// A rung fed much faster than the node dead-letters shows none of them
// either: with 1,000,000 messages of 20s published at 12,000 a second on
// 4.3.6, the 16s rung forwarded about 1,000 a second while 10,000 a
// second expired behind, so its depth and expired count rose for a
// minute and the TTL bound, which counts only what was ready at one
// reading, never caught up; it was called stalled at 56 to 59s and 77 to
// 80s of two runs. What it sent shows below it instead (fedFrom): a queue
// that no other rung can have fed, and no client published to, gained.
//
// Capacity is measured for the whole ladder, from the same depths. Cut the
// ladder below level k: every message above the cut crosses it exactly
// once, so the crossings in a span are what was published above it less
// what the depth above it gained. Summed over the levels, that is the
// hops the ladder made, and a message in a level-k rung still has k+1
// crossings to make. Remaining crossings over crossings per second is when
// the backlog is done.

// FlowHorizon is how much history Flows keeps: enough for the TTL bound
// of rungs up to a minute and a half, and for a rate over many statistics
// intervals.
const FlowHorizon = 2 * time.Minute

// RateSpan is the least span the ladder's drain rate is measured over:
// six statistics intervals of readings with no client publishing, so that
// the broker's five-second staleness moves the rate by a sixth at most. The
// rate is then measured over all the quiet readings kept.
const RateSpan = 30 * time.Second

// Flows keeps the depths of the queues the observer read, for FlowHorizon.
// It is replaced, never mutated.
type Flows struct {
	samples []flowSample
}

type flowSample struct {
	at time.Time
	q  map[string]depth
}

type depth struct {
	messages, ready, expired int64
	// pub is the rate of publishes into the queue (the management API's
	// publish rate counts what clients published, not what a dead-letter
	// worker delivered).
	pub float64
}

// Observe records a reading of qs taken at at.
func (f Flows) Observe(qs []topology.Queue, at time.Time) Flows {
	s := flowSample{at: at, q: make(map[string]depth, len(qs))}
	for _, q := range qs {
		st := q.Stats
		s.q[q.Name] = depth{messages: st.Messages(), ready: st.Ready, expired: st.Expired, pub: st.PublishRate}
	}
	keep := 0
	for keep < len(f.samples) && at.Sub(f.samples[keep].at) > FlowHorizon {
		keep++
	}
	out := make([]flowSample, 0, len(f.samples)-keep+1)
	out = append(out, f.samples[keep:]...)
	return Flows{samples: append(out, s)}
}

// Len is how many readings Flows holds.
func (f Flows) Len() int { return len(f.samples) }

// RungFlow is what the readings show of messages leaving one rung.
type RungFlow struct {
	// Left is how many messages are known to have left in the readings
	// held (a lower bound); MovedAt the last reading that showed any
	// leave (zero: none did).
	Left    int64
	MovedAt time.Time
	// Rose is the last reading at which the depth was higher than at the
	// one before: messages arrive, and a count that does not fall may
	// hide messages leaving.
	Rose time.Time
}

// Rung follows one rung of TTL ttl through the readings.
func (f Flows) Rung(queue string, ttl, interval time.Duration) RungFlow {
	if interval <= 0 {
		interval = DefaultInterval
	}
	var rf RungFlow
	moved := func(at time.Time, n int64) {
		if n > 0 {
			rf.Left += n
			rf.MovedAt = maxTime(rf.MovedAt, at)
		}
	}
	for i := 1; i < len(f.samples); i++ {
		a, b := f.samples[i-1].q[queue], f.samples[i].q[queue]
		at := f.samples[i].at
		switch {
		case b.messages < a.messages:
			moved(at, a.messages-b.messages)
		case b.expired < a.expired:
			moved(at, a.expired-b.expired)
		}
		if b.messages > a.messages {
			rf.Rose = at
		}
	}
	// The TTL bound, for a depth that rose: the earliest reading at least
	// TTL and two intervals before each later one.
	span := ttl + 2*interval
	i := 0
	for j := 1; j < len(f.samples); j++ {
		for i+1 < j && f.samples[j].at.Sub(f.samples[i+1].at) >= span {
			i++
		}
		if f.samples[j].at.Sub(f.samples[i].at) < span {
			continue
		}
		a, b := f.samples[i].q[queue], f.samples[j].q[queue]
		if b.messages > a.messages {
			// The readings between already counted any fall.
			if n := a.ready + a.expired - b.expired; n > 0 {
				rf.MovedAt = maxTime(rf.MovedAt, f.samples[j].at)
			}
		}
	}
	return rf
}

// Rates are the messages a second the readings show entering and leaving
// the queue over their whole span: what left (depth falls, Rung's Left)
// and what arrived (what left plus what the depth gained). Both are lower
// bounds; 0 without two readings.
func (f Flows) Rates(queue string) (in, out float64) {
	n := len(f.samples)
	if n < 2 {
		return 0, 0
	}
	span := f.samples[n-1].at.Sub(f.samples[0].at).Seconds()
	if span <= 0 {
		return 0, 0
	}
	left := f.Rung(queue, 0, DefaultInterval).Left
	gained := f.samples[n-1].q[queue].messages - f.samples[0].q[queue].messages
	return max(float64(left+gained), 0) / span, float64(left) / span
}

// MovedSince reports whether the readings show messages leaving the
// queue after t.
func (f Flows) MovedSince(queue string, ttl, interval time.Duration, t time.Time) bool {
	return f.Rung(queue, ttl, interval).MovedAt.After(t)
}

// Drain is a ladder's backlog as the readings show it: how fast the ladder
// forwards, and when what it holds will have left.
type Drain struct {
	// Capacity is the hops a second the ladder made over Span (each
	// message forwarded from one rung to the next, or to its
	// destination, is one); 0 when the readings span too little.
	Capacity float64
	Span     time.Duration
	// Hops are the hops the messages in the rungs still have to make.
	Hops int64
	// Backlog counts the expired messages waiting in backlogged rungs.
	Backlog int64
	// Finish is how long until the last message has left the rungs: the
	// longer of the hops at Capacity and the forecast's TTL bound; 0
	// when unknown (nothing measured, or nothing in flight).
	Finish time.Duration
	// Late is how much later than the TTLs allow the tail arrives.
	Late time.Duration
}

// Backlogged says whether the ladder has a backlog to show.
func (d Drain) Backlogged() bool { return d.Backlog > 0 }

// ladderDrain measures a ladder's capacity over the last RateSpan of
// readings and the hops its rungs still need.
func (f Flows) ladderDrain(l topology.Ladder, rows []Row) Drain {
	var d Drain
	level := map[string]int{}
	for _, r := range l.Rungs() {
		level[r.Queue] = r.Level
	}
	for _, r := range rows {
		if r.Kind == RungRow {
			d.Hops += max(r.Stats.Messages(), 0) * int64(r.Level+1)
		}
	}
	n := len(f.samples)
	if n < 2 {
		return d
	}
	last := f.samples[n-1]
	// The publish rates are the broker's averages over its last interval,
	// too coarse to integrate over a burst: the rate is measured only
	// where the readings show no publishing, on depths alone, and only
	// once they span a whole RateSpan. Each queue refreshes its figures on
	// a timer of its own, so a reading can be off by up to an interval of
	// the flow, in either direction (a message counted in the rung it left
	// and the one it reached, or in neither); over two intervals that put
	// the first forecasts of 1,000,000 drains 31% early (3.10.8: 14,038
	// hops/s, falling to 8,000 as the span grew) and 201% late (4.3.6),
	// and over six it is a sixth at most. The span may reach as far back
	// as the readings go: on a loaded node a drain's rate wandered between
	// 5,000 and 10,000 hops/s from one half-minute to the next, and only
	// the longer average forecast a 1,000,000 drain within a fifth
	// throughout.
	quiet := n - 1
	for quiet > 0 && !publishing(f.samples[quiet-1]) && !publishing(f.samples[quiet]) {
		quiet--
	}
	if quiet == n-1 {
		return d
	}
	// Each hop lowers the hops left by one, and nothing else changes them
	// while no client publishes, so they can only fall; the hops made
	// are how far they fell. But the readings can show them rising for a
	// while after the publish rates read 0: the broker's figures lag, by
	// the last publishes (4.3.6 counted hops left rising for 15 s after
	// its rates fell to 0, and a rate measured from the first quiet
	// reading was half the drain's: +48% on the finish) or by an expired
	// count (messages_dlx) refreshed apart from the ready count (a
	// lagging first reading once read 676 hops/s at a 1,000,000 drain's
	// peak, against about 9,000 the arrivals showed). Either way the
	// highest reading is the truest start: the span runs from it.
	left := func(i int) float64 {
		var h float64
		for q, lv := range level {
			h += float64(f.samples[i].q[q].messages) * float64(lv+1)
		}
		return h
	}
	first, highest := quiet, left(quiet)
	for i := quiet + 1; i < n-1; i++ {
		if h := left(i); h >= highest {
			first, highest = i, h
		}
	}
	d.Span = last.at.Sub(f.samples[first].at)
	if d.Span < RateSpan {
		d.Span = 0
		return d
	}
	d.Capacity = max(highest-left(n-1), 0) / d.Span.Seconds()
	return d
}

// BackloggedStatus is a backlogged rung's status line.
func BackloggedStatus(expired int64, d Drain) string {
	s := fmt.Sprintf("backlogged: %s expired waiting to be dead-lettered, messages leave", topology.FormatCount(expired))
	if d.Capacity > 0 {
		s += fmt.Sprintf("; ladder drains %s hops/s", topology.FormatCount(int64(d.Capacity+0.5)))
	}
	if d.Finish > 0 {
		s += ", done in ~" + topology.FormatSpan(d.Finish.Round(time.Second))
	}
	return s
}

// publishing reports whether a reading shows any queue being published to.
func publishing(s flowSample) bool {
	for _, d := range s.q {
		if d.pub > 0 {
			return true
		}
	}
	return false
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// leaving reports whether the readings show messages leaving the rung
// within its stall window, or cannot yet rule it out: a rung fed while
// it waited may forward fewer than arrive, which only the TTL bound, a TTL
// and two intervals on, can show. Without readings it reports false, so
// the waiting count alone judges, as before.
func (f facts) leaving(r *Row, waited time.Duration) bool {
	fl := f.watch.Flows
	if fl.Len() < 2 || f.watch.Now.IsZero() {
		return false
	}
	iv := f.watch.Interval
	if iv <= 0 {
		iv = DefaultInterval
	}
	rf := fl.Rung(r.Queue, r.TTL, iv)
	now := f.watch.Now
	if rf.MovedAt.After(now.Add(-StallWindow(r.TTL, iv))) {
		return true
	}
	fed := r.TTL + 2*iv
	return rf.Rose.After(now.Add(-fed)) && waited < fed
}

// ladderFeeds is what fedFrom needs of the ladder: its rungs, and the
// queues its messages end in.
type ladderFeeds struct {
	rungs []topology.Rung
	ends  []string
}

// ladderEnds are the queues a ladder delivers to: its done queue and its
// destinations (not the unroutable queue, which no rung feeds).
func ladderEnds(l topology.Ladder) []string {
	var out []string
	for _, t := range l.Terminals() {
		if t.Role == topology.RoleDone {
			out = append(out, t.Queue)
		}
	}
	return append(out, l.Targets...)
}

// fedFrom reports whether the queues below rung r took in messages that
// only r can have sent, within its stall window less one interval (so that
// the figures are from after any stall began). Below r are the rungs of
// lower levels and the ends (done queue, destinations). Messages only move
// down a ladder, and moves among the queues below keep their summed depth;
// only a rung at r's level or above, or a client, adds to it. So when no
// client published to any of them and no other rung at r's level or above
// held a message in the window, a rise of the sum is what r sent.
//
// On 4.0.5 a million-message storm's 16s rung forwarded while its 4s rung
// below passed as many on to the done queue: neither queue's own depth
// rose for readings at a time, and a rule that looked for one rising
// queue called the 16s rung stalled for six readings.
func (f facts) fedFrom(r *Row) bool {
	fl := f.watch.Flows
	if r.Kind != RungRow || fl.Len() < 2 || f.watch.Now.IsZero() {
		return false
	}
	iv := f.watch.Interval
	if iv <= 0 {
		iv = DefaultInterval
	}
	since := f.watch.Now.Add(iv - StallWindow(r.TTL, iv))
	below := append([]string(nil), f.feeds.ends...)
	for _, g := range f.feeds.rungs {
		switch {
		case g.Level < r.Level:
			below = append(below, g.Queue)
		case g.Queue != r.Queue && fl.held(g.Queue, since):
			return false
		}
	}
	for _, q := range below {
		if fl.published(q, since) {
			return false
		}
	}
	return fl.sumRose(below, since)
}

// sumRose reports whether the queues' summed depth rose between two
// readings, the later one since since.
func (f Flows) sumRose(queues []string, since time.Time) bool {
	sum := func(s flowSample) (n int64) {
		for _, q := range queues {
			n += s.q[q].messages
		}
		return n
	}
	for i := 1; i < len(f.samples); i++ {
		if !f.samples[i].at.Before(since) && sum(f.samples[i]) > sum(f.samples[i-1]) {
			return true
		}
	}
	return false
}

// held reports whether queue had messages at any reading since since.
func (f Flows) held(queue string, since time.Time) bool {
	return f.anySince(queue, since, func(d depth) bool { return d.messages > 0 })
}

// published reports whether a client published to queue at any reading
// since since (the management API's publish rate counts clients only).
func (f Flows) published(queue string, since time.Time) bool {
	return f.anySince(queue, since, func(d depth) bool { return d.pub > 0 })
}

// anySince reports whether queue's figures satisfied ok at any reading
// since since.
func (f Flows) anySince(queue string, since time.Time, ok func(depth) bool) bool {
	for _, s := range f.samples {
		if !s.at.Before(since) && ok(s.q[queue]) {
			return true
		}
	}
	return false
}

// backloggedRung: expired messages wait while messages leave. It shows
// the backlog and the ladder's measured drain, never a remedy: restarting
// a worker that is working would only slow the drain.
func backloggedRung(r *Row, f facts) {
	if r.Kind != RungRow || r.Stalled || r.Why.Cause != "" || r.Stats.Expired <= 0 {
		return
	}
	iv := f.watch.Interval
	if iv <= 0 {
		iv = DefaultInterval
	}
	waited := f.watch.waited(r.Queue)
	slow := f.drain.Capacity > 0 && float64(r.Stats.Expired) > f.drain.Capacity*iv.Seconds()
	if waited < StallWindow(r.TTL, iv) && !slow {
		return
	}
	r.Backlogged, r.Waited = true, waited
	r.raise(Notice, "backlogged "+topology.FormatCount(r.Stats.Expired), BackloggedStatus(r.Stats.Expired, f.drain))
}
