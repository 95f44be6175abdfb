package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

type benchFlags struct {
	duration, warmup, unit string
	levels, delayBits      int
	size, rounds, queues   int
	inFlight               int
	persistent, smoke      bool
	topicRef, floorRef     bool
	quorum                 bool
	layouts                []string
	radixes                []int
	loads                  []string
	markdown               string
	seed                   uint64
	scale                  int
	scaleDelays            string
	beside                 []int
	scan                   int
}

func (e *env) benchCommand() *cobra.Command {
	var bf benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure ladders against the broker's own limit (throughput, hops, lateness, console cost)",
		Long: `bench runs, in one go and in a vhost of its own (removed afterwards):

  1. the limit: a plain queue's publish→consume throughput, with pipelined
     confirms and the same message size and persistence;
  2. ladder throughput at saturation for each layout (radix 2), the
     prefix and direct layouts in every --radix, and the shape of the ladder
     ` + "`rungs apply`" + ` declares by default on this broker (its layout, radix and
     queue type: quorum, and prefix before 3.13) and the same shape in the
     other layout (direct beside prefix), compared direct ÷ prefix; a design
     unsafe on this broker's version is labelled, or not measured where it
     cannot deliver (direct on 3.13.0 to 3.13.2); with the mean hops measured
     on arrival and the ratio to limit ÷ (1 + mean hops), the most a
     hop-based design can do; --rounds repeats 1 and 2, and each ratio uses
     its own round's limit;
  3. punctuality: lateness (arrival − publish − delay) at each offered load;
     "max" is the saturation run;
  4. console cost: management requests and bytes for one refresh and one
     full snapshot of a vhost of --queues queues, discovery and rendering.

Delays are uniform over [0, 2^--delay-bits) units, so a phase ends in
seconds even on a 24-level ladder (BENCHMARKS.md explains the method).
The report is Markdown, or JSON with --json. The exit status is 1 if any
message was lost, duplicated or early; missed targets are reported, not
failed: timings depend on the machine.

--scale N runs the scale phase instead: N persistent messages into the
ladder ` + "`rungs apply`" + ` would declare with the same ladder flags (by default
the default ladder of this broker's version), each checked on arrival
(delivered once, never before its due time), with the publish rate against
a plain queue's, the broker's memory, lateness, what ` + "`rungs status`" + ` and a
console refresh cost while it drains, and a replay of N dead letters with
` + "`rungs replay`" + `, killed with SIGKILL a third of the way.

--beside N,M runs the beside phase instead: the default ladder, 50
messages in flight, alone in a vhost and then beside N (then M) other
queues, each vhost removed after it is measured; it reports the median of 5
` + "`rungs status --ladder`" + ` runs, their ratio to the ladder alone, requests,
response bytes and peak RSS, and what the console's observer reads.`,
		Example: `  rungs bench --markdown bench.md
  rungs bench --duration 5s --rounds 1 --layouts prefix --radix 2,16
  rungs bench --smoke --json
  rungs bench --scale 1000000 --scale-delays 5s..1m   # a million in flight in the default ladder
  rungs bench --beside 10000,50000                    # one ladder beside 50,000 other queues`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return e.runBench(cmd, bf) },
	}
	d := bench.DefaultOptions()
	f := cmd.Flags()
	f.StringVar(&bf.duration, "duration", d.Duration.String(), "measured window of each phase")
	f.StringVar(&bf.warmup, "warmup", d.Warmup.String(), "ramp before each window (throughput phases add the longest delay)")
	f.StringVar(&bf.unit, "unit", topology.FormatDelay(d.Unit), "ladder resolution (the lowest rung's TTL)")
	f.IntVar(&bf.levels, "levels", d.Levels, "binary levels; radix r ladders hold the same range in fewer")
	f.IntVar(&bf.delayBits, "delay-bits", d.DelayBits, "delays are uniform over [0, 2^N) units")
	f.IntVar(&bf.size, "size", d.Size, "message body bytes")
	f.BoolVar(&bf.persistent, "persistent", d.Persistent, "persistent delivery mode")
	f.StringSliceVar(&bf.layouts, "layouts", d.Layouts, "layouts to measure in radix 2: prefix, direct, suffix")
	f.IntSliceVar(&bf.radixes, "radix", d.Radixes, "radixes to measure with the prefix and direct layouts: 2, 4, 8, 16")
	f.StringSliceVar(&bf.loads, "loads", []string{"100", "1000", "max"}, "offered loads in msg/s for punctuality; max is saturation")
	f.IntVar(&bf.rounds, "rounds", d.Rounds, "repetitions of the limit and throughput phases")
	f.BoolVar(&bf.topicRef, "topic-reference", d.TopicReference, "also measure the ladder's keys through a topic exchange with no delay (what one routed transfer costs)")
	f.BoolVar(&bf.quorum, "quorum", d.Quorum, "also measure the binary ladder with quorum rungs (what at-least-once dead-lettering costs)")
	f.BoolVar(&bf.floorRef, "floor-reference", d.FloorReference, "also measure a chain of TTL queues dead-lettering with no routing (the cheapest a hop can be)")
	f.IntVar(&bf.queues, "queues", d.Queues, "queues in the console-cost vhost")
	f.IntVar(&bf.inFlight, "in-flight", d.InFlight, "cap on undelivered messages of the limit phase (ladders add rate × mean delay)")
	f.Uint64Var(&bf.seed, "seed", d.Seed, "seed of the drawn delays")
	f.StringVar(&bf.markdown, "markdown", "", "also write the Markdown report to FILE")
	f.BoolVar(&bf.smoke, "smoke", false, "a few hundred messages per phase: checks correctness, measures nothing")
	sd := bench.DefaultScaleOptions()
	f.IntVar(&bf.scale, "scale", 0, "run the scale phase with N messages in the default ladder instead (see above)")
	f.IntVar(&bf.scan, "scan", 0, "run the scan phase instead: rungs scheduled over N messages in the default ladder (see docs/scheduled.md)")
	f.IntSliceVar(&bf.beside, "beside", nil, "run the beside phase instead: status of the default ladder alone and beside each N other queues (e.g. 10000,50000)")
	f.StringVar(&bf.scaleDelays, "scale-delays", topology.FormatDelay(sd.MinDelay)+".."+topology.FormatDelay(sd.MaxDelay), "the scale phase's delays, MIN..MAX, drawn uniformly in whole units of the ladder")
	return cmd
}

