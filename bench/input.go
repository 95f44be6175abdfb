package bench

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// Input is a run of rungs bench as the operator gives it: the options as
// typed and the names of the flags given (Given). A flag not given keeps
// the preset's value, DefaultOptions or, with Smoke, SmokeOptions; Set
// holds the typed values of the options that need no parsing. Drain (the
// drain phase's storm size) and the fields after it are the drain phase's.
type Input struct {
	Set                    Options
	Smoke                  bool
	Duration, Warmup, Unit string
	Loads                  []string
	Given                  []string

	Drain              int
	Record, DrainDelay string
	Inflow, InflowFor  string
	Capacity           float64

	// Bridge is the bridge phase's messages a round (--bridge).
	Bridge int
}

// drainOnly are the flags only the drain phase reads; the ladder's
// strategy flag among them, as the drain fills the default ladder.
var drainOnly = []string{"record", "drain-delay", "dead-letter-strategy", "capacity", "save"}

// IsBridge says the operator asked for the bridge phase (--bridge).
func (in Input) IsBridge() bool { return in.given("bridge") }

// BridgeOptions are the bridge phase's options as the input gives them:
// its messages a round, --rounds (3 unless given) and --broker-pid. The
// drain's flags are refused with it: it is a run of its own.
func (in Input) BridgeOptions() (BridgeOptions, error) {
	if in.IsDrain() {
		return BridgeOptions{}, inputErr("--bridge and --drain are runs of their own: give one")
	}
	for _, name := range drainOnly {
		if in.given(name) {
			return BridgeOptions{}, inputErr("--%s goes with --drain", name)
		}
	}
	if in.Inflow != "" {
		return BridgeOptions{}, inputErr("--inflow goes with --drain")
	}
	if in.Bridge < 1 {
		return BridgeOptions{}, inputErr("--bridge %d: want at least 1 message a round", in.Bridge)
	}
	o := BridgeOptions{N: in.Bridge, Rounds: 3, BrokerPID: in.Set.BrokerPID}
	if in.given("rounds") {
		if in.Set.Rounds < 1 {
			return BridgeOptions{}, inputErr("--rounds %d: want at least 1", in.Set.Rounds)
		}
		o.Rounds = in.Set.Rounds
	}
	return o, nil
}

// IsDrain says the operator asked for the drain phase (--drain).
func (in Input) IsDrain() bool { return in.given("drain") }

func (in Input) given(name string) bool { return slices.Contains(in.Given, name) }

// Options are the run's options: the preset with each flag given taken
// from the input. A refusal is one line naming the flag, an
// ops.InputError.
func (in Input) Options() (Options, error) {
	for _, name := range drainOnly {
		if in.given(name) {
			return Options{}, inputErr("--%s goes with --drain", name)
		}
	}
	if in.Inflow != "" {
		return Options{}, inputErr("--inflow goes with --drain")
	}
	o := DefaultOptions()
	if in.Smoke {
		o = SmokeOptions()
	}
	for _, s := range []struct {
		name, v string
		dst     *time.Duration
	}{{"duration", in.Duration, &o.Duration}, {"warmup", in.Warmup, &o.Warmup}, {"unit", in.Unit, &o.Unit}} {
		if !in.given(s.name) {
			continue
		}
		d, err := topology.ParseDelay(s.v)
		if err != nil {
			return o, inputErr("--%s: %v", s.name, err)
		}
		*s.dst = d
	}
	o = o.with(in.Set, in.Given)
	if in.given("loads") {
		loads, err := ParseLoads(in.Loads)
		if err != nil {
			return o, err
		}
		o.Loads = loads
	}
	if err := o.checkInput(); err != nil {
		return o, err
	}
	if err := o.Check(); err != nil {
		return o, &ops.InputError{Err: err}
	}
	return o, nil
}

// with is o with the fields of set whose flags are named in given.
func (o Options) with(set Options, given []string) Options {
	for _, name := range given {
		switch name {
		case "levels":
			o.Levels = set.Levels
		case "delay-bits":
			o.DelayBits = set.DelayBits
		case "size":
			o.Size = set.Size
		case "persistent":
			o.Persistent = set.Persistent
		case "layouts":
			o.Layouts = set.Layouts
		case "radix":
			o.Radixes = set.Radixes
		case "rounds":
			o.Rounds = set.Rounds
		case "topic-reference":
			o.TopicReference = set.TopicReference
		case "floor-reference":
			o.FloorReference = set.FloorReference
		case "quorum":
			o.Quorum = set.Quorum
		case "in-flight":
			o.InFlight = set.InFlight
		case "seed":
			o.Seed = set.Seed
		case "phases":
			o.Phases = set.Phases
		case "broker-pid":
			o.BrokerPID = set.BrokerPID
		}
	}
	return o
}

// ParseLoads reads --loads: rates a second, or max for the limit (0).
func ParseLoads(ss []string) ([]float64, error) {
	var loads []float64
	for _, s := range ss {
		if strings.EqualFold(s, "max") {
			loads = append(loads, 0)
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 {
			return nil, inputErr("--loads: %q is not a positive rate or max", s)
		}
		loads = append(loads, v)
	}
	return loads, nil
}

// checkInput refuses options no run can use, before Check's own.
func (o Options) checkInput() error {
	switch {
	case o.Duration <= 0:
		return inputErr("--duration must be positive")
	case o.Rounds < 1:
		return inputErr("--rounds must be at least 1")
	case o.Size < 0:
		return inputErr("--size must not be negative")
	}
	for _, r := range o.Radixes {
		if !slices.Contains([]int{2, 4, 8, 16}, r) {
			return inputErr("--radix %d: want 2, 4, 8 or 16", r)
		}
	}
	return nil
}

// DrainOptions are the drain phase's options as the input gives them,
// the ladder left for the caller to fill. A --record path is checked
// before the broker is met, so that one that cannot be written fails at
// once, not after the storm; the caller creates the file once the run
// begins.
func (in Input) DrainOptions() (DrainOptions, error) {
	o := DefaultDrainOptions()
	if in.Drain < 1 {
		return o, inputErr("--drain %d: want at least 1 message", in.Drain)
	}
	if in.Record != "" {
		if st, err := os.Stat(filepath.Dir(in.Record)); err != nil || !st.IsDir() {
			return o, inputErr("--record %s: no such directory", in.Record)
		}
	}
	delay, err := time.ParseDuration(in.DrainDelay)
	if err != nil || delay <= 0 {
		return o, inputErr("--drain-delay %q: want a duration such as 20s", in.DrainDelay)
	}
	if in.Capacity < 0 {
		return o, inputErr("--capacity %v: want a rate in hops/s above 0", in.Capacity)
	}
	o.N, o.Delay, o.Capacity, o.BrokerPID = in.Drain, delay, in.Capacity, in.Set.BrokerPID
	if in.Inflow == "" {
		return o, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(in.Inflow, "/s"), 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) {
		return o, inputErr("--inflow %s: want a rate a second above 0, e.g. 1500/s", in.Inflow)
	}
	d, err := time.ParseDuration(in.InflowFor)
	if err != nil || d <= 0 {
		return o, inputErr("--inflow-for %s: want a duration above 0, e.g. 4m", in.InflowFor)
	}
	o.Inflow, o.InflowFor = v, d
	return o, nil
}

// inputErr is a refused flag: bad input to the front end.
func inputErr(format string, a ...any) error {
	return &ops.InputError{Err: fmt.Errorf(format, a...)}
}
