package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// ladderFlags describe a ladder on the command line. Shape flags the user
// did not set are filled from the ladder discovered on the broker, so
// `rungs publish --ladder jobs` needs no repetition of how jobs was built.
type ladderFlags struct {
	set       *pflag.FlagSet
	name      string
	layout    string
	unit      string
	maxDelay  string
	levels    int
	radix     int
	queueType string
	targets   []string
	// strategy is --dead-letter-strategy and below --at-most-once-below,
	// on the commands that declare or measure a ladder; given records
	// which were set.
	strategy, below string
	given           map[string]bool
}

// registerStrategy gives a command --dead-letter-strategy, and with
// below --at-most-once-below: apply, plan and bench share them and their
// meaning. Several commands hold them, so whether one was given is
// recorded when it is set (only the command that runs parses its flags),
// not looked up in one of them.
func (lf *ladderFlags) registerStrategy(f *pflag.FlagSet, below bool) {
	lf.strategy = topology.AtLeastOnce
	f.Var(givenValue{&lf.strategy, lf, "dead-letter-strategy"}, "dead-letter-strategy",
		"quorum rungs' dead-lettering: at-least-once, or at-most-once (a burst drains faster; a message is lost if the next rung cannot take it when it expires: a leader moving, a node stopping, a disk or memory alarm); an existing ladder keeps its own")
	if below {
		f.Var(givenValue{&lf.below, lf, "at-most-once-below"}, "at-most-once-below",
			"dead-letter at most once only from the rungs shorter than this (e.g. 1m: the short rungs a burst crowds), at least once from the others")
	}
}

// givenValue is a string flag that records that it was set.
type givenValue struct {
	p    *string
	lf   *ladderFlags
	name string
}

func (v givenValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v givenValue) Set(s string) error {
	if v.lf.given == nil {
		v.lf.given = map[string]bool{}
	}
	*v.p, v.lf.given[v.name] = s, true
	return nil
}

func (givenValue) Type() string { return "string" }

// atMostOnce parses --dead-letter-strategy and --at-most-once-below.
func (lf *ladderFlags) atMostOnce() (amo bool, below time.Duration, err error) {
	if lf.given["dead-letter-strategy"] {
		if amo, err = topology.ParseDeadLetterStrategy(lf.strategy); err != nil {
			return false, 0, usageErr("--dead-letter-strategy %v", err)
		}
	}
	if lf.given["at-most-once-below"] {
		if below, err = topology.ParseDelay(lf.below); err != nil || below <= 0 {
			return false, 0, usageErr("--at-most-once-below %q: want a duration above 0, such as 1m", lf.below)
		}
	}
	return amo, below, nil
}

// shapeGiven reports whether the flags describe the ladder's shape
// themselves, so that routing keys can be computed without reading the
// ladder from the broker: the layout, and for the layouts whose shape is
// not fixed by their library, the unit, the levels (or the longest delay)
// and, for prefix and direct, the radix.
func (lf *ladderFlags) shapeGiven() bool {
	given := func(name string) bool {
		f := lf.set.Lookup(name)
		return f != nil && f.Changed
	}
	if !given("layout") {
		return false
	}
	switch lf.layout {
	case "prefix", "direct":
		return given("unit") && (given("levels") || given("max-delay")) && given("radix")
	case "suffix":
		return given("unit") && (given("levels") || given("max-delay"))
	}
	return true // nsb, nsb1, celery: their library fixes the shape
}

// unreadShape refuses to route messages into a ladder whose shape neither
// the broker (its management API did not answer) nor the flags say: a
// ladder guessed from the defaults computes keys its bindings do not
// route, and the ladder's unroutable queue takes every message (a CI run
// under load published 2,600 messages that way, confirmed).
func (e *env) unreadShape(ctx context.Context, r resolved, doing string) error {
	if r.snap != nil || e.opts.ladder.shapeGiven() {
		return nil
	}
	// A broker that refuses the user (or is down) refuses AMQP too, and
	// that is the error to read first, as it was before the shape was
	// needed.
	if _, err := e.clients().amqp(ctx); err != nil {
		return err
	}
	// A broker that answers but refuses the user (401: no management tag;
	// 403) did answer: say what it said, and what to change.
	how, fix := "did not answer", "try again"
	if errors.Is(r.mgmtErr, broker.ErrUnauthorized) {
		how, fix = "refused the user", "give the user the management (or monitoring) tag"
	}
	return fmt.Errorf("%s: the management API %s (%v), so the shape of ladder %s is unknown and guessed keys would route into its unroutable queue; %s, or give --layout, --unit, --levels and --radix to go without it",
		doing, how, oneLine(broker.Redact(fmt.Sprint(r.mgmtErr))), e.opts.ladder.name, fix)
}

