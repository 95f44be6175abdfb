package health

import (
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// Recording is a ladder's statistics as read over time, kept so that the
// judgement can be replayed and tested on what a real broker reported
// (health/testdata: a storm draining, a real stall). The bench's drain
// phase writes them.
type Recording struct {
	Version string         `json:"version"`
	Ladder  RecordedLadder `json:"ladder"`
	N       int            `json:"n,omitempty"`
	DelayMS int64          `json:"delay_ms,omitempty"`
	// Target is the queue the messages end in.
	Target  string           `json:"target"`
	Samples []RecordedSample `json:"samples"`
}

// RecordedLadder is the ladder's shape.
type RecordedLadder struct {
	Name      string `json:"name"`
	Layout    string `json:"layout"`
	Radix     int    `json:"radix"`
	Levels    int    `json:"levels"`
	UnitMS    int64  `json:"unit_ms"`
	QueueType string `json:"queue_type"`
}

// RecordedLadderOf describes l for a recording.
func RecordedLadderOf(l topology.Ladder) RecordedLadder {
	return RecordedLadder{Name: l.Name, Layout: l.Layout, Radix: l.Radix, Levels: l.Levels, UnitMS: l.Unit.Milliseconds(), QueueType: string(l.QueueType)}
}

// Ladder is the recorded ladder, normalized.
func (r RecordedLadder) Ladder(vhost string) (topology.Ladder, error) {
	return topology.Ladder{Name: r.Name, Vhost: vhost, Layout: r.Layout, Radix: r.Radix, Levels: r.Levels,
		Unit: time.Duration(r.UnitMS) * time.Millisecond, QueueType: topology.QueueType(r.QueueType)}.Normalize()
}

// RecordedSample is one reading: milliseconds since the recording began,
// and each queue holding or receiving messages as [ready, unacked,
// expired, delayed, publish rate ×1000]. A queue left out was empty.
type RecordedSample struct {
	MS     int64               `json:"ms"`
	Queues map[string][5]int64 `json:"queues"`
}

// Add records a reading of qs taken at since the recording began.
func (r *Recording) Add(at time.Duration, qs []topology.Queue) {
	s := RecordedSample{MS: at.Milliseconds(), Queues: map[string][5]int64{}}
	for _, q := range qs {
		st := q.Stats
		if st.Messages() == 0 && st.PublishRate == 0 {
			continue
		}
		s.Queues[q.Name] = [5]int64{st.Ready, st.Unacked, st.Expired, st.Delayed, int64(st.PublishRate * 1000)}
	}
	r.Samples = append(r.Samples, s)
}

// Read is a sample's readings as queues with statistics; names lists
// every queue the ladder has, so that an empty one reads as empty.
func (s RecordedSample) Read(names []string) []topology.Queue {
	qs := make([]topology.Queue, 0, len(names))
	for _, n := range names {
		v := s.Queues[n]
		qs = append(qs, topology.Queue{Name: n, Stats: topology.QueueStats{Ready: v[0], Unacked: v[1], Expired: v[2], Delayed: v[3], PublishRate: float64(v[4]) / 1000}})
	}
	return qs
}

// Replay judges the recording reading by reading, as an observer
// refreshing at each sample would (interval: the rules' slack), and
// hands each ladder report to each with the time since the start.
func (r Recording) Replay(interval time.Duration, each func(at time.Duration, lr LadderReport)) error {
	l, err := r.Ladder.Ladder("/")
	if err != nil {
		return err
	}
	plan := l.Plan()
	var names []string
	for _, q := range plan.Queues {
		names = append(names, q.Name)
	}
	base := topology.Snapshot{Vhost: "/", Queues: plan.Queues, Exchanges: plan.Exchanges, Bindings: plan.Bindings}
	start := time.Unix(0, 0)
	var waits Waits
	var flows Flows
	for _, s := range r.Samples {
		at := start.Add(time.Duration(s.MS) * time.Millisecond)
		qs := s.Read(names)
		waits = waits.Observe(qs, at)
		flows = flows.Observe(qs, at)
		snap := base.WithStats(topology.StatsByName(qs))
		w := Watch{Interval: interval, Waited: func(q string) time.Duration { return waits.Waited(q, at) }, Flows: flows, Now: at}
		rep := NewReport([]topology.Found{{Ladder: l}}, snap, w)
		each(at.Sub(start), rep.Ladders[0])
	}
	return nil
}

// Finishes is, for each reading, how long from the start the messages
// the rungs held at it took to have all reached the ladder's ends (its
// destinations and done queue, which nobody consumed from while it was
// recorded): the first later reading whose ends gained as many; -1 when
// the recording ended first. A rung hands its messages on oldest first,
// so what was published after a reading arrives after what it held: this
// is the actual finish a forecast at that reading predicts.
func (r Recording) Finishes() ([]time.Duration, error) {
	l, err := r.Ladder.Ladder("/")
	if err != nil {
		return nil, err
	}
	ends := ladderEnds(l)
	if r.Target != "" {
		ends = append(ends, r.Target)
	}
	seen := map[string]bool{}
	depth := func(v [5]int64) int64 { return v[0] + v[1] + v[2] + v[3] }
	held := make([]int64, len(r.Samples))
	arrived := make([]int64, len(r.Samples))
	for i, s := range r.Samples {
		for _, rg := range l.Rungs() {
			held[i] += depth(s.Queues[rg.Queue])
		}
		clear(seen)
		for _, e := range ends {
			if !seen[e] {
				seen[e] = true
				arrived[i] += depth(s.Queues[e])
			}
		}
	}
	// A reading can count a message both in the rung it left and at its
	// end: no more than all of them arrive.
	var all int64
	for _, a := range arrived {
		all = max(all, a)
	}
	out := make([]time.Duration, len(r.Samples))
	for i := range r.Samples {
		j := i
		for j < len(r.Samples) && arrived[j] < min(arrived[i]+held[i], all) {
			j++
		}
		out[i] = -1
		if j < len(r.Samples) {
			out[i] = time.Duration(r.Samples[j].MS) * time.Millisecond
		}
	}
	return out, nil
}
