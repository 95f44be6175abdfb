package ops

import (
	"fmt"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// DefaultMigratePreview is how many messages per rung a migration's dry
// run shows when no limit is given.
const DefaultMigratePreview = 20

// MigrateInput is a migration as a front end takes it, before any broker
// is asked: the ladders (or the delay group) by name, the flags' text as
// typed, and whether it only previews.
type MigrateInput struct {
	From, FromLayout, FromDelays string
	To, ToLayout                 string
	Dest, Park                   string
	Rate, Margin                 string // as typed: "200/s", "1s"
	Limit, Window                int
	DryRun, Force                bool
}

// Request checks what needs no broker and turns the input into the
// request Migrate plans. Each refusal is one line naming the flag, and an
// InputError.
func (in MigrateInput) Request() (MigrateRequest, error) {
	if err := in.checkSource(); err != nil {
		return MigrateRequest{}, err
	}
	switch {
	case in.Limit < 0:
		return MigrateRequest{}, badInput("--limit cannot be negative")
	case in.Window < 1:
		return MigrateRequest{}, badInput("--window must be at least 1")
	case in.Force && !in.DryRun:
		return MigrateRequest{}, badInput("--force goes with --dry-run")
	}
	for _, l := range []string{in.FromLayout, in.ToLayout} {
		if _, err := topology.LayoutByName(l); l != "" && err != nil {
			return MigrateRequest{}, badInput("%v", err)
		}
	}
	req := MigrateRequest{From: in.From, FromLayout: in.FromLayout, FromDelays: in.FromDelays,
		To: in.To, ToLayout: in.ToLayout, Dest: in.Dest, Park: in.Park, Window: in.Window}
	var err error
	if in.Rate != "" {
		if req.Rate, err = topology.ParseRate(in.Rate); err != nil {
			return MigrateRequest{}, badInput("--rate: %v", err)
		}
	}
	if req.Margin, err = topology.ParseDelay(in.Margin); err != nil {
		return MigrateRequest{}, badInput("--margin: %v", err)
	}
	return req, nil
}

// checkSource refuses a migration that names no source, or a migration of
// delays (--from-delays) with the flags only a ladder's migration takes:
// each delay message goes where its delay queue dead-letters it.
func (in MigrateInput) checkSource() error {
	if in.FromDelays == "" {
		if in.From == "" {
			return badInput("--from (a ladder) or --from-delays (a delay group) is required")
		}
		return nil
	}
	switch {
	case in.From != "" || in.FromLayout != "":
		return badInput("--from-delays takes the place of --from and --from-layout")
	case in.To == "":
		return badInput("--to is required: the ladder to move the delays into")
	case in.Dest != "":
		return badInput("--dest does not go with --from-delays: each message goes where its delay queue dead-letters it")
	}
	return nil
}

// PreviewCount is how many messages per rung a dry run peeks at: the
// limit, within what one peek reads, else DefaultMigratePreview.
func (in MigrateInput) PreviewCount() int {
	if in.Limit > 0 {
		return min(in.Limit, broker.MaxPeek)
	}
	return DefaultMigratePreview
}

// NeedsManagement is the error of a migration that cannot reach the
// management API, saying what it needed it for.
func (req MigrateRequest) NeedsManagement(err error) error {
	what := "discover both ladders"
	if req.FromDelays != "" {
		what = "find the delays and the ladder"
	}
	return fmt.Errorf("migrate needs the management API to %s: %w", what, err)
}

// Outcome judges a run of the plan: err is Run's, interrupted whether the
// operator stopped it. A migration that left messages behind (they
// stayed, or other consumers held them) fails, naming why; a migration of
// delays that stopped early for another reason has said so in its report.
func (mp MigratePlan) Outcome(res MigrateResult, err error, interrupted bool) error {
	if mp.Group != nil {
		return mp.delaysOutcome(res, err, interrupted)
	}
	from := mp.Migration.From.Name
	switch {
	case interrupted:
		return &InterruptedError{fmt.Errorf("migrate interrupted after %d message(s); the rest stay in %s", res.Moved+res.Parked, from)}
	case err != nil:
		return err
	case res.Stayed > 0:
		return fmt.Errorf("%d message(s) stayed in the rungs of %s (reasons above)", res.Stayed, from)
	case len(res.HeldElsewhere()) > 0:
		return heldElsewhereErr(from)
	}
	return nil
}

func (mp MigratePlan) delaysOutcome(res MigrateResult, err error, interrupted bool) error {
	stoppedEarly := res.Stopped != broker.StopEmpty && res.Stopped != broker.StopLimit
	switch {
	case err != nil:
		return err
	case stoppedEarly && interrupted:
		return &InterruptedError{fmt.Errorf("migrate interrupted after %d message(s); the rest stay in their delay queues", res.Moved+res.Parked)}
	case stoppedEarly:
		return nil
	case res.Stayed > 0:
		return fmt.Errorf("%d message(s) stayed in the delay queues of %s (reasons above)", res.Stayed, mp.Source())
	case len(res.HeldElsewhere()) > 0:
		return heldElsewhereErr(mp.Source())
	}
	return nil
}

func heldElsewhereErr(source string) error {
	return fmt.Errorf("other consumers held messages of %s that could not be moved (warnings above); run migrate again once they are gone", source)
}