// options turns the flags into bench options; explicit flags override the
// smoke preset.
func (bf benchFlags) options(cmd *cobra.Command) (bench.Options, error) {
	o := bench.DefaultOptions()
	if bf.smoke {
		o = bench.SmokeOptions()
	}
	changed := func(name string) bool { return cmd.Flags().Changed(name) }
	dur := func(name, v string, dst *time.Duration) error {
		if !changed(name) {
			return nil
		}
		d, err := topology.ParseDelay(v)
		if err != nil {
			return usageErr("--%s: %v", name, err)
		}
		*dst = d
		return nil
	}
	if err := dur("duration", bf.duration, &o.Duration); err != nil {
		return o, err
	}
	if err := dur("warmup", bf.warmup, &o.Warmup); err != nil {
		return o, err
	}
	if err := dur("unit", bf.unit, &o.Unit); err != nil {
		return o, err
	}
	if changed("levels") {
		o.Levels = bf.levels
	}
	if changed("delay-bits") {
		o.DelayBits = bf.delayBits
	}
	if changed("size") {
		o.Size = bf.size
	}
	if changed("persistent") {
		o.Persistent = bf.persistent
	}
	if changed("layouts") {
		o.Layouts = bf.layouts
	}
	if changed("radix") {
		o.Radixes = bf.radixes
	}
	if changed("rounds") {
		o.Rounds = bf.rounds
	}
	if changed("topic-reference") {
		o.TopicReference = bf.topicRef
	}
	if changed("floor-reference") {
		o.FloorReference = bf.floorRef
	}
	if changed("quorum") {
		o.Quorum = bf.quorum
	}
	if changed("queues") {
		o.Queues = bf.queues
	}
	if changed("in-flight") {
		o.InFlight = bf.inFlight
	}
	if changed("seed") {
		o.Seed = bf.seed
	}
	if changed("loads") {
		o.Loads = nil
		for _, s := range bf.loads {
			if strings.EqualFold(s, "max") {
				o.Loads = append(o.Loads, 0)
				continue
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v <= 0 {
				return o, usageErr("--loads: %q is not a positive rate or max", s)
			}
			o.Loads = append(o.Loads, v)
		}
	}
	switch {
	case o.Duration <= 0:
		return o, usageErr("--duration must be positive")
	case o.Rounds < 1:
		return o, usageErr("--rounds must be at least 1")
	case o.Queues < 1:
		return o, usageErr("--queues must be at least 1")
	case o.Size < 0:
		return o, usageErr("--size must not be negative")
	}
	for _, r := range o.Radixes {
		if r != 2 && r != 4 && r != 8 && r != 16 {
			return o, usageErr("--radix %d: want 2, 4, 8 or 16", r)
		}
	}
	return o, nil
}

func (e *env) runBench(cmd *cobra.Command, bf benchFlags) error {
	if cmd.Flags().Changed("scale") {
		return e.runScale(cmd, bf)
	}
	if cmd.Flags().Changed("beside") {
		return e.runBeside(cmd, bf)
	}
	if cmd.Flags().Changed("scan") {
		return e.runScanBench(cmd, bf)
	}
	o, err := bf.options(cmd)
	if err != nil {
		return err
	}
	m, err := e.benchBroker()
	if err != nil {
		return err
	}
	def, err := e.defaultLadder(cmd.Context())
	if err != nil {
		return err
	}
	o.Default = &def
	o.Log = e.Err
	o.Render = renderLadderView
	rep, err := bench.Run(cmd.Context(), e.config(), m, o)
	if err != nil {
		if errorsIsOptions(err) {
			return usageErr("%v", err)
		}
		return err
	}
	return e.printBench(bf, rep.Markdown(), rep, rep.Problems)
}

// benchBroker is the management client of a benchmark, which writes.
func (e *env) benchBroker() (*broker.Management, error) {
	if err := e.refuseReadOnly("bench"); err != nil {
		return nil, err
	}
	return e.management()
}

// defaultLadder is the ladder `rungs apply` declares with the same ladder
// flags on this broker: by default its version's default ladder (queue
// type, layout, radix), through apply's own path, so that the benchmark
// never decides it a second time.
func (e *env) defaultLadder(ctx context.Context) (topology.Ladder, error) {
	lf := &e.opts.ladder
	if err := lf.check(); err != nil {
		return topology.Ladder{}, err
	}
	l, err := lf.fromFlags(e.vhost(), nil)
	if err != nil {
		return l, err
	}
	note, err := e.newLadderLayout(ctx, &l)
	if err != nil {
		return l, err
	}
	e.printLayoutNote(resolved{layoutNote: note})
	if _, err := e.refuseBrokenBCC(ctx, l); err != nil {
		return l, err
	}
	return l, nil
}

// scaleOptions reads --scale and --scale-delays.
func (bf benchFlags) scaleOptions() (bench.ScaleOptions, error) {
	o := bench.DefaultScaleOptions()
	if bf.scale < 1 {
		return o, usageErr("--scale %d: want at least 1 message", bf.scale)
	}
	o.N = bf.scale
	lo, hi, ok := strings.Cut(bf.scaleDelays, "..")
	if !ok {
		return o, usageErr("--scale-delays %q: want MIN..MAX, e.g. 5s..1m", bf.scaleDelays)
	}
	var err error
	if o.MinDelay, err = topology.ParseDelay(lo); err != nil {
		return o, usageErr("--scale-delays: %v", err)
	}
	if o.MaxDelay, err = topology.ParseDelay(hi); err != nil {
		return o, usageErr("--scale-delays: %v", err)
	}
	if o.MinDelay <= 0 || o.MaxDelay < o.MinDelay {
		return o, usageErr("--scale-delays %q: want 0 < MIN ≤ MAX", bf.scaleDelays)
	}
	if bf.size >= 0 {
		o.Size = bf.size
	}
	o.Seed = bf.seed
	return o, nil
}

// runScale runs the scale phase (--scale) and prints its report.
func (e *env) runScale(cmd *cobra.Command, bf benchFlags) error {
	o, err := bf.scaleOptions()
	if err != nil {
		return err
	}
	return e.runPhase(cmd, bf, func(m *broker.Management, l topology.Ladder, binary string) (string, any, []string, error) {
		o.Ladder, o.Binary, o.Log = l, binary, e.Err
		rep, err := bench.RunScale(cmd.Context(), e.config(), m, o)
		return rep.Markdown(), rep, rep.Problems, err
	})
}

// runBeside runs the beside phase (--beside) and prints its report.
func (e *env) runBeside(cmd *cobra.Command, bf benchFlags) error {
	o := bench.DefaultBesideOptions()
	o.Others = bf.beside
	return e.runPhase(cmd, bf, func(m *broker.Management, l topology.Ladder, binary string) (string, any, []string, error) {
		o.Ladder, o.Binary, o.Log = l, binary, e.Err
		rep, err := bench.RunBeside(cmd.Context(), e.config(), m, o)
		return rep.Markdown(), rep, rep.Problems, err
	})
}

// runPhase runs a phase of the default ladder that measures rungs
// commands as users run them, this binary, and prints its report.
func (e *env) runPhase(cmd *cobra.Command, bf benchFlags, run func(m *broker.Management, l topology.Ladder, binary string) (md string, rep any, problems []string, err error)) error {
	m, err := e.benchBroker()
	if err != nil {
		return err
	}
	l, err := e.defaultLadder(cmd.Context())
	if err != nil {
		return err
	}
	binary, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the rungs executable: %w", err)
	}
	md, rep, problems, err := run(m, l, binary)
	if err != nil {
		if errorsIsOptions(err) {
			return usageErr("%v", err)
		}
		return err
	}
	return e.printBench(bf, md, rep, problems)
}

