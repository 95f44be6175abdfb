package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

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
}

// shapeFlags are the flags that change a ladder's plan.
var shapeFlags = []string{"layout", "unit", "max-delay", "levels", "radix", "queue-type"}

func (lf *ladderFlags) register(f *pflag.FlagSet) {
	lf.set = f
	f.StringVar(&lf.name, "ladder", topology.DefaultName, "ladder name (the prefix of its queues and exchanges)")
	f.StringVar(&lf.layout, "layout", topology.DefaultLayout, "ladder layout: "+strings.Join(topology.LayoutNames(), ", "))
	f.StringVar(&lf.unit, "unit", "1s", "resolution: the lowest rung's TTL (1ms and up)")
	f.StringVar(&lf.maxDelay, "max-delay", "", "longest delay the ladder must hold (default: 28 levels)")
	f.IntVar(&lf.levels, "levels", 0, "number of digit levels (instead of --max-delay)")
	f.IntVar(&lf.radix, "radix", topology.DefaultRadix, "digit base: 2, 4, 8 or 16 (prefix layout)")
	f.StringVar(&lf.queueType, "queue-type", string(topology.Classic), "rung queue type: classic or quorum")
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

// fromFlags builds and validates the ladder the flags describe.
func (lf *ladderFlags) fromFlags(vhost string) (topology.Ladder, error) {
	unit, err := topology.ParseDelay(lf.unit)
	if err != nil {
		return topology.Ladder{}, usageErr("--unit: %v", err)
	}
	l := topology.Ladder{
		Name: lf.name, Vhost: vhost, Layout: lf.layout, Unit: unit,
		Levels: lf.levels, Radix: lf.radix, QueueType: topology.QueueType(lf.queueType),
		Targets: lf.targets,
	}
	if l.Layout == "nsb" && !lf.set.Lookup("unit").Changed {
		l.Unit = time.Second
	}
	if lf.maxDelay != "" {
		if lf.levels != 0 {
			return l, usageErr("--max-delay and --levels both set; give one")
		}
		max, err := topology.ParseDelay(lf.maxDelay)
		if err != nil {
			return l, usageErr("--max-delay: %v", err)
		}
		if l.Levels, err = topology.LevelsFor(max, l.Unit, l.Radix); err != nil {
			return l, usageErr("--max-delay: %v", err)
		}
	}
	n, err := l.Normalize()
	if err != nil {
		return l, usageErr("%v", err)
	}
	return n, nil
}

// resolved is a ladder plus where its parameters came from and, when the
// management API answered, the broker's snapshot of its vhost.
type resolved struct {
	ladder     topology.Ladder
	snap       *topology.Snapshot
	discovered bool  // the ladder exists on the broker
	mgmtErr    error // why there is no snapshot
}

// resolveLadder combines flags and discovery: a ladder found on the broker
// under the flag's name supplies every shape flag not given explicitly.
func (e *env) resolveLadder(ctx context.Context) (resolved, error) {
	lf := &e.opts.ladder
	flagLadder, err := lf.fromFlags(e.vhost())
	if err != nil {
		return resolved{}, err
	}
	r := resolved{ladder: flagLadder}
	snap, err := e.snapshot(ctx)
	if err != nil {
		r.mgmtErr = err
		return r, nil
	}
	r.snap = &snap
	for _, f := range topology.Discover(snap) {
		if f.Ladder.Name != flagLadder.Name {
			continue
		}
		if lf.set.Lookup("layout").Changed && f.Ladder.Layout != flagLadder.Layout {
			continue
		}
		r.discovered = true
		if !lf.changed() {
			f.Ladder.Targets = mergeTargets(f.Ladder.Targets, lf.targets)
			r.ladder = f.Ladder
		}
		break
	}
	return r, nil
}

func mergeTargets(a, b []string) []string {
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

// snapshot reads the vhost through the management API.
func (e *env) snapshot(ctx context.Context) (topology.Snapshot, error) {
	m, err := e.management()
	if err != nil {
		return topology.Snapshot{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	return m.Snapshot(ctx, e.vhost())
}

// describe is the one-line summary of a ladder's shape.
func describe(l topology.Ladder) string {
	radix := ""
	if l.Radix != 2 {
		radix = fmt.Sprintf(", radix %d", l.Radix)
	}
	return fmt.Sprintf("%s ladder %q in vhost %s: %d levels of %s%s, max delay %s, %s queues",
		l.Layout, l.Name, l.Vhost, l.Levels, topology.FormatDelay(l.Unit), radix, topology.FormatDelay(l.MaxDelay()), l.QueueType)
}
