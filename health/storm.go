package health

import (
	"fmt"

	"github.com/rungs-dev/rungs/topology"
)

// Storm is a vhost's retry storm judged as one: what waits in the
// ladders' backlogged rungs, and what RabbitMQ 4.3's delayed retry holds
// back. A storm of failing consumers on 4.3 need not pass through a
// ladder at all: a quorum queue with delayed retry sets each handed-back
// message aside for its hold, as messages_delayed, in none of ready or
// unacked. Judged from the ladders alone such a storm is invisible, and
// judged from ready and unacked alone it looks as if it had passed.
type Storm struct {
	// Backlog is the expired messages waiting in Backlogged rungs of
	// Ladders ladders (Totals).
	Backlog    int64
	Backlogged int
	Ladders    int
	// Held is the messages delayed retry holds back, in HeldIn queues:
	// the ladders' own queues (their DELAYED) and, where the Report's
	// Retry part was read, every other quorum queue of the vhost with
	// delayed retry. Each queue is counted once.
	Held   int64
	HeldIn int
	// RetryRead says the vhost's queues under delayed retry were read;
	// without it Held counts the ladders' rungs only.
	RetryRead bool
}

// Storm judges the report's storm: its ladders' backlogs and what
// delayed retry holds back across the vhost (Retry, when read).
func (r Report) Storm() Storm {
	s := Storm{RetryRead: r.Retry.Read}
	// A queue's figure from the vhost's delayed-retry read (its detail,
	// where the list has no column) over the ladder rows' own.
	held := map[string]int64{}
	for _, lr := range r.Ladders {
		s.Backlog += lr.Totals.Backlog
		s.Backlogged += lr.Totals.Backlogged
		if lr.Totals.Backlogged > 0 {
			s.Ladders++
		}
		for _, row := range lr.Rows {
			if row.Queue != "" && row.Stats.Delayed > 0 {
				held[row.Queue] = row.Stats.Delayed
			}
		}
	}
	for _, q := range r.Retry.Queues {
		if q.Reported {
			held[q.Name] = q.Delayed
		}
	}
	for _, n := range held {
		if n > 0 {
			s.Held += n
			s.HeldIn++
		}
	}
	return s
}

// Messages is what the storm holds: the backlog and what delayed retry
// holds back.
func (s Storm) Messages() int64 { return s.Backlog + s.Held }

// Text is the storm in one sentence, "" when nothing waits: how many wait
// expired in backlogged rungs and how many delayed retry holds, and that
// neither is a fault to cure: the backlog drains at the broker's pace, the
// held messages are ready again when their hold ends (and fail again if
// their consumers still do).
func (s Storm) Text() string {
	var parts []string
	if s.Backlog > 0 {
		parts = append(parts, fmt.Sprintf("%s expired %s wait in %s of %s",
			topology.FormatCount(s.Backlog), topology.Plural(s.Backlog, "message", "messages"),
			topology.Counted(s.Backlogged, "backlogged rung", "backlogged rungs"), topology.Counted(s.Ladders, "ladder", "ladders")))
	}
	if s.Held > 0 {
		parts = append(parts, fmt.Sprintf("%s held back by delayed retry in %s, in none of ready or unacked",
			topology.FormatCount(s.Held), topology.Counted(s.HeldIn, "queue", "queues")))
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		if s.Held > 0 {
			return "Storm: " + parts[0] + ": they are ready again when their hold ends, and fail again while their consumers do; no remedy applies."
		}
		return "Storm: " + parts[0] + ": busy, not broken."
	}
	return fmt.Sprintf("Storm: %s messages wait: %s; %s. Busy, not broken: the backlog drains at the broker's pace, and the held ones are ready again when their hold ends.",
		topology.FormatCount(s.Messages()), parts[0], parts[1])
}
