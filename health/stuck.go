package health

import (
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// DefaultInterval is the refresh interval assumed when none is known: the
// management plugin's default statistics interval.
const DefaultInterval = 5 * time.Second

// Stuck says why a rung looks stuck, or "" when it does not. A rung holds
// every message for exactly its TTL and then dead-letters it, so either of
// two things means expiry is not happening (a blocked head, a policy that
// overrides the TTL, a dead-letter exchange that is gone):
//
//   - the oldest message is older than it can be in this rung, or
//   - the depth has not moved at all for longer than the TTL.
//
// The broker reports a head message's age from its timestamp property, set
// at publish and kept through dead-lettering, so it counts the time spent
// in higher rungs too: maxAge is the longest a message can have been in
// the ladder while it waits here (see MaxAge). Both rules allow two refresh
// intervals of slack, because the broker's statistics are that stale.
// still is how long the depth has stood still (0 when unknown).
func Stuck(s topology.QueueStats, ttl, maxAge, still, interval time.Duration) string {
	if ttl <= 0 || s.Messages() == 0 {
		return ""
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	maxAge = max(maxAge, ttl)
	grace := 2 * interval
	switch {
	case s.HeadAge > maxAge+grace:
		return fmt.Sprintf("stuck: oldest message is %s old; none should be older than %s here", topology.FormatSpan(s.HeadAge.Truncate(time.Second)), topology.FormatSpan(maxAge))
	case still > ttl+grace && s.Messages() > s.Delayed:
		// Messages a delayed retry holds (RabbitMQ 4.3) wait out its
		// hold on top of the TTL, which the statistics do not give: a
		// depth of only those standing still says nothing. The
		// delayedRetry rule names them.
		return fmt.Sprintf("stuck: depth %s unchanged for %s, TTL is %s", topology.FormatCount(s.Messages()), topology.FormatSpan(still.Truncate(time.Second)), topology.FormatSpan(ttl))
	}
	return ""
}

// MaxAge returns, by level, the longest a message can have been in the
// ladder while it waits in a rung of that level: the longest rung of this
// level and of every level above it, since a message visits at most one
// rung per level, highest first.
func MaxAge(l topology.Ladder) map[int]time.Duration {
	longest := map[int]time.Duration{}
	for _, r := range l.Rungs() {
		longest[r.Level] = max(longest[r.Level], r.TTL)
	}
	out := map[int]time.Duration{}
	var sum time.Duration
	for level := l.Levels - 1; level >= 0; level-- {
		sum += longest[level]
		out[level] = sum
	}
	return out
}
