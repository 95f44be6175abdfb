package ops

import (
	"context"
	"fmt"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// CheckPeekInput refuses, as bad input, a peek of n messages with bodies
// cut at maxBody bytes that no peek can give: before anything is read.
func CheckPeekInput(n, maxBody int) error {
	switch {
	case n < 1 || n > broker.MaxPeek:
		return badInput("--count must be between 1 and %d, got %d", broker.MaxPeek, n)
	case maxBody < 0:
		return badInput("--max-body cannot be negative")
	}
	return nil
}

// Refusal is the gate's verdict on a peek of queue as the error a front
// end stops with, nil when the peek goes ahead. Read-only refuses as the
// broker's read-only error; a missing --force is bad input, worded with
// the queue's name when it was looked up (unchecked, Why names it).
func (g PeekGate) Refusal(queue string) error {
	switch {
	case g.Verdict == PeekReadOnly:
		return fmt.Errorf("peek %s: %w: %s", queue, broker.ErrReadOnly, g.Why)
	case g.Verdict == PeekNeedsForce && !g.Checked:
		return badInput("%s; add --force to peek anyway", g.Why)
	case g.Verdict == PeekNeedsForce:
		return badInput("refusing to peek %s: %s; add --force to peek anyway", queue, g.Why)
	}
	return nil
}

// PeekLadders are the ladders a peek's stories name queues after: have,
// and those the peeked messages' headers name, read by name through insp
// when the queue was looked up (insp not nil).
func PeekLadders(ctx context.Context, insp ScopedInspector, vhost string, res broker.PeekResult, have []topology.Ladder) []topology.Ladder {
	if insp == nil {
		return have
	}
	return ReadStoryLadders(ctx, insp, vhost, res, have)
}
