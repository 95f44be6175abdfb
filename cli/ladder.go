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

// args are the flags as ops.LadderArgs, with which of them were given.
func (lf *ladderFlags) args() ops.LadderArgs {
	given := map[string]bool{
		"ladder":               lf.set.Lookup("ladder").Changed,
		"dead-letter-strategy": lf.given["dead-letter-strategy"],
		"at-most-once-below":   lf.given["at-most-once-below"],
	}
	for _, n := range ops.ShapeFlags {
		given[n] = lf.set.Lookup(n).Changed
	}
	return ops.LadderArgs{
		Name: lf.name, Layout: lf.layout, Unit: lf.unit, MaxDelay: lf.maxDelay, Levels: lf.levels, Radix: lf.radix,
		QueueType: lf.queueType, Targets: lf.targets, Strategy: lf.strategy, Below: lf.below, Given: given,
	}
}

// atMostOnce parses --dead-letter-strategy and --at-most-once-below.
func (lf *ladderFlags) atMostOnce() (amo bool, below time.Duration, err error) {
	return lf.args().DeadLetterStrategy()
}

// shapeGiven reports whether the flags describe the ladder's shape
// themselves (ops.LadderArgs.ShapeGiven).
func (lf *ladderFlags) shapeGiven() bool { return lf.args().ShapeGiven() }

// unreadShape refuses to route messages into a ladder whose shape neither
// the broker nor the flags say (ops.UnreadShapeError).
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
	return ops.UnreadShapeError(doing, e.opts.ladder.name, r.mgmtErr)
}

// unreadShapeOf words an ops.ShapeUnknownError as unreadShape does, the
// broker tried over AMQP first; any other error is returned as it is.
func (e *env) unreadShapeOf(ctx context.Context, err error, doing string) error {
	var su *ops.ShapeUnknownError
	if errors.As(err, &su) {
		return e.unreadShape(ctx, resolved{mgmtErr: su.Err}, doing)
	}
	return err
}

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

// check catches what is wrong with the flags whatever the broker holds
// (ops.LadderArgs.Check).
func (lf *ladderFlags) check() error { return lf.args().Check() }

// named is the ladder --ladder names, or the fixed-name ladder --layout
// names; "" when neither names one (ops.LadderArgs.Named).
func (lf *ladderFlags) named() string { return lf.args().Named() }

// query asks for the ladder the flags name (ops.LadderArgs.Query).
func (lf *ladderFlags) query() ops.LadderQuery { return lf.args().Query() }

// namedExplicitly reports whether the flags name one ladder on purpose.
func (lf *ladderFlags) namedExplicitly() bool { return lf.args().NamedExplicitly() }

// fromFlags builds and validates the ladder the flags describe, over the
// ladder of that name found on the broker when there is one.
func (lf *ladderFlags) fromFlags(vhost string, base *topology.Ladder) (topology.Ladder, error) {
	return lf.args().Ladder(vhost, base)
}

// spec is the flags as an ops.LadderSpec.
func (lf *ladderFlags) spec() (ops.LadderSpec, error) { return lf.args().Spec() }

// resolved is a ladder plus where its parameters came from and, when the
// management API answered, the broker's snapshot of its vhost.
type resolved struct {
	ladder     topology.Ladder
	snap       *topology.Snapshot
	discovered bool             // the ladder exists on the broker
	existing   *topology.Ladder // as found there, nil unless discovered
	mgmtErr    error            // why there is no snapshot
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
	r.ladder, r.discovered, r.existing, r.layoutNote = rl.Ladder, rl.Found, rl.FoundLadder(), rl.LayoutNote
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

// noLadder says that r's ladder is not on the broker.
func (lf *ladderFlags) noLadder(r resolved) string { return lf.args().NotFound(r.ladder) }

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

// names is --ladder's name as a scope names it (ops.LadderArgs.Names).
func (lf *ladderFlags) names(vhost string) []string { return lf.args().Names(vhost) }

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
	p, warnings := ops.ShownPlan(r.ladder, r.snap, func() (topology.Version, error) { return e.clients().brokerVersion(ctx) })
	for _, w := range warnings {
		fmt.Fprintln(e.Err, "rungs: warning: "+oneLine(broker.Redact(w)))
	}
	return p
}
