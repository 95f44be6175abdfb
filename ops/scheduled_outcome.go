package ops

import (
	"context"
	"fmt"

	"github.com/rungs-dev/rungs/topology"
)

// What a front end asks before a scheduled action and says after it.

// Question is what a front end asks before it runs the job's action: the
// action in words and how many messages in flight the scan reads.
func (j ScheduledJob) Question() string {
	return fmt.Sprintf("%s (about %s message(s) in flight are read)", j.Action.Describe, topology.FormatCount(int64(j.Scan.Ready)))
}

// Word is what a typed confirmation of the job asks for: its ladder's name.
func (j ScheduledJob) Word() string { return j.Scan.Ladder.Name }

// YesConfirms reports whether the operator's standing yes (the CLI's
// --yes) may stand for typing the ladder's name: never for a discard,
// which nothing undoes.
func (p ActionPlan) YesConfirms() bool { return p.Action != ActDiscard }

// Outcome is how the action ended, as an error: an *InterruptedError when
// ctx ended, the run's failure, or the selected messages that stayed in
// their rungs; nil when every one was acted on.
func (p ActionPlan) Outcome(ctx context.Context, res ActionResult, err error) error {
	switch {
	case ctx.Err() != nil:
		return &InterruptedError{fmt.Errorf("%s interrupted after %d message(s); the rest keep their due times", p.Action, res.Acted)}
	case err != nil:
		return err
	case res.Kept > 0:
		return fmt.Errorf("%d selected message(s) stayed in their rungs (reasons above)", res.Kept)
	}
	return nil
}

// Outcome is how the scan ended, as an error: an *InterruptedError when
// ctx ended, else the run's own.
func (p ScanPlan) Outcome(ctx context.Context, res ScanResult, err error) error {
	if ctx.Err() != nil {
		return &InterruptedError{fmt.Errorf("scan interrupted after %d message(s); nothing was changed", res.Seen)}
	}
	return err
}
