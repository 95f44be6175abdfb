package topology

import (
	"math"
	"time"
)

// Horizons are the times ahead a Forecast counts messages due by: the next
// minute, ten minutes, hour and day. What is due later falls in Later.
var Horizons = []time.Duration{time.Minute, 10 * time.Minute, time.Hour, 24 * time.Hour}

// ForecastOptions tune what a Forecast trusts.
type ForecastOptions struct {
	// Margin widens the check of a head age against the longest a message
	// can have been in the ladder: the broker's statistics are a refresh
	// interval or two old and timestamps are whole seconds. Callers pass
	// the slack the console's stuck rule uses.
	Margin time.Duration
	// Stuck names rungs the caller judged stuck by a rule the stats of one
	// instant cannot show (the depth has not moved for longer than the
	// TTL). Their messages are forecast as due at an unknown time.
	Stuck func(queue string) bool
	// Drained, when positive, is when a backlogged ladder will have
	// forwarded every message at its measured drain rate: the rungs share
	// one dead-letter path, so no rung holding messages is done sooner,
	// whatever its TTL says.
	Drained time.Duration
}

// RungForecast is when the messages now in one rung reach their
// destination, relative to the instant of the statistics.
type RungForecast struct {
	Rung Rung
	// Messages are the rung's ready messages and its expired ones waiting
	// to be dead-lettered (quorum rungs): the ones the forecast covers.
	Messages int64
	// Held are unacknowledged messages: a consumer holds them, so they do
	// not expire, and nothing says when they will move on.
	Held int64
	// Earliest and Latest bound when any of the rung's messages reaches
	// its destination. Latest is 0 when Unknown.
	Earliest, Latest time.Duration
	// Unknown is set when the rung does not seem to expire its messages
	// (stuck, or a head older than any message can be there): no upper
	// bound holds.
	Unknown bool
}

// DueBy counts the messages that reach their destination within By.
// Min are certainly due by then, Max possibly; Estimate assumes messages
// entered each rung evenly over its TTL and have evenly spread lower
// digits, and always lies in [Min, Max].
type DueBy struct {
	By                 time.Duration
	Min, Max, Estimate int64
}

// Forecast says when the messages in flight in a ladder reach their
// destinations, from nothing but what the broker reports of each rung.
type Forecast struct {
	Ladder Ladder
	// Dest is the one queue every message of the ladder goes to, when its
	// layout and targets leave only one; "" when messages go to several
	// destinations, which the rungs' statistics cannot tell apart.
	Dest  string
	Rungs []RungForecast
	// Due counts messages due by each of Horizons; Later those due after
	// the last one (Min certainly later, Max possibly).
	Due   []DueBy
	Later DueBy
	// Messages is the total the forecast covers; Held and Unknown count
	// those it cannot time (also part of Later's Max).
	Messages, Held, Unknown int64
	// Earliest and Latest bound every covered message's arrival; Latest
	// is 0 when some message is Unknown.
	Earliest, Latest time.Duration
}

// Forecast works out when the messages now waiting in the ladder's rungs
// reach their destinations, from each rung's statistics (stats by queue
// name; a missing rung counts as empty).
//
// A rung of TTL t holds each message exactly t, so a message in it leaves
// within t; then it passes at most one rung of each lower level, so it
// arrives within t + Σ(longest rung of each lower level). That is Latest.
// The broker reports the head's age A from its timestamp property, set at
// publish and kept through dead-lettering: A counts the time in higher
// rungs too, so the head has been in this rung at most A, and leaves no
// sooner than t - A. Every other message entered after the head (a queue
// is first in, first out), so none of the rung leaves before t - A:
// Earliest = max(0, t - A). Without a head age Earliest is 0.
//
// That rests on the timestamp being no later than the moment the message
// entered the ladder, which holds for every publisher whose clock is not
// ahead of the broker's. A head older than a message can be in the rung
// (plus Margin) means the rung is not expiring as its TTL says: its
// messages are Unknown.
func (l Ladder) Forecast(stats map[string]QueueStats, opt ForecastOptions) Forecast {
	rungs := l.Rungs()
	longest := map[int]time.Duration{}
	for _, r := range rungs {
		longest[r.Level] = max(longest[r.Level], r.TTL)
	}
	// below[k] is the longest a message can spend in rungs under level k;
	// above[k] the longest it can have spent in rungs over it.
	below, above := map[int]time.Duration{}, map[int]time.Duration{}
	var sum time.Duration
	for level := 0; level < l.Levels; level++ {
		below[level] = sum
		sum += longest[level]
	}
	sum = 0
	for level := l.Levels - 1; level >= 0; level-- {
		above[level] = sum
		sum += longest[level]
	}

	f := Forecast{Ladder: l, Dest: l.soleDest()}
	for _, r := range rungs {
		s := stats[r.Queue]
		rf := RungForecast{Rung: r, Messages: max(s.Ready, 0) + max(s.Expired, 0), Held: max(s.Unacked, 0)}
		rf.Latest = r.TTL + below[r.Level]
		if s.HeadAge > 0 && s.Expired <= 0 {
			// Expired messages have served their TTL: they may move on
			// at any moment, so only a rung without them has a later
			// earliest.
			rf.Earliest = max(r.TTL-s.HeadAge, 0)
		}
		if rf.Messages > 0 && (s.HeadAge > above[r.Level]+r.TTL+max(opt.Margin, 0) || opt.Stuck != nil && opt.Stuck(r.Queue)) {
			rf.Unknown, rf.Earliest, rf.Latest = true, 0, 0
		}
		if rf.Messages > 0 && !rf.Unknown {
			rf.Latest = max(rf.Latest, opt.Drained)
		}
		f.Rungs = append(f.Rungs, rf)
	}
	f.count()
	return f
}

