package ops

import (
	"errors"
	"fmt"

	"github.com/rungs-dev/rungs/topology"
)

// ReplayInput is a replay as rungs replay's flags give it, each field
// named for its flag (From is --from, ToLadder --to-ladder, ...), before
// anything is checked. Request turns it into a ReplayRequest; Refused
// words what Replay refuses of it as those flags.
type ReplayInput struct {
	From, ToLadder, ToQueue, Delay, To, Park, Rate string
	ToOrigin, DryRun                               bool
	Limit, Window, MaxHeld                         int
	Where                                          []string
	// Vhost and ReadOnly are the configuration's.
	Vhost    string
	ReadOnly bool
	// Into names the ladder ToLadder is, with the shape the front end was
	// given; asked only for a replay into a ladder, once its delay is good.
	Into func(name string) (*ReplayInto, error)
}

// replayFlagOf is the flag behind each field ReplayRequest checks.
var replayFlagOf = map[string]string{
	"from": "--from", "queue": "--to-queue", "delay": "--delay", "park": "--park", "limit": "--limit", "rate": "--rate", "where": "--where",
}

// Request checks what only the flags' combination can say (exactly one
// target, --delay and --to only with --to-ladder, the Move's tuning) and
// reads the delay and the rate; everything else ReplayRequest.Check and
// Replay check. A refusal is an *InputError worded for the flags.
func (in ReplayInput) Request() (ReplayRequest, error) {
	req := ReplayRequest{Vhost: in.Vhost, Source: in.From, Park: in.Park, Limit: in.Limit, Where: in.Where, Window: in.Window, MaxHeld: in.MaxHeld,
		DryRun: in.DryRun, ReadOnly: in.ReadOnly}
	n := 0
	for _, set := range []bool{in.ToOrigin, in.ToLadder != "", in.ToQueue != ""} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return req, badInput("replay needs exactly one of --to-origin, --to-ladder NAME or --to-queue QUEUE")
	case in.ToLadder == "" && (in.Delay != "" || in.To != ""):
		return req, badInput("--delay and --to go with --to-ladder")
	case in.Window < 1:
		return req, badInput("--window must be at least 1")
	case in.MaxHeld < 0:
		return req, badInput("--max-held cannot be negative")
	}
	if in.ToLadder != "" {
		d, err := LadderDelay(in.Delay)
		if err != nil {
			return req, replayUsage(err)
		}
		req.To.Delay, req.To.Dest = d, in.To
		if req.To.Into, err = in.Into(in.ToLadder); err != nil {
			return req, err
		}
	}
	req.To.Queue, req.To.Origin = in.ToQueue, in.ToOrigin
	if in.Rate != "" {
		r, err := topology.ParseRate(in.Rate)
		if err != nil {
			return req, badInput("--rate: %v", err)
		}
		req.Rate = r
	}
	return req, nil
}

// Refused words a replay Replay refused, saying nothing was replayed: a
// route that would not deliver, a queue not there, and a field as the
// flag that gave it (an *InputError). A *ShapeUnknownError is returned as
// it is: the front end tries the broker another way before wording it.
func (in ReplayInput) Refused(err error) error {
	var (
		re *RouteError
		nq *NoQueueError
		fe *FieldError
	)
	switch {
	case errors.As(err, new(*ShapeUnknownError)):
		return err
	case errors.As(err, &re):
		return fmt.Errorf("nothing replayed: a message for %s would not reach %s: %v", topology.FormatDelay(re.Trace.Delay), re.Trace.Target, re.Err)
	case errors.As(err, &nq):
		return fmt.Errorf("%v; nothing was replayed", nq)
	case errors.As(err, &fe):
		return replayUsage(err)
	}
	return err
}

// replayUsage words a request refused as bad input naming the flag.
func replayUsage(err error) error {
	var fe *FieldError
	if errors.As(err, &fe) && replayFlagOf[fe.Field] != "" {
		return badInput("%s: %v", replayFlagOf[fe.Field], fe.Err)
	}
	return badInput("%v", err)
}

// UncheckedWarnings are the warnings a replay gives whose routes went
// unchecked, and why: none when they were checked.
func (p ReplayPlan) UncheckedWarnings() []string {
	if p.Unchecked == nil {
		return nil
	}
	return []string{fmt.Sprintf("routes not checked (management API: %v); relying on mandatory returns", p.Unchecked)}
}