// shapeFlags are the flags that change a ladder's plan.
var shapeFlags = []string{"layout", "unit", "max-delay", "levels", "radix", "queue-type"}

func (lf *ladderFlags) register(f *pflag.FlagSet) {
	lf.set = f
	f.StringVar(&lf.name, "ladder", topology.DefaultName, "ladder name (the prefix of its queues and exchanges)")
	f.StringVar(&lf.layout, "layout", topology.DefaultLayout, "ladder layout: "+strings.Join(topology.LayoutNames(), ", "))
	f.StringVar(&lf.unit, "unit", "1s", "resolution: the lowest rung's TTL (1ms and up)")
	f.StringVar(&lf.maxDelay, "max-delay", "", "longest delay the ladder must hold (default: 2^28 units, 8.5 years at 1s)")
	f.IntVar(&lf.levels, "levels", 0, "number of digit levels (instead of --max-delay; default: the fewest holding 2^28 units)")
	f.IntVar(&lf.radix, "radix", 0, fmt.Sprintf("digit base: 2, 4, 8 or 16 (prefix and direct layouts; default %d, the other layouts are binary)", topology.DefaultRadix))
	f.StringVar(&lf.queueType, "queue-type", string(topology.DefaultQueueType), "rung queue type of a new ladder: quorum (dead-letters at least once) or classic (faster, but loses messages between rungs when a node stops); an existing ladder keeps its own")
}

// changed reports whether any shape flag was given explicitly.
func (lf *ladderFlags) changed() bool {
	for _, n := range shapeFlags {
		if fl := lf.set.Lookup(n); fl != nil && fl.Changed {
			return true
		}
	}
	return false
}

// check catches what is wrong with the flags whatever the broker holds, so
// that such input fails before any connection is made. Whether the shape
// they describe is valid can depend on the ladder found on the broker
// (fromFlags with a base).
func (lf *ladderFlags) check() error {
	if _, _, err := lf.delays(); err != nil {
		return err
	}
	if _, _, err := lf.atMostOnce(); err != nil {
		return err
	}
	if _, err := topology.LayoutByName(lf.layout); err != nil {
		return usageErr("%v", err)
	}
	if err := topology.CheckName(lf.name); err != nil {
		return usageErr("--ladder: %v", err)
	}
	return nil
}

// delays parses --unit and --max-delay (0 when not given).
func (lf *ladderFlags) delays() (unit, maxDelay time.Duration, err error) {
	if unit, err = topology.ParseDelay(lf.unit); err != nil {
		return 0, 0, usageErr("--unit: %v", err)
	}
	if lf.maxDelay == "" {
		return unit, 0, nil
	}
	if lf.levels != 0 {
		return 0, 0, usageErr("--max-delay and --levels both set; give one")
	}
	if maxDelay, err = topology.ParseDelay(lf.maxDelay); err != nil {
		return 0, 0, usageErr("--max-delay: %v", err)
	}
	return unit, maxDelay, nil
}

// named is the ladder --ladder names, or the fixed-name ladder --layout
// names (see query); "" when neither names one.
func (lf *ladderFlags) named() string {
	if lf.set.Lookup("ladder").Changed {
		return lf.name
	}
	if q := lf.query(); q.Name != lf.name {
		return q.Name
	}
	return ""
}

// query asks for the ladder --ladder names, of the layout --layout names
// when it is given: a name alone may be several layouts' ladders. Without
// --ladder, a layout whose library fixes the ladder's name (nsb, nsb1,
// celery) names that ladder, as status and discover find it, not the
// default name.
func (lf *ladderFlags) query() ops.LadderQuery {
	q := ops.LadderQuery{Name: lf.name}
	if lf.set.Lookup("layout").Changed {
		q.Layout = lf.layout
		if !lf.set.Lookup("ladder").Changed {
			if l, err := lf.fromFlags("", nil); err == nil {
				q.Name = l.Name
			}
		}
	}
	return q
}

