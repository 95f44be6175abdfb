package topology

import "time"

// What a program watching a vhost over time needs, shared by the console
// and the exporter: both refresh with one statistics request and re-read
// the whole Snapshot only when the set of queues changes.

// StatsByName indexes queues' statistics by queue name.
func StatsByName(qs []Queue) map[string]QueueStats {
	m := make(map[string]QueueStats, len(qs))
	for _, q := range qs {
		m[q.Name] = q.Stats
	}
	return m
}

// SameQueueNames reports whether two queue lists name the same queues. When
// they do not, a queue came or went: discovery and drift must be worked out
// again from a full snapshot.
func SameQueueNames(a, b []Queue) bool {
	if len(a) != len(b) {
		return false
	}
	names := make(map[string]bool, len(a))
	for _, q := range a {
		names[q.Name] = true
	}
	for _, q := range b {
		if !names[q.Name] {
			return false
		}
	}
	return true
}

// WithStats is the snapshot with fresher statistics laid over its queues;
// queues live does not name keep theirs. The snapshot is not modified.
func (s Snapshot) WithStats(live map[string]QueueStats) Snapshot {
	qs := make([]Queue, len(s.Queues))
	copy(qs, s.Queues)
	for i := range qs {
		if st, ok := live[qs[i].Name]; ok {
			qs[i].Stats = st
		}
	}
	s.Queues = qs
	return s
}

// Movement is the little history stuck detection needs per queue: the
// depth last seen and since when it has not moved.
type Movement struct {
	Ready int64
	Since time.Time
}

// Movements tracks every queue's movement. Observe returns a new value, so
// that a value handed to Bubble Tea stays what it was.
type Movements map[string]Movement

// Observe records one refresh. A queue moved if its ready count changed or
// messages flowed in or out; a queue that vanished is forgotten.
func (m Movements) Observe(qs []Queue, at time.Time) Movements {
	out := make(Movements, len(qs))
	for _, q := range qs {
		s := q.Stats
		prev, seen := m[q.Name]
		flowing := s.PublishRate > 0 || s.DeliverRate > 0 || s.ExpireRate > 0
		if !seen || prev.Ready != s.Ready || flowing {
			out[q.Name] = Movement{Ready: s.Ready, Since: at}
			continue
		}
		out[q.Name] = prev
	}
	return out
}

// Still returns how long a queue's depth has not moved at now; 0 for a
// queue never seen.
func (m Movements) Still(name string, now time.Time) time.Duration {
	mv, ok := m[name]
	if !ok {
		return 0
	}
	return now.Sub(mv.Since)
}
