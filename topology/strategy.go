package topology

import "fmt"

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
// for classic rungs, which have no other.
func (l Ladder) DeadLetterStrategy() string {
	if l.QueueType == Quorum && !l.AtMostOnce {
		return AtLeastOnce
	}
	return AtMostOnce
}

// RungKind is the rungs' queue type, with the strategy when it is not
// the type's own: quorum, classic, or "quorum at-most-once" (discover's
// queues column).
func (l Ladder) RungKind() string {
	if l.AtMostOnce {
		return string(l.QueueType) + " " + AtMostOnce
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
		a["x-dead-letter-strategy"] = l.DeadLetterStrategy()
	}
	a["x-overflow"] = "reject-publish"
	return a
}

// strategyVote counts the rungs found for a ladder that dead-letter at
// most once, so that discovery reads the strategy the ladder was declared
// with: the one most of its rungs have (a rung changed by hand shows up
// as drift instead of hiding the ladder's strategy).
type strategyVote struct{ atMost, rungs int }

func (v *strategyVote) add(q Queue) {
	v.rungs++
	if q.Args["x-dead-letter-strategy"] == AtMostOnce && q.QueueType() == Quorum {
		v.atMost++
	}
}

func (v strategyVote) atMostOnce() bool { return v.atMost*2 > v.rungs }