// printBench writes a report as Markdown (and to --markdown) or JSON, and
// fails when the run found problems.
func (e *env) printBench(bf benchFlags, md string, rep any, problems []string) error {
	if bf.markdown != "" {
		if err := os.WriteFile(bf.markdown, []byte(md), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", bf.markdown, err)
		}
	}
	if e.opts.json {
		if err := writeJSON(e.Out, rep); err != nil {
			return err
		}
	} else {
		fmt.Fprint(e.Out, md)
	}
	if n := len(problems); n > 0 {
		return fmt.Errorf("benchmark found %s, first: %s", topology.Counted(n, "problem", "problems"), problems[0])
	}
	return nil
}

// renderLadderView is what the console does with a ladder on every
// refresh: build its rows from the snapshot, then render the view.
func renderLadderView(f topology.Found, snap topology.Snapshot) func(w, h int) string {
	lr := health.NewReport([]topology.Found{f}, snap, health.Watch{}).Ladders[0]
	st := ui.NewStyles(true)
	return func(w, h int) string {
		return ui.LadderView(ui.LadderState{Found: f, Rows: lr.Rows, Totals: lr.Totals, Forecast: lr.Forecast}, st, w, h)
	}
}

func errorsIsOptions(err error) bool { return errors.Is(err, bench.ErrOptions) }
