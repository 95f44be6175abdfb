package health

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// A destination's publish rate counts what clients published, not what
// dead-lettering delivered: in every recorded drain the done queue gained
// up to 1,000,000 messages while its publish rate read 0, and on 4.3.6 a
// destination fed only by a ladder had no message_stats at all. What the
// broker does give is the depth and what consumers took (Taken, counters
// of acknowledgements and deliveries without one). A message enters the
// queue and stays, or is taken, so between two readings
//
//	arrived = depth's change + taken
//
// and what leaves is what was taken. A queue nobody has consumed from
// reports no counters: none taken, its arrivals are its gain.

// DestFlow is what the recent readings show of one destination queue: how
// fast messages arrive in it and how fast its consumers take them.
type DestFlow struct {
	Queue string
	// Done says the queue is the ladder's done queue, not a destination.
	Done bool
	// In and Taken are messages a second over Span, the last RateSpan of
	// readings (all of them when they span less).
	In, Taken float64
	Span      time.Duration
	// Depth is what the queue holds at the last reading.
	Depth int64
}

// Net is how fast the queue's backlog grows (below 0: shrinks).
func (d DestFlow) Net() float64 { return d.In - d.Taken }

// Trend is the queue's course: "grows", "shrinks" or "holds" within the
// noise. The depth and the counters refresh on timers of their own (on
// 4.3.6 a reading counted 64 acknowledged before the depth showed one
// message), so each end of the span may be off by an interval of the flow:
// the noise is the ladder's (Drain.Grows), a sixth of the flow. Over a
// shorter span the ends weigh more, but a rule that scaled with it said
// "holds" of 30/s in and 15/s drained over 10s on 4.3.6.
func (d DestFlow) Trend() string {
	noise := max(d.In, d.Taken) * DefaultInterval.Seconds() / RateSpan.Seconds()
	switch n := d.Net(); {
	case n > noise:
		return "grows"
	case -n > noise:
		return "shrinks"
	}
	return "holds"
}

// Finish is how long until the queue is empty at its net rate, while it
// shrinks; 0 otherwise.
func (d DestFlow) Finish() time.Duration {
	if d.Trend() != "shrinks" || d.Depth <= 0 {
		return 0
	}
	return time.Duration(float64(d.Depth) / -d.Net() * float64(time.Second))
}

// DestFlowText is the destination's course with both rates, e.g.
// "backlog grows 1,200/s: 2,700/s in, 1,500/s drained", and while it
// shrinks when it will be empty.
func DestFlowText(d DestFlow) string {
	rates := fmt.Sprintf("%s/s in, %s/s drained", perS(d.In), perS(d.Taken))
	switch t := d.Trend(); t {
	case "holds":
		return "backlog holds: " + rates
	default:
		s := fmt.Sprintf("backlog %s %s/s: %s", t, perS(math.Abs(d.Net())), rates)
		if f := d.Finish(); f > 0 {
			s += ", empty in ~" + topology.FormatSpan(f.Round(time.Second))
		}
		return s
	}
}

// Dest measures queue's flow over the recent readings. ok is false
// without evidence: fewer than two readings holding the queue since it
// last was missing (a destination gone has none), or nothing arrived
// and nothing was taken.
func (f Flows) Dest(queue string) (d DestFlow, ok bool) {
	n := len(f.samples)
	if n < 2 || !f.samples[n-1].q[queue].present {
		return DestFlow{}, false
	}
	last := f.samples[n-1].at
	i := n - 1
	for i > 0 && f.samples[i-1].q[queue].present && last.Sub(f.samples[i-1].at) <= RateSpan {
		i--
	}
	if i == n-1 {
		return DestFlow{}, false
	}
	d = DestFlow{Queue: queue, Span: last.Sub(f.samples[i].at), Depth: f.samples[n-1].q[queue].messages}
	if d.Span <= 0 {
		return DestFlow{}, false
	}
	var taken int64
	for k := i + 1; k < n; k++ {
		// A counter that fell was reset (statistics lost with a node):
		// that step's taken is unknown, and left out (a lower bound).
		if a, b := f.samples[k-1].q[queue].taken, f.samples[k].q[queue].taken; b > a {
			taken += b - a
		}
	}
	gained := d.Depth - f.samples[i].q[queue].messages
	secs := d.Span.Seconds()
	d.In, d.Taken = max(float64(gained+taken), 0)/secs, float64(taken)/secs
	if d.In == 0 && d.Taken == 0 {
		return DestFlow{}, false
	}
	return d, true
}

// destFlows are the flows of the queues a ladder delivers to (its done
// queue and destinations) that the readings show moving.
func (f Flows) destFlows(l topology.Ladder) []DestFlow {
	var out []DestFlow
	seen := map[string]bool{}
	for _, q := range ladderEnds(l) {
		if seen[q] {
			continue
		}
		seen[q] = true
		if d, ok := f.Dest(q); ok {
			d.Done = !slices.Contains(l.Targets, q)
			out = append(out, d)
		}
	}
	return out
}
