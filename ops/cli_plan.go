package ops

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/rungs-dev/rungs/topology"
)

// DriftCheck is a plan compared with what the broker holds: plan gates a
// deploy on it, apply verifies what it declared with it.
type DriftCheck struct {
	// Checked is false when the broker could not be read (Err says why):
	// no drift is then no evidence of a match.
	Checked bool
	Err     error
	Drift   []topology.Drift
}

// CheckDrift compares plan with snap, the broker as read; a nil snap was
// not read, and err says why.
func CheckDrift(plan topology.Plan, snap *topology.Snapshot, err error) DriftCheck {
	if snap == nil {
		return DriftCheck{Err: err}
	}
	return DriftCheck{Checked: true, Drift: topology.Diff(plan, *snap)}
}

// ErrText is why the broker was not read, "" when it was (or no reason is
// known).
func (c DriftCheck) ErrText() string {
	if c.Err == nil {
		return ""
	}
	return c.Err.Error()
}

// PlanExit is how `rungs plan` ends: a plan it could not check is an
// error, not a match, so that a deploy gated on it stops.
func (c DriftCheck) PlanExit() int {
	if !c.Checked {
		return ExitError
	}
	return c.ApplyExit()
}

// ApplyExit is how `rungs apply` ends: what it declared is there, or it
// drifts; a verification the management API could not make is only a
// warning, since the declarations themselves succeeded.
func (c DriftCheck) ApplyExit() int {
	if len(c.Drift) > 0 {
		return ExitDrift
	}
	return ExitOK
}

// VerifyApplied compares what apply declared with snap, the broker read
// after it; err is why it could not be read.
func VerifyApplied(plan topology.Plan, snap topology.Snapshot, err error) DriftCheck {
	if err != nil {
		return CheckDrift(plan, nil, err)
	}
	return CheckDrift(plan, &snap, nil)
}

// BenchProblems fails a benchmark that found problems (a message lost,
// duplicated or early), naming the first; nil when it found none.
func BenchProblems(problems []string) error {
	if n := len(problems); n > 0 {
		return fmt.Errorf("benchmark found %s, first: %s", topology.Counted(n, "problem", "problems"), problems[0])
	}
	return nil
}

// BrokerLabel names the broker at raw (an AMQP URL) for the console's
// header: user@host:port, never the password; "broker" when raw names no
// host.
func BrokerLabel(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "broker"
	}
	if u.User != nil && u.User.Username() != "" {
		return u.User.Username() + "@" + u.Host
	}
	return u.Host
}

// NeedsYes refuses a destructive action nobody can confirm (no terminal):
// a script never destroys by accident.
func NeedsYes(what, word string) error {
	return badInput("%s needs --yes (or run it in a terminal to confirm by typing %q)", what, word)
}

// Confirmation judges the operator's answer to "type word to confirm":
// line as read, readErr how reading it ended. nil confirms.
func Confirmation(line string, readErr error, word string) error {
	if readErr != nil && line == "" {
		return badInput("not confirmed: %v", readErr)
	}
	if typed := strings.TrimSpace(line); typed != word {
		return badInput("not confirmed (typed %q, expected %q); nothing was changed", typed, word)
	}
	return nil
}

// LadderCompletions are the ladders of found whose names start with
// prefix, once each, as a shell completes them: the name, a tab, its
// layout and longest delay; sorted.
func LadderCompletions(found []topology.Found, prefix string) []string {
	var names []string
	seen := map[string]bool{}
	for _, f := range found {
		n := f.Ladder.Name
		if !seen[n] && strings.HasPrefix(n, prefix) {
			seen[n] = true
			names = append(names, n+"\t"+f.Ladder.Layout+", "+topology.FormatDelay(f.Ladder.MaxDelay()))
		}
	}
	sort.Strings(names)
	return names
}