// namedExplicitly reports whether the flags name one ladder on purpose:
// --ladder, or --layout of a layout whose library fixes the ladder's name.
func (lf *ladderFlags) namedExplicitly() bool {
	return lf.set.Lookup("ladder").Changed || lf.query().Name != lf.name
}

// fromFlags builds and validates the ladder the flags describe
// (ops.LadderSpec.Ladder), over the ladder of that name found on the
// broker when there is one.
func (lf *ladderFlags) fromFlags(vhost string, base *topology.Ladder) (topology.Ladder, error) {
	spec, err := lf.spec()
	if err != nil {
		return topology.Ladder{}, err
	}
	l, err := spec.Ladder(vhost, base)
	if err != nil {
		return l, usageErr("%v", err)
	}
	return l, nil
}

// spec is the flags as an ops.LadderSpec.
func (lf *ladderFlags) spec() (ops.LadderSpec, error) {
	unit, maxDelay, err := lf.delays()
	if err != nil {
		return ops.LadderSpec{}, err
	}
	amo, below, err := lf.atMostOnce()
	if err != nil {
		return ops.LadderSpec{}, err
	}
	given := map[string]bool{"dead-letter-strategy": lf.given["dead-letter-strategy"], "at-most-once-below": lf.given["at-most-once-below"]}
	for _, n := range shapeFlags {
		given[n] = lf.set.Lookup(n).Changed
	}
	return ops.LadderSpec{
		Name: lf.name, Layout: lf.layout, Unit: unit, MaxDelay: maxDelay, HasMaxDelay: lf.maxDelay != "",
		Levels: lf.levels, Radix: lf.radix, QueueType: topology.QueueType(lf.queueType), AtMostOnce: amo, AtMostOnceBelow: below,
		Targets: lf.targets, Given: given,
	}, nil
}

// resolved is a ladder plus where its parameters came from and, when the
// management API answered, the broker's snapshot of its vhost.
type resolved struct {
	ladder     topology.Ladder
	snap       *topology.Snapshot
	discovered bool            // the ladder exists on the broker
	existing   topology.Ladder // as found there, when discovered
	mgmtErr    error           // why there is no snapshot
	// layoutNote says why a new ladder's layout is not the default one
	// (ops.LadderSpec.NewLadder); "" when it is.
	layoutNote string
}

// resolveLadderFrom is ladderFlags.resolve over the snapshot read returns,
// in the vhost the command acts on.
func (e *env) resolveLadderFrom(ctx context.Context, read func(context.Context) (topology.Snapshot, error)) (resolved, error) {
	return e.opts.ladder.resolve(ctx, e.vhost(), read, func() (topology.Version, error) { return e.clients().brokerVersion(ctx) })
}

// resolve combines flags and discovery: a ladder found on the broker
// under the flag's name supplies every shape flag not given explicitly. A
// new ladder's layout may depend on the broker's version.
func (lf *ladderFlags) resolve(ctx context.Context, vhost string, read func(context.Context) (topology.Snapshot, error), version func() (topology.Version, error)) (resolved, error) {
	if err := lf.check(); err != nil {
		return resolved{}, err
	}
	spec, err := lf.spec()
	if err != nil {
		return resolved{}, err
	}
	var r resolved
	if snap, err := read(ctx); err != nil {
		r.mgmtErr = err
	} else {
		r.snap = &snap
	}
	rl, err := spec.Resolve(vhost, r.snap, lf.query(), version)
	r.ladder, r.discovered, r.existing, r.layoutNote = rl.Ladder, rl.Found, rl.Existing, rl.LayoutNote
	if err != nil && r.snap != nil {
		return resolved{}, err
	}
	return r, err
}

