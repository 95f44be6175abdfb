package topology

import (
	"slices"
	"time"
)

// DelayLabels are the group's delays, each once, in its queues' order:
// each queue's TTL as label writes it, or perMessage for a queue whose
// messages carry their own. Two TTLs that label alike count once.
func (g DelayGroup) DelayLabels(label func(time.Duration) string, perMessage string) []string {
	var out []string
	for _, q := range g.Queues {
		s := label(q.TTL)
		if q.PerMessage {
			s = perMessage
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
