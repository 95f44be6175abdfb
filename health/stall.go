package health

import (
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// A quorum rung with at-least-once dead-lettering keeps each expired
// message (the management API's messages_dlx, topology.QueueStats.Expired)
// until the queue's dead-letter worker has had it confirmed by the next
// rung. A healthy worker does that within milliseconds, so the count is
// small and keeps falling. After a node restart the worker can stop for
// good (rabbitmq-server #12625, #16652): the count then never falls, the
// messages are in neither ready nor unacknowledged, and nothing moves on.
//
// The rule: a rung is stalled when its waiting count has been above zero
// without falling for StallWindow. The broker refreshes messages_dlx only
// once a statistics interval, so anything shorter than two intervals cannot
// tell a drain from a stale figure. The "TTL plus two refreshes"
// is kept, with the TTL capped at one interval: messages waiting here have
// already served their TTL, so the TTL only adds slack for messages that
// expire between two samples, and waiting a long rung's hour to flag a
// worker that died would help nobody.
//
// One-shot commands (status, discover, doctor) see the same rule by taking
// samples for StallWindow when a first sample shows a rung waiting; the
// console applies it to its refresh history.

// StallWindow is how long a rung's waiting count may stay above zero
// without falling before the rung counts as stalled: its TTL (at most one
// interval) plus two intervals. interval is the slower of the refresh and
// the broker's statistics interval.
func StallWindow(ttl, interval time.Duration) time.Duration {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return min(max(ttl, 0), interval) + 2*interval
}

// Stalled says why a rung is stalled, or "" when it is not. waited is how
// long its waiting count has stayed above zero without falling (see
// Waits); 0 means unknown, which never reads as stalled.
func Stalled(s topology.QueueStats, ttl, waited, interval time.Duration) string {
	if s.Expired == 0 || waited <= 0 || waited < StallWindow(ttl, interval) {
		return ""
	}
	// Short enough for the console's detail line at 80 columns; doctor
	// explains the cause at length (StallCause).
	return fmt.Sprintf("stalled: %s expired, not dead-lettered in %s; run rungs unstall",
		topology.FormatCount(s.Expired), topology.FormatSpan(waited.Truncate(time.Second)))
}

// StallCause explains a stall for doctor and unstall.
const StallCause = "a quorum rung's dead-letter worker stopped, usually when its node restarted while messages were in flight (rabbitmq-server #12625, #16652); its expired messages stay in messages_dlx, counted in neither ready nor unacked, and move on only once the worker restarts"

// Waits follows each queue's waiting count (QueueStats.Expired) across
// samples: since when it has been above zero without falling. It is
// replaced, never mutated, so that a model value handed to Bubble Tea
// stays what it was.
type Waits map[string]wait

type wait struct {
	expired int64
	since   time.Time
}

// Observe records one sample taken at at. A count that fell, or a queue
// seen waiting for the first time, starts the clock again; a queue with
// nothing waiting (or gone) is forgotten.
func (w Waits) Observe(qs []topology.Queue, at time.Time) Waits {
	out := Waits{}
	for _, q := range qs {
		n := q.Stats.Expired
		if n <= 0 {
			continue
		}
		prev, seen := w[q.Name]
		if !seen || n < prev.expired {
			out[q.Name] = wait{expired: n, since: at}
			continue
		}
		out[q.Name] = wait{expired: n, since: prev.since}
	}
	return out
}

// MovedSince reports whether every queue with something waiting has seen
// its count fall (or started waiting) after t: none of them can then be
// judged stalled from a history that began at t.
func (w Waits) MovedSince(t time.Time) bool {
	for _, x := range w {
		if !x.since.After(t) {
			return false
		}
	}
	return true
}

// Fell reports whether the queue's waiting count fell (or it started
// waiting) after t, or it waits no more.
func (w Waits) Fell(queue string, t time.Time) bool {
	x, ok := w[queue]
	return !ok || x.since.After(t)
}

// Waited is how long a queue's waiting count has stayed above zero without
// falling, as of now; 0 when it has nothing waiting.
func (w Waits) Waited(queue string, now time.Time) time.Duration {
	if x, ok := w[queue]; ok {
		return now.Sub(x.since)
	}
	return 0
}
