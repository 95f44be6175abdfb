package model

import (
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// movement is the little history stuck detection needs per queue: the
// depth last seen and since when it has not moved.
type movement struct {
	ready int64
	since time.Time
}

// movements tracks every queue's movement. It is replaced, never mutated,
// so that a model value handed to Bubble Tea stays what it was.
type movements map[string]movement

// observe records one refresh. A queue moved if its ready count changed or
// messages flowed in or out; a queue that vanished is forgotten.
func (m movements) observe(qs []topology.Queue, at time.Time) movements {
	out := make(movements, len(qs))
	for _, q := range qs {
		s := q.Stats
		prev, seen := m[q.Name]
		flowing := s.PublishRate > 0 || s.DeliverRate > 0 || s.ExpireRate > 0
		if !seen || prev.ready != s.Ready || flowing {
			out[q.Name] = movement{ready: s.Ready, since: at}
			continue
		}
		out[q.Name] = prev
	}
	return out
}

// still returns how long a queue's depth has not moved at now.
func (m movements) still(name string, now time.Time) time.Duration {
	mv, ok := m[name]
	if !ok {
		return 0
	}
	return now.Sub(mv.since)
}
