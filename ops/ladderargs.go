package ops

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// LadderArgs are the ladder flags as typed, before parsing: what the CLI's
// --ladder, --layout, --unit... say, and which of them were given. Spec
// parses them; the questions that depend on which were given (which
// ladder they name, whether they fix the shape) are answered here, so a
// front end only gathers them.
type LadderArgs struct {
	Name, Layout, Unit, MaxDelay string
	Levels, Radix                int
	QueueType                    string
	Targets                      []string
	// Strategy is --dead-letter-strategy, Below --at-most-once-below.
	Strategy, Below string
	// Given holds the flags set explicitly, by name: ladder, the shape
	// flags (ShapeFlags), dead-letter-strategy, at-most-once-below.
	Given map[string]bool
}

// ShapeFlags are the flags that change a ladder's plan.
var ShapeFlags = []string{"layout", "unit", "max-delay", "levels", "radix", "queue-type"}

// delays parses --unit and --max-delay (0 when not given).
func (a LadderArgs) delays() (unit, maxDelay time.Duration, err error) {
	if unit, err = topology.ParseDelay(a.Unit); err != nil {
		return 0, 0, badInput("--unit: %v", err)
	}
	switch {
	case a.MaxDelay == "":
		return unit, 0, nil
	case a.Levels != 0:
		return 0, 0, badInput("--max-delay and --levels both set; give one")
	}
	if maxDelay, err = topology.ParseDelay(a.MaxDelay); err != nil {
		return 0, 0, badInput("--max-delay: %v", err)
	}
	return unit, maxDelay, nil
}

// DeadLetterStrategy parses --dead-letter-strategy and --at-most-once-below
// alone, for a command that takes no other ladder flag.
func (a LadderArgs) DeadLetterStrategy() (amo bool, below time.Duration, err error) {
	if a.Given["dead-letter-strategy"] {
		if amo, err = topology.ParseDeadLetterStrategy(a.Strategy); err != nil {
			return false, 0, badInput("--dead-letter-strategy %v", err)
		}
	}
	if a.Given["at-most-once-below"] {
		if below, err = topology.ParseDelay(a.Below); err != nil || below <= 0 {
			return false, 0, badInput("--at-most-once-below %q: want a duration above 0, such as 1m", a.Below)
		}
	}
	return amo, below, nil
}

// Spec parses the flags into a LadderSpec. A refusal is an *InputError.
func (a LadderArgs) Spec() (LadderSpec, error) {
	unit, maxDelay, err := a.delays()
	if err != nil {
		return LadderSpec{}, err
	}
	amo, below, err := a.DeadLetterStrategy()
	if err != nil {
		return LadderSpec{}, err
	}
	given := map[string]bool{"dead-letter-strategy": a.Given["dead-letter-strategy"], "at-most-once-below": a.Given["at-most-once-below"]}
	for _, n := range ShapeFlags {
		given[n] = a.Given[n]
	}
	return LadderSpec{
		Name: a.Name, Layout: a.Layout, Unit: unit, MaxDelay: maxDelay, HasMaxDelay: a.MaxDelay != "",
		Levels: a.Levels, Radix: a.Radix, QueueType: topology.QueueType(a.QueueType), AtMostOnce: amo, AtMostOnceBelow: below,
		Targets: a.Targets, Given: given,
	}, nil
}

// Check catches what is wrong with the flags whatever the broker holds, so
// that such input fails before any connection is made. Whether the shape
// they describe is valid can depend on the ladder found on the broker
// (LadderSpec.Ladder with a base).
func (a LadderArgs) Check() error {
	if _, err := a.Spec(); err != nil {
		return err
	}
	if _, err := topology.LayoutByName(a.Layout); err != nil {
		return &InputError{err}
	}
	if err := topology.CheckName(a.Name); err != nil {
		return badInput("--ladder: %v", err)
	}
	return nil
}

// Ladder builds and validates the ladder the flags describe over base
// (LadderSpec.Ladder). A refusal is an *InputError.
func (a LadderArgs) Ladder(vhost string, base *topology.Ladder) (topology.Ladder, error) {
	spec, err := a.Spec()
	if err != nil {
		return topology.Ladder{}, err
	}
	l, err := spec.Ladder(vhost, base)
	if err != nil {
		return l, &InputError{err}
	}
	return l, nil
}

