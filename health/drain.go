package health

import (
	"fmt"
	"math"
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
	// taken counts what consumers took (QueueStats.Taken); present says
	// the reading listed the queue.
	taken   int64
	present bool
}

// Observe records a reading of qs taken at at.
func (f Flows) Observe(qs []topology.Queue, at time.Time) Flows {
	s := flowSample{at: at, q: make(map[string]depth, len(qs))}
	for _, q := range qs {
		st := q.Stats
		s.q[q.Name] = depth{messages: st.Messages(), ready: st.Ready, expired: st.Expired, pub: st.PublishRate, taken: st.Taken, present: true}
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
// forwards, how fast clients add to it, and when what it holds will have
// left.
type Drain struct {
	// Capacity is the hops a second the ladder made over Span (each
	// message forwarded from one rung to the next, or to its
	// destination, is one), net of what clients published meanwhile; 0
	// when the readings span too little. Slowest and Fastest bound the
	// rates the recent readings show (ladderDrain says over which spans):
	// the finish's range.
	Capacity         float64
	Slowest, Fastest float64
	Span             time.Duration
	// In is the messages a second clients published into the rungs, and
	// Out the messages a second that left the rungs for their
	// destinations, over the last RateSpan of Span: In above Out, the
	// backlog grows.
	In, Out float64
	// Hops are the hops the messages in the rungs still have to make.
	Hops int64
	// Backlog counts the expired messages waiting in backlogged rungs.
	Backlog int64
	// Finish is how long until the messages in the rungs now have all
	// left them, at the slowest rate (FinishFast: the fastest): the
	// longer of the hops at that rate and the forecast's TTL bound; 0
	// when unknown (nothing measured, or nothing in flight). A rung
	// hands its messages on oldest first, so what clients publish later
	// waits behind them: the finish holds whether or not they go on.
	Finish, FinishFast time.Duration
	// Late is how much later than the TTLs allow the tail arrives.
	Late time.Duration
	// Dests are the flows of the queues the ladder delivers to that the
	// readings show moving (its done queue and destinations; DestFlow).
	Dests []DestFlow
}

// Backlogged says whether the ladder has a backlog to show.
func (d Drain) Backlogged() bool { return d.Backlog > 0 }

// Grows says whether clients add to the ladder faster than it drains,
// by more than the readings can tell: In and Out come from depths a
// statistics interval stale at each end of a RateSpan, so a difference
// within a sixth of the flow is noise (on a 2-core machine at load 15,
// 600/s in read as growing 33/s and shrinking 6/s from one reading to
// the next).
func (d Drain) Grows() bool { return d.Capacity > 0 && d.In-d.Out > d.noise() }

// Trend is the backlog's course while clients publish: "grows",
// "shrinks" or "holds" (within the noise); "" with no one publishing.
func (d Drain) Trend() string {
	switch {
	case d.Capacity <= 0 || d.In <= 0:
		return ""
	case d.Grows():
		return "grows"
	case d.Out-d.In > d.noise():
		return "shrinks"
	}
	return "holds"
}

func (d Drain) noise() float64 {
	return max(d.In, d.Out) * DefaultInterval.Seconds() / RateSpan.Seconds()
}

// TrendText is the backlog's course with both rates, e.g. "backlog grows
// 1200/s: 2700/s in, 1500/s drained"; "" with no one publishing.
func TrendText(d Drain) string {
	switch t := d.Trend(); t {
	case "":
		return ""
	case "holds":
		return fmt.Sprintf("backlog holds: %s/s in, %s/s drained", perS(d.In), perS(d.Out))
	default:
		return fmt.Sprintf("backlog %s %s/s: %s/s in, %s/s drained", t, perS(math.Abs(d.In-d.Out)), perS(d.In), perS(d.Out))
	}
}

// ladderDrain measures a ladder's capacity over the readings since the
// publishing to it last settled, and the hops its rungs still need.
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
	// What each reading holds and what clients publish into the rungs,
	// in messages and in hops (a message published into a level-k rung
	// adds k+1 hops).
	type sum struct{ msgs, hops, pubMsgs, pubHops float64 }
	sums := make([]sum, n)
	backlogged := make([]bool, n)
	for i, s := range f.samples {
		for q, lv := range level {
			dp := s.q[q]
			w := float64(lv + 1)
			sums[i].msgs += float64(dp.messages)
			sums[i].hops += float64(dp.messages) * w
			sums[i].pubMsgs += dp.pub
			sums[i].pubHops += dp.pub * w
			if dp.expired > 0 {
				backlogged[i] = true
			}
		}
	}
	// The capacity is what the ladder forwards while expired messages
	// wait: before, it forwards only what is due. And the publish rates
	// are the broker's averages over its last interval, lagging the
	// depths by up to an interval or more (4.3.6 counted hops left
	// rising for 15 s after its rates fell to 0): a burst of 13,000 a
	// second, integrated, puts that lag's worth of messages on the wrong
	// side of a span, more than a half minute of drain. So the span
	// starts once the publish rate has held within a factor of two of
	// today's (with nobody publishing now: at 0); a steady inflow, or
	// none, then shifts both ends of the span alike.
	now := sums[n-1].pubMsgs
	first := n - 1
	for first > 0 && backlogged[first-1] && settled(sums[first-1].pubMsgs, now) && settled(sums[first].pubMsgs, now) {
		first--
	}
	if first == n-1 {
		return d
	}
	// Each hop lowers the hops left by one and each publish raises them
	// by its rung's hops, so the hops left less the hops published so
	// far (g) only fall, and the hops made are how far they fell. The
	// figures can lag (by the last publishes, or by an expired count
	// refreshed apart from the ready count: a lagging first reading once
	// read 676 hops/s at a 1,000,000 drain's peak, against about 9,000
	// the arrivals showed): the highest reading of g is the truest start.
	g := make([]float64, n)
	pm := make([]float64, n)
	for i := first + 1; i < n; i++ {
		dt := f.samples[i].at.Sub(f.samples[i-1].at).Seconds()
		g[i] = g[i-1] + (sums[i-1].pubHops+sums[i].pubHops)/2*dt
		pm[i] = pm[i-1] + (sums[i-1].pubMsgs+sums[i].pubMsgs)/2*dt
	}
	for i := first; i < n; i++ {
		g[i] = sums[i].hops - g[i]
	}
	// A reading can also be stale the other way, alone: on 4.3.6 at load
	// 15 one read 12,600 messages too many 10s after a burst. Each reading
	// is taken as the median of itself and its neighbours, which keeps a
	// lag that lasts (it shows in several readings) and drops a lone
	// spike.
	//
	// But a rung's ready and expired counts refresh on timers of their
	// own, and while a burst's messages expire into the backlog (its first
	// hop, for a TTL after the burst) a reading taken after the expired
	// count refreshed and before the ready count did counts each message
	// that expired in between twice. On 4.0.5 after 500,000 at once that
	// read up to 130,000 messages too many, at every reading until the
	// ready count caught up, and the one right reading between was a lone
	// dip the median dropped: the span started on a double count and its
	// first rate read 14,551-19,384 hops/s against the 9,300 the done
	// queue's arrivals showed. Too many is the error that lasts, so where
	// a span or window starts, a reading is taken as the least of the
	// readings within a statistics interval before it.
	raw := append([]float64(nil), g...)
	for i := first + 1; i < n-1; i++ {
		g[i] = median3(raw[i-1], raw[i], raw[i+1])
	}
	low := f.trailingMin(raw, first, DefaultInterval)
	start := first
	for i := first + 1; i < n-1; i++ {
		if low[i] >= low[start] {
			start = i
		}
	}
	g[start] = min(g[start], low[start])
	// Each queue refreshes its figures on a timer of its own, so a
	// reading can be off by up to an interval of the flow, in either
	// direction (a message counted in the rung it left and the one it
	// reached, or in neither); over two intervals that put the first
	// forecasts of 1,000,000 drains 31% early and 201% late, over six
	// (RateSpan) a sixth at most. The rate over the whole span is the
	// capacity.
	last := f.samples[n-1].at
	d.Span = last.Sub(f.samples[start].at)
	if d.Span < RateSpan {
		d.Span = 0
		return d
	}
	rate := func(i, j int) (r, stale float64) {
		secs := f.samples[j].at.Sub(f.samples[i].at).Seconds()
		return max(min(g[i], low[i])-g[j], 0) / secs, DefaultInterval.Seconds() / secs
	}
	d.Capacity, _ = rate(start, n-1)
	d.Slowest, d.Fastest = d.Capacity, d.Capacity
	// The range is the slowest and fastest rates of the readings kept:
	// from the start to each later reading, and over every half minute
	// and every minute since (on a loaded node a drain's rate wandered
	// between 5,000 and 10,000 hops/s from one half-minute to the next).
	// A half minute's rate, though, measures its ends' staleness as much
	// as the drain: on 3.10.8 the half minute from one reading after the
	// start read 5,054 hops/s against 7,610 from the start, and that slow
	// end would have put the first forecast 23% late. So the slow end is
	// measured over the start's spans, the minutes, and the least-squares
	// fit of every reading since the start (which no one reading moves
	// much), and the fast end allows each rate its staleness (an interval
	// of flow over its span): in the five recorded 1,000,000 drains the
	// drain sped up as the backlog shrank, and a finish from the measured
	// rate alone came late at most readings.
	//
	// A half minute that starts a RateSpan or more after the start is
	// clear of that, and counts for the slow end too: the first forecast
	// (a RateSpan after the start) is not moved, and a drain that slows
	// shows in the range a half minute sooner than a minute's rate shows
	// it. 500,000 plus 1,500/s on 4.0.5 forwarded about 4,800 a second to
	// the done queue for a minute after the burst and 3,600 to 3,900 from
	// 95s on; its half minutes read 7,300 hops/s from 115s, its minutes
	// only from 125s. The range then held the actual finish at 87 of 126
	// readings, against 71 without them, and storm-1m-4.0's at 221 of
	// 256 against 213; the other recordings did not change.
	see := func(i, j int, slow bool) {
		r, stale := rate(i, j)
		if slow {
			d.Slowest = min(d.Slowest, r)
		}
		d.Fastest = max(d.Fastest, r*(1+stale))
	}
	see(start, n-1, true)
	d.Slowest = min(d.Slowest, lsRate(f.samples[start:], g[start:]))
	for j := start + 1; j < n; j++ {
		if f.samples[j].at.Sub(f.samples[start].at) >= RateSpan {
			see(start, j, true)
		}
	}
	for _, w := range []time.Duration{RateSpan, 2 * RateSpan} {
		i := start
		for j := start + 1; j < n; j++ {
			if f.samples[j].at.Sub(f.samples[start].at) < w {
				continue
			}
			for f.samples[j].at.Sub(f.samples[i+1].at) >= w {
				i++
			}
			see(i, j, w > RateSpan || f.samples[i].at.Sub(f.samples[start].at) >= RateSpan)
		}
	}
	i := start
	for i+1 < n-1 && last.Sub(f.samples[i+1].at) >= RateSpan {
		i++
	}
	// In and out, in messages, over the last RateSpan (i is its start):
	// what clients published, and that less what the rungs gained.
	secs := last.Sub(f.samples[i].at).Seconds()
	d.In = (pm[n-1] - pm[i]) / secs
	// The rungs' messages less what clients published only fall, like
	// g, and read too high alike.
	q := make([]float64, n)
	for k := first; k < n; k++ {
		q[k] = sums[k].msgs - pm[k]
	}
	held := func(k int) float64 {
		if k == 0 || k == n-1 {
			return sums[k].msgs
		}
		return median3(sums[k-1].msgs, sums[k].msgs, sums[k+1].msgs)
	}
	from := min(held(i)-pm[i], f.trailingMin(q, first, DefaultInterval)[i])
	d.Out = max((from-(held(n-1)-pm[n-1]))/secs, 0)
	return d
}

// trailingMin is the least of g over the span w up to each reading, from
// first on.
func (f Flows) trailingMin(g []float64, first int, w time.Duration) []float64 {
	out := append([]float64(nil), g...)
	for i := first + 1; i < len(g); i++ {
		from := f.samples[i].at.Add(-w)
		for k := i - 1; k >= first && f.samples[k].at.After(from); k-- {
			out[i] = min(out[i], g[k])
		}
	}
	return out
}

func median3(a, b, c float64) float64 {
	return max(min(a, b), min(max(a, b), c))
}

// lsRate is how fast g falls over the readings, by least squares: each
// reading's staleness weighs a little, not the two ends' all of it.
func lsRate(samples []flowSample, g []float64) float64 {
	var st, sg, stt, stg, k float64
	for m, s := range samples {
		x := s.at.Sub(samples[0].at).Seconds()
		st, sg, stt, stg, k = st+x, sg+g[m], stt+x*x, stg+x*g[m], k+1
	}
	den := k*stt - st*st
	if den <= 0 {
		return 0
	}
	return max(-(k*stg-st*sg)/den, 0)
}

// settled reports whether a publish rate is within a factor of two of
// now's; with nobody publishing now, only 0 is.
func settled(pub, now float64) bool {
	return pub <= 2*now && now <= 2*pub
}

// DrainSummary is the measured drain in a few words: its rates, whether
// the backlog grows, and when what the rungs hold has left.
func DrainSummary(d Drain) string {
	if d.Capacity <= 0 {
		return "drain not measured yet"
	}
	s := ""
	if t := TrendText(d); t != "" {
		s = t + "; "
	}
	s += "ladder drains " + HopsRange(d) + " hops/s"
	if d.Finish > 0 {
		s += ", done in ~" + FinishRange(d)
	}
	return s
}

// HopsRange is the drain's rate, as the slowest to the fastest of its
// half-minutes when they differ.
func HopsRange(d Drain) string {
	lo, hi := perS(d.Slowest), perS(d.Fastest)
	if lo == hi {
		return perS(d.Capacity)
	}
	return lo + "–" + hi
}

// FinishRange is the finish, from the fastest rate's to the slowest's.
func FinishRange(d Drain) string {
	lo, hi := topology.FormatSpan(d.FinishFast.Round(time.Second)), topology.FormatSpan(d.Finish.Round(time.Second))
	if d.FinishFast <= 0 || lo == hi {
		return hi
	}
	return lo + "–" + hi
}

func perS(r float64) string { return topology.FormatCount(int64(r + 0.5)) }

// BackloggedStatus is a backlogged rung's status line.
func BackloggedStatus(expired int64, d Drain) string {
	s := fmt.Sprintf("backlogged: %s expired waiting to be dead-lettered, messages leave", topology.FormatCount(expired))
	if d.Capacity > 0 {
		if t := TrendText(d); t != "" {
			s += "; " + t
		}
		s += "; ladder drains " + HopsRange(d) + " hops/s"
	}
	if d.Finish > 0 {
		s += ", done in ~" + FinishRange(d)
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
