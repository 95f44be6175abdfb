package topology

import (
	"fmt"
	"slices"
	"time"
)

// How a quorum rung hands an expired message to the next one
// (x-dead-letter-strategy, RabbitMQ 3.10 and later). At least once, the
// rung keeps the message until the next rung confirmed it; at most once,
// the broker forwards it without waiting, which drained a burst several
// times faster (docs/benchmarks/drain.md) and loses the message when the
// next rung cannot take it at that moment. Classic queues have no choice:
// they dead-letter at most once.
const (
	AtLeastOnce = "at-least-once"
	AtMostOnce  = "at-most-once"
)

// AtMostOnceRisk is the trade of an at-most-once ladder in the words
// every front end uses: apply's warning, doctor's finding, the bench.
const AtMostOnceRisk = "the broker hands an expired message to the next rung without waiting for it to confirm, " +
	"so the message is lost if that rung cannot take it at that moment (its leader moving, a node stopping, a disk or memory alarm)"

// ParseDeadLetterStrategy reads a strategy's name: whether it is
// at-most-once.
func ParseDeadLetterStrategy(s string) (atMostOnce bool, err error) {
	switch s {
	case AtLeastOnce:
		return false, nil
	case AtMostOnce:
		return true, nil
	}
	return false, fmt.Errorf("%q: want %s or %s", s, AtLeastOnce, AtMostOnce)
}

// DeadLetterStrategy is the strategy the ladder's rungs dead-letter
// with: the argument its quorum rungs are declared with, and at-most-once
// for classic rungs, which have no other. A ladder at most once on its
// short rungs only says below what TTL.
func (l Ladder) DeadLetterStrategy() string {
	switch {
	case l.QueueType == Quorum && !l.AtMostOnce:
		return AtLeastOnce
	case l.QueueType == Quorum && l.AtMostOnceBelow > 0:
		return AtMostOnce + " below " + FormatDelay(l.AtMostOnceBelow)
	}
	return AtMostOnce
}

// EveryRungAtMostOnce reports whether every rung dead-letters at most
// once: no hop waits for a confirm (a capacity measured so fits it).
func (l Ladder) EveryRungAtMostOnce() bool {
	return l.DeadLetterStrategy() == AtMostOnce
}

// SameStrategy reports whether two ladders' rungs dead-letter alike.
func (l Ladder) SameStrategy(o Ladder) bool {
	return l.DeadLetterStrategy() == o.DeadLetterStrategy()
}

// rungAtMostOnce reports whether the rung of this TTL dead-letters at
// most once.
func (l Ladder) rungAtMostOnce(ttl time.Duration) bool {
	return l.AtMostOnce && (l.AtMostOnceBelow == 0 || ttl < l.AtMostOnceBelow)
}

// normalizeBelow gives AtMostOnceBelow its one spelling: the TTL of the
// shortest rung it leaves at least once, or 0 when it leaves none. A
// limit that leaves every rung at least once is refused: it would declare
// nothing at most once.
func (l Ladder) normalizeBelow() (Ladder, error) {
	switch {
	case l.AtMostOnceBelow < 0:
		return l, fmt.Errorf("%w: at most once below %s: want a duration above 0", ErrInvalidLadder, l.AtMostOnceBelow)
	case l.AtMostOnceBelow == 0:
		return l, nil
	}
	l.AtMostOnce = true
	var shortest, kept time.Duration
	for _, r := range l.Rungs() {
		if shortest == 0 || r.TTL < shortest {
			shortest = r.TTL
		}
		if r.TTL >= l.AtMostOnceBelow && (kept == 0 || r.TTL < kept) {
			kept = r.TTL
		}
	}
	if shortest >= l.AtMostOnceBelow {
		return l, fmt.Errorf("%w: at most once below %s: no rung is that short (the shortest holds %s)", ErrInvalidLadder, FormatDelay(l.AtMostOnceBelow), FormatDelay(shortest))
	}
	l.AtMostOnceBelow = kept
	return l, nil
}

// RungKind is the rungs' queue type, with the strategy when it is not
// the type's own: quorum, classic, or "quorum at-most-once" (discover's
// queues column).
func (l Ladder) RungKind() string {
	if l.AtMostOnce {
		return string(l.QueueType) + " " + l.DeadLetterStrategy()
	}
	return string(l.QueueType)
}

// rungArgs adds what a rung of a quorum ladder needs: its dead-letter
// strategy and reject-publish overflow, which at-least-once needs so
// that a message is never dropped between two rungs (rungs sets no
// length limit, so at most once it changes nothing, and one argument
// differs between the two). A queue that dead-letters nowhere (a done or
// unroutable queue) gets no strategy: RabbitMQ 4.0 logs "Disabling
// dead-lettering ... dead-letter-exchange is not configured" for it every
// few seconds. Ladders applied before kept it there; see LegacyQueueArg.
func rungArgs(l Ladder, a Args) Args {
	if l.QueueType != Quorum {
		return a
	}
	a["x-queue-type"] = string(Quorum)
	if _, dlx := a["x-dead-letter-exchange"]; dlx {
		a["x-dead-letter-strategy"] = AtLeastOnce
		if ttl, ok := a["x-message-ttl"].(int64); ok && l.rungAtMostOnce(time.Duration(ttl)*time.Millisecond) {
			a["x-dead-letter-strategy"] = AtMostOnce
		}
	}
	a["x-overflow"] = "reject-publish"
	return a
}

// strategyVote collects the rungs found for a ladder, so that discovery
// reads the strategy the ladder was declared with: every rung at most
// once, the rungs below a TTL at most once and the others at least once,
// or else the one most of its rungs have (a rung changed by hand shows up
// as drift instead of hiding the ladder's strategy).
type strategyVote struct{ atMost, atLeast []time.Duration }

func (v *strategyVote) add(q Queue, ttl time.Duration) {
	if q.Args["x-dead-letter-strategy"] == AtMostOnce && q.QueueType() == Quorum {
		v.atMost = append(v.atMost, ttl)
	} else {
		v.atLeast = append(v.atLeast, ttl)
	}
}

// normalize is l, found with these rungs, normalized with the strategy
// they were found with; a strategy the ladder cannot have (its rungs'
// TTLs changed by hand) is left out rather than the ladder hidden: its
// rungs then show up as drift.
func (v *strategyVote) normalize(l Ladder) (Ladder, error) {
	if nl, err := v.set(l).Normalize(); err == nil {
		return nl, nil
	}
	return l.Normalize()
}

// set gives l the strategy its rungs were found with.
func (v *strategyVote) set(l Ladder) Ladder {
	if v == nil || len(v.atMost) == 0 || l.QueueType != Quorum {
		return l
	}
	l.AtMostOnce = true
	if len(v.atLeast) == 0 {
		return l
	}
	kept, longest := slices.Min(v.atLeast), slices.Max(v.atMost)
	switch {
	case longest < kept:
		l.AtMostOnceBelow = kept
	case len(v.atMost) <= len(v.atLeast):
		l.AtMostOnce = false
	}
	return l
}
