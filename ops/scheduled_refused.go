package ops

import (
	"errors"
	"fmt"

	"github.com/rungs-dev/rungs/broker"
)

// scheduledFlagOf is the CLI flag behind each field Scheduled checks.
var scheduledFlagOf = map[string]string{"where": "--where", "due": "--due-before/--due-after",
	"due-before": "--due-before", "due-after": "--due-after", "within": "--within", "delay": "--delay", "at": "--at",
	"park": "--park", "action": "filter", "limit": "--limit", "window": "--window", "ladder": "--ladder"}

// Refused words what Scheduled refused of the ask as the flags that
// asked (rungs scheduled): a field as its flag, a scan the peek gate
// refused, several ladders matching, no ladder; bad input is an
// *InputError. A read-only refusal and anything else are returned as
// they are.
func (a ScheduledAsk) Refused(err error) error {
	var (
		fe  *FieldError
		ref *ScanRefusal
		amb *AmbiguousLadderError
	)
	switch {
	case errors.As(err, &fe) && scheduledFlagOf[fe.Field] != "":
		return badInput("%s: %v", scheduledFlagOf[fe.Field], fe.Err)
	case errors.As(err, &ref) && ref.Gate.Verdict == PeekReadOnly:
		return fmt.Errorf("scheduled: %w: %s", broker.ErrReadOnly, ref.Gate.Why)
	case errors.As(err, &ref):
		return badInput("refusing to read ladder %s: %s; add --force to read it anyway", a.Ladder.Name, ref.Gate.Why)
	case errors.As(err, &amb):
		return badInput("%v: add --layout", err)
	case errors.Is(err, ErrNoScheduledLadder):
		return badInput("no ladder %q in vhost %s; nothing was read or changed", a.Ladder.Name, a.Vhost)
	case errors.Is(err, broker.ErrReadOnly):
		return err
	case errors.As(err, &fe), IsInputError(err):
		return badInput("%v", err)
	}
	return err
}
