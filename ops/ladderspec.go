package ops

import (
	"errors"
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// LadderSpec is a ladder as an operator describes it (the CLI's ladder
// flags, parsed). Shape fields not given come from the ladder of that name
// found on the broker, else from the defaults, so that `rungs publish
// --ladder jobs` needs no repetition of how jobs was built.
type LadderSpec struct {
	Name, Layout string
	Unit         time.Duration
	// MaxDelay is the longest delay to hold, when HasMaxDelay.
	MaxDelay    time.Duration
	HasMaxDelay bool
	Levels      int
	Radix       int
	QueueType   topology.QueueType
	// AtMostOnce is --dead-letter-strategy at-most-once, when given;
	// AtMostOnceBelow --at-most-once-below, which implies it.
	AtMostOnce      bool
	AtMostOnceBelow time.Duration
	Targets         []string
	// Given holds the shape fields set explicitly, by flag name: layout,
	// unit, max-delay, levels, radix, queue-type, dead-letter-strategy,
	// at-most-once-below.
	Given map[string]bool
}

// Ladder builds and validates the ladder the spec describes in vhost.
// With a base (the ladder of that name found on the broker), the shape
// fields not given are the base's rather than the defaults: a max delay
// of 7d on an existing binary ladder means 7 days in binary, not a
// radix-16 ladder laid over it.
func (s LadderSpec) Ladder(vhost string, base *topology.Ladder) (topology.Ladder, error) {
	l := topology.Ladder{
		Name: s.Name, Vhost: vhost, Layout: s.Layout, Unit: s.Unit,
		Levels: s.Levels, Radix: s.Radix, QueueType: s.QueueType, AtMostOnce: s.AtMostOnce || s.AtMostOnceBelow > 0, AtMostOnceBelow: s.AtMostOnceBelow, Targets: s.Targets,
	}
	given := func(name string) bool { return s.Given[name] }
	strategyGiven := given("dead-letter-strategy") || given("at-most-once-below")
	if given("dead-letter-strategy") && !s.AtMostOnce && given("at-most-once-below") {
		return l, fmt.Errorf("--at-most-once-below and --dead-letter-strategy at-least-once: give one")
	}
	if !given("queue-type") {
		// Normalize picks it: the default, or the one a layout fixes
		// (nsb1 is classic whatever the default).
		l.QueueType = ""
	}
	if l.Layout == "nsb" && !given("unit") {
		l.Unit = time.Second
	}
	if base != nil {
		if !given("layout") {
			l.Layout = base.Layout
		}
		if !given("unit") {
			l.Unit = base.Unit
		}
		if !given("radix") {
			l.Radix = base.Radix
		}
		if !given("levels") && !given("max-delay") {
			// Levels count digits of the base's radix: in another radix,
			// keep its range instead.
			l.Levels = base.Levels
			if l.Radix != base.Radix {
				if n, err := topology.LevelsFor(base.MaxDelay(), base.Unit, l.Radix); err == nil {
					l.Levels = n
				}
			}
		}
		if !given("queue-type") {
			l.QueueType = base.QueueType
		}
		if !strategyGiven {
			// Kept as declared, as the queue type is: an at-most-once
			// ladder read without the flag is not drift, and apply does
			// not turn it into a conflict.
			l.AtMostOnce, l.AtMostOnceBelow = base.AtMostOnce, base.AtMostOnceBelow
		}
	}
	if !strategyGiven && l.QueueType == topology.Classic {
		// A quorum ladder's strategy does not carry over to classic rungs.
		l.AtMostOnce, l.AtMostOnceBelow = false, 0
	}
	if strategyGiven && l.QueueType == topology.Classic {
		return l, fmt.Errorf("--dead-letter-strategy, --at-most-once-below: classic queues ignore them (they dead-letter at most once already); give them with quorum rungs")
	}
	if s.HasMaxDelay {
		radix := l.Radix
		if radix == 0 {
			radix = topology.DefaultRadixFor(l.Layout)
		}
		var err error
		if l.Levels, err = topology.LevelsFor(s.MaxDelay, l.Unit, radix); err != nil {
			return l, fmt.Errorf("--max-delay: %w", err)
		}
	}
	return l.Normalize()
}

// NewLadder gives a new ladder l, built from the spec, the layout its
// broker's release calls for (topology.Version.NewLadderLayout) unless the
// spec names one: the prefix layout where the direct layout would lose
// BCC keys (topology.Ladder.RiskOn), the best that is safe there, routed
// by the routing key alone. version is read only for a ladder routed by
// BCC; unread, the ladder stays. It returns the ladder and the note that
// says why it is not direct, or "".
func (s LadderSpec) NewLadder(vhost string, l topology.Ladder, version func() (topology.Version, error)) (topology.Ladder, string, error) {
	if s.Given["layout"] || !l.RoutesByBCC() {
		return l, "", nil
	}
	v, err := version()
	if err != nil || v.NewLadderLayout(l.QueueType) == l.Layout {
		return l, "", nil
	}
	why, hint := topology.BCCRetryWhy(v, l.Name), "--layout direct to choose it anyway; --queue-type classic ladders are direct"
	if l.RiskOn(v) == topology.LayoutBroken {
		why, hint = topology.BCCBrokenWhy(v.String()), "upgrade to 3.13.3 or later for the direct layout"
	}
	alt := s
	alt.Layout = v.NewLadderLayout(l.QueueType)
	pl, err := alt.Ladder(vhost, nil)
	if err != nil {
		return l, "", err
	}
	return pl, fmt.Sprintf("a new %s ladder is %s, not direct: %s (%s)", pl.QueueType, pl.Layout, why, hint), nil
}

// ResolvedLadder is the ladder a command acts on and where its shape
// came from.
type ResolvedLadder struct {
	Ladder topology.Ladder
	// Found says the ladder is on the broker, as Existing.
	Found    bool
	Existing topology.Ladder
	// LayoutNote says why a new ladder's layout is not the default one
	// (NewLadder); "" when it is.
	LayoutNote string
}

// FoundLadder is the ladder as found on the broker, nil when it is not there
// (or nothing was read): ApplyRequest.Existing, for apply and bridge alike.
func (r ResolvedLadder) FoundLadder() *topology.Ladder {
	if !r.Found {
		return nil
	}
	return &r.Existing
}

// Resolve combines the spec with what snap holds (nil: the management
// API did not answer, and the spec alone makes the ladder): a ladder the
// query finds supplies every shape the spec was not given, and its
// destinations join the spec's; a new ladder gets the layout its release
// calls for (NewLadder). A refusal is an *InputError.
func (s LadderSpec) Resolve(vhost string, snap *topology.Snapshot, q LadderQuery, version func() (topology.Version, error)) (ResolvedLadder, error) {
	var r ResolvedLadder
	if snap == nil {
		l, err := s.Ladder(vhost, nil)
		if err != nil {
			return ResolvedLadder{Ladder: l}, &InputError{err}
		}
		return ResolvedLadder{Ladder: l}, nil
	}
	f, err := FindLadder(topology.Discover(*snap), q)
	var amb *AmbiguousLadderError
	if errors.As(err, &amb) {
		return r, badInput("%v: add --layout", err)
	}
	if err == nil {
		r.Found, r.Existing = true, f.Ladder
		if r.Ladder, err = s.Ladder(vhost, &f.Ladder); err != nil {
			return ResolvedLadder{}, &InputError{err}
		}
		r.Ladder.Targets = MergeNames(f.Ladder.Targets, s.Targets)
		return r, nil
	}
	if r.Ladder, err = s.Ladder(vhost, nil); err != nil {
		return ResolvedLadder{}, &InputError{err}
	}
	if r.Ladder, r.LayoutNote, err = s.NewLadder(vhost, r.Ladder, version); err != nil {
		return ResolvedLadder{}, &InputError{err}
	}
	return r, nil
}

// MergeNames is a then b, each name once, in the order first seen.
func MergeNames(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range append(append([]string(nil), a...), b...) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