// newLadderLayout gives a new ladder the layout its broker's release
// calls for unless --layout asks for one (ops.LadderSpec.NewLadder). It
// returns the note to print, or "".
func (lf *ladderFlags) newLadderLayout(vhost string, l *topology.Ladder, version func() (topology.Version, error)) (string, error) {
	spec, err := lf.spec()
	if err != nil {
		return "", err
	}
	nl, note, err := spec.NewLadder(vhost, *l, version)
	if err != nil {
		return "", usageErr("%v", err)
	}
	*l = nl
	return note, nil
}

// printLayoutNote says why a new ladder is not of the default layout.
func (v view) printLayoutNote(r resolved) {
	if r.layoutNote != "" {
		fmt.Fprintln(v.Err, "rungs: note: "+r.layoutNote)
	}
}

func mergeTargets(a, b []string) []string { return ops.MergeNames(a, b) }

// describe is the one-line summary of a ladder's shape.
func describe(l topology.Ladder) string { return l.Describe() }

// noLadder says that r's ladder is not on the broker, naming its layout
// only when --layout asked for one: a ladder of another layout under the
// name would have been found.
func (lf *ladderFlags) noLadder(r resolved) string {
	if lf.set.Lookup("layout").Changed {
		return fmt.Sprintf("no %s ladder %q in vhost %s", r.ladder.Layout, r.ladder.Name, r.ladder.Vhost)
	}
	return fmt.Sprintf("no ladder %q in vhost %s", r.ladder.Name, r.ladder.Vhost)
}

// ladderSnapshot reads the objects of the --ladder ladder only, by name
// (ops.ReadLadder): beside 10,000 other queues, the vhost's definitions
// and bindings are megabytes where the ladder's are kilobytes, and a
// listing makes the broker walk every queue.
func (e *env) ladderSnapshot(ctx context.Context) (topology.Snapshot, error) {
	if err := topology.CheckName(e.opts.ladder.name); err != nil {
		return topology.Snapshot{}, usageErr("--ladder: %v", err)
	}
	insp, err := e.clients().reader()
	if err != nil {
		return topology.Snapshot{}, err
	}
	return ops.ReadLadder(ctx, insp, e.vhost(), e.opts.ladder.names(e.vhost())...)
}

// checkSnapshot is ladderSnapshot for a drift check (ops.ReadCheck):
// left-over rungs and stray bindings included.
func (e *env) checkSnapshot(ctx context.Context) (topology.Snapshot, error) {
	insp, err := e.clients().reader()
	if err != nil {
		return topology.Snapshot{}, err
	}
	return ops.ReadCheck(ctx, insp, e.vhost(), e.opts.ladder.names(e.vhost())...)
}

// names is --ladder's name as a scope names it: none (every ladder)
// when it is empty.
func (lf *ladderFlags) names(vhost string) []string {
	n := lf.name
	if n == "" {
		return nil
	}
	// A layout whose ladder name is fixed or defaults otherwise (celery,
	// nsb) names its objects by that name, not by the default one: read
	// the name the flags' ladder normalizes to, and the one given.
	if lf.set.Lookup("layout").Changed {
		if l, err := lf.fromFlags(vhost, nil); err == nil && l.Name != n {
			return []string{l.Name, n}
		}
	}
	return []string{n}
}

// graph is the ladder's bindings, nil without the management API.
func (r resolved) graph() *topology.Graph {
	if r.snap == nil {
		return nil
	}
	return topology.NewGraph(*r.snap)
}

// declaredPlan is the plan apply would declare for r's ladder (see
// ops.DeclaredPlan), so that plan --objects and export show the arguments
// apply gives a quorum ladder on this release. Where the vhost was not
// read it says what the plan lacks.
func (e *env) declaredPlan(ctx context.Context, r resolved) topology.Plan {
	p, warnings := ops.DeclaredPlan(r.ladder, r.snap, func() (topology.Version, error) { return e.clients().brokerVersion(ctx) })
	if r.snap == nil && r.ladder.ReleaseDependent() {
		warnings = append(warnings, "the broker's release is unknown, so the quorum queues lack the arguments apply gives them there (x-queue-leader-locator balanced from RabbitMQ 3.10, x-delivery-limit -1 on rungs from 4.0)")
	}
	for _, w := range warnings {
		fmt.Fprintln(e.Err, "rungs: warning: "+oneLine(broker.Redact(w)))
	}
	return p
}