// soleDest is the one queue all the ladder's messages end in, if there is one.
func (l Ladder) soleDest() string {
	dests := l.Targets
	if def, err := l.layout().Target(l, ""); err == nil {
		dests = append([]string{def}, dests...)
	}
	if len(dests) == 1 {
		return dests[0]
	}
	return ""
}

// count fills in the totals and the horizons from the rungs.
func (f *Forecast) count() {
	first := true
	for _, r := range f.Rungs {
		f.Held += r.Held
		if r.Messages == 0 {
			continue
		}
		f.Messages += r.Messages
		if r.Unknown {
			f.Unknown += r.Messages
			f.Earliest = 0
			first = false
			continue
		}
		if first || r.Earliest < f.Earliest {
			f.Earliest = r.Earliest
		}
		f.Latest = max(f.Latest, r.Latest)
		first = false
	}
	if f.Unknown > 0 {
		f.Latest = 0
	}
	f.Due = make([]DueBy, len(Horizons))
	for i, by := range Horizons {
		d := DueBy{By: by}
		var expected float64
		for _, r := range f.Rungs {
			if r.Messages == 0 {
				continue
			}
			if r.Earliest <= by {
				d.Max += r.Messages
			}
			if r.Unknown {
				continue
			}
			if r.Latest <= by {
				d.Min += r.Messages
			}
			expected += float64(r.Messages) * r.dueShare(by)
		}
		d.Estimate = min(max(int64(math.Round(expected)), d.Min), d.Max)
		f.Due[i] = d
	}
	last := f.Due[len(f.Due)-1]
	f.Later = DueBy{Min: f.Messages - last.Max, Max: f.Messages - last.Min, Estimate: f.Messages - last.Estimate}
}

// dueShare is the share of the rung's messages due by t under the even
// spread Estimate assumes: the time to leave the rung uniform over
// [Earliest, TTL], the time in lower rungs uniform over [0, Latest-TTL].
func (r RungForecast) dueShare(t time.Duration) float64 {
	return uniformSumCDF(float64(r.Earliest), float64(r.Rung.TTL), 0, float64(r.Latest-r.Rung.TTL), float64(t))
}

// uniformSumCDF is P(X+Y ≤ t) for independent X ~ U[a1,b1], Y ~ U[a2,b2];
// a zero-width interval is a point.
func uniformSumCDF(a1, b1, a2, b2, t float64) float64 {
	t -= a1 + a2
	w1, w2 := max(b1-a1, 0), max(b2-a2, 0)
	if w1 < w2 {
		w1, w2 = w2, w1
	}
	switch {
	case t < 0:
		return 0
	case t >= w1+w2:
		return 1
	case w1 == 0:
		return 1 // both points, and t ≥ 0
	case w2 == 0:
		return t / w1
	}
	// The density of X+Y is a trapezoid: rising over [0,w2], flat to w1,
	// falling to w1+w2. Integrate it up to t.
	switch {
	case t <= w2:
		return t * t / (2 * w1 * w2)
	case t <= w1:
		return (t - w2/2) / w1
	default:
		u := w1 + w2 - t
		return 1 - u*u/(2*w1*w2)
	}
}