// ShapeGiven reports whether the flags describe the ladder's shape
// themselves, so that routing keys can be computed without reading the
// ladder from the broker: the layout, and for the layouts whose shape is
// not fixed by their library, the unit, the levels (or the longest delay)
// and, for prefix and direct, the radix.
func (a LadderArgs) ShapeGiven() bool {
	g := a.Given
	depth := g["unit"] && (g["levels"] || g["max-delay"])
	switch {
	case !g["layout"]:
		return false
	case a.Layout == "prefix", a.Layout == "direct":
		return depth && g["radix"]
	case a.Layout == "suffix":
		return depth
	}
	return true // nsb, nsb1, celery: their library fixes the shape
}

// Query asks for the ladder --ladder names, of the layout --layout names
// when it is given: a name alone may be several layouts' ladders. Without
// --ladder, a layout whose library fixes the ladder's name (nsb, nsb1,
// celery) names that ladder, as status and discover find it, not the
// default name.
func (a LadderArgs) Query() LadderQuery {
	q := LadderQuery{Name: a.Name}
	if !a.Given["layout"] {
		return q
	}
	q.Layout = a.Layout
	if a.Given["ladder"] {
		return q
	}
	if l, err := a.Ladder("", nil); err == nil {
		q.Name = l.Name
	}
	return q
}

// Named is the ladder --ladder names, or the fixed-name ladder --layout
// names (see Query); "" when neither names one.
func (a LadderArgs) Named() string {
	if q := a.Query(); a.Given["ladder"] || q.Name != a.Name {
		return q.Name
	}
	return ""
}

// NamedExplicitly reports whether the flags name one ladder on purpose:
// --ladder, or --layout of a layout whose library fixes the ladder's name.
func (a LadderArgs) NamedExplicitly() bool {
	return a.Given["ladder"] || a.Query().Name != a.Name
}

// Names is --ladder's name as a scope names it: none (every ladder) when
// it is empty. A layout whose ladder name is fixed or defaults otherwise
// (celery, nsb) names its objects by that name, not by the default one:
// the name the flags' ladder normalizes to comes first, then the one given.
func (a LadderArgs) Names(vhost string) []string {
	if a.Name == "" {
		return nil
	}
	if l, err := a.Ladder(vhost, nil); a.Given["layout"] && err == nil && l.Name != a.Name {
		return []string{l.Name, a.Name}
	}
	return []string{a.Name}
}

// NotFound says that l is not on the broker, naming its layout only when
// --layout asked for one: a ladder of another layout under the name would
// have been found.
func (a LadderArgs) NotFound(l topology.Ladder) string {
	if a.Given["layout"] {
		return fmt.Sprintf("no %s ladder %q in vhost %s", l.Layout, l.Name, l.Vhost)
	}
	return fmt.Sprintf("no ladder %q in vhost %s", l.Name, l.Vhost)
}

// UnreadShapeError refuses to route messages into a ladder whose shape
// neither the broker (its management API did not answer: mgmtErr) nor the
// flags say: a ladder guessed from the defaults computes keys its
// bindings do not route, and the ladder's unroutable queue takes every
// message (a CI run under load published 2,600 messages that way,
// confirmed). A broker that answers but refuses the user (401: no
// management tag; 403) did answer: it says what it said, and what to
// change.
func UnreadShapeError(doing, ladder string, mgmtErr error) error {
	how, fix := "did not answer", "try again"
	if errors.Is(mgmtErr, broker.ErrUnauthorized) {
		how, fix = "refused the user", "give the user the management (or monitoring) tag"
	}
	return fmt.Errorf("%s: the management API %s (%v), so the shape of ladder %s is unknown and guessed keys would route into its unroutable queue; %s, or give --layout, --unit, --levels and --radix to go without it",
		doing, how, strings.Join(strings.Fields(broker.Redact(fmt.Sprint(mgmtErr))), " "), ladder, fix)
}

// ShownPlan is DeclaredPlan for showing (plan --objects, export): where
// the vhost was not read, a warning says what the plan lacks.
func ShownPlan(l topology.Ladder, snap *topology.Snapshot, version func() (topology.Version, error)) (topology.Plan, []string) {
	p, warnings := DeclaredPlan(l, snap, version)
	if snap == nil && l.ReleaseDependent() {
		warnings = append(warnings, "the broker's release is unknown, so the quorum queues lack the arguments apply gives them there (x-queue-leader-locator balanced from RabbitMQ 3.10, x-delivery-limit -1 on rungs from 4.0)")
	}
	return p, warnings
}
