package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// benchFlags are bench's flags: the run's input, and what to do with its
// report.
type benchFlags struct {
	in       bench.Input
	markdown string
	save     bool
}

func (e *env) benchCommand() *cobra.Command {
	var bf benchFlags
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure ladders against the broker's own limit (throughput, hops, lateness)",
		Long:  benchLong,
		Example: `  rungs bench --markdown bench.md
  rungs bench --duration 5s --rounds 1 --layouts prefix --radix 2,16
  rungs bench --smoke --json
  rungs bench --phases punctuality --loads 100,1000 --layouts direct --radix 16
  rungs bench --drain 200000          # a retry storm: how fast the default ladder drains it
  rungs bench --bridge 20000          # rungs bridge's intake rate against the broker's limit`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return e.runBench(cmd, bf) },
	}
	d := bench.DefaultOptions()
	f := cmd.Flags()
	f.StringVar(&bf.in.Duration, "duration", d.Duration.String(), "measured window of each phase")
	f.StringVar(&bf.in.Warmup, "warmup", d.Warmup.String(), "ramp before each window (throughput phases add the longest delay)")
	f.StringVar(&bf.in.Unit, "unit", topology.FormatDelay(d.Unit), "ladder resolution (the lowest rung's TTL)")
	f.IntVar(&bf.in.Set.Levels, "levels", d.Levels, "binary levels; radix r ladders hold the same range in fewer")
	f.IntVar(&bf.in.Set.DelayBits, "delay-bits", d.DelayBits, "delays are uniform over [0, 2^N) units")
	f.IntVar(&bf.in.Set.Size, "size", d.Size, "message body bytes")
	f.BoolVar(&bf.in.Set.Persistent, "persistent", d.Persistent, "persistent delivery mode")
	f.StringSliceVar(&bf.in.Set.Layouts, "layouts", d.Layouts, "layouts to measure in radix 2: prefix, direct, suffix")
	f.IntSliceVar(&bf.in.Set.Radixes, "radix", d.Radixes, "radixes to measure with the prefix and direct layouts: 2, 4, 8, 16")
	f.StringSliceVar(&bf.in.Loads, "loads", []string{"100", "1000", "max"}, "offered loads in msg/s for punctuality; max is saturation")
	f.IntVar(&bf.in.Set.Rounds, "rounds", d.Rounds, "repetitions of the limit and throughput phases")
	f.BoolVar(&bf.in.Set.TopicReference, "topic-reference", d.TopicReference, "also measure the ladder's keys through a topic exchange with no delay (what one routed transfer costs)")
	f.BoolVar(&bf.in.Set.Quorum, "quorum", d.Quorum, "also measure the binary ladder with quorum rungs (what at-least-once dead-lettering costs)")
	f.BoolVar(&bf.in.Set.FloorReference, "floor-reference", d.FloorReference, "also measure a chain of TTL queues dead-lettering with no routing (the cheapest a hop can be)")
	f.IntVar(&bf.in.Set.InFlight, "in-flight", d.InFlight, "cap on undelivered messages of the limit phase (ladders add rate × mean delay)")
	f.Uint64Var(&bf.in.Set.Seed, "seed", d.Seed, "seed of the drawn delays")
	f.StringVar(&bf.markdown, "markdown", "", "also write the Markdown report to FILE")
	f.BoolVar(&bf.in.Smoke, "smoke", false, "a few hundred messages per phase: checks correctness, measures nothing")
	f.StringSliceVar(&bf.in.Set.Phases, "phases", bench.PhaseNames(), "phases to run, of "+strings.Join(bench.PhaseNames(), ", "))
	f.StringVar(&bf.in.Record, "record", "", "with --drain: also write every reading of the ladder to FILE (JSON), to replay the judgement on (docs/benchmarks/storms.md)")
	f.StringVar(&bf.in.Inflow, "inflow", "", "with --drain: also publish the same messages at a steady RATE/s from the storm's start, as retrying clients do (e.g. 1500/s)")
	f.StringVar(&bf.in.InflowFor, "inflow-for", "4m", "with --inflow: for how long")
	f.StringVar(&bf.in.DrainDelay, "drain-delay", bench.DefaultDrainOptions().Delay.String(), "with --drain: every message's delay")
	e.opts.ladder.registerStrategy(f, false)
	f.Float64Var(&bf.in.Capacity, "capacity", 0, "with --drain: a drain capacity measured before, in dead-letter hops/s, to forecast the burst's lateness from")
	f.BoolVar(&bf.save, "save", false, "with --drain: save the measured drain capacity on the broker (global parameter "+broker.CapacityParameter+"), where publish, the console and the exporter read it")
	f.IntVar(&bf.in.Set.BrokerPID, "broker-pid", 0, "the broker's process on this machine, whose CPU time per message the run reports (default: the pid the management API reports, for a broker on loopback; -1: none)")
	f.IntVar(&bf.in.Bridge, "bridge", 0, "run the bridge phase instead: N messages a round published with x-delay to a bridge, its intake rate against the broker's limit, with the broker's CPU per message (docs/bridge.md)")
	f.IntVar(&bf.in.Drain, "drain", 0, "run the drain phase instead: a retry storm of N messages of 20s in the default ladder, its drain rate against the broker's limit (docs/benchmarks/storms.md)")
	return cmd
}

func (e *env) runBench(cmd *cobra.Command, bf benchFlags) error {
	cmd.Flags().Visit(func(f *pflag.Flag) { bf.in.Given = append(bf.in.Given, f.Name) })
	if bf.in.IsBridge() {
		return e.runBenchBridge(cmd, bf)
	}
	if bf.in.IsDrain() {
		return e.runDrain(cmd, bf)
	}
	o, err := bf.in.Options()
	if err != nil {
		return err
	}
	m, err := e.clients().benchBroker()
	if err != nil {
		return err
	}
	def, err := e.opts.ladder.defaultLadder(e.view(), e.vhost(), func() (topology.Version, error) { return e.clients().brokerVersion(cmd.Context()) })
	if err != nil {
		return err
	}
	o.Default = &def
	o.Log = e.Err
	rep, err := bench.Run(cmd.Context(), e.config(), m, o)
	if err != nil {
		return err
	}
	return e.view().printBench(bf, rep.Markdown(), rep, rep.Problems)
}

// benchBroker is the management client of a benchmark, which writes.
func (c *clients) benchBroker() (*broker.Management, error) {
	if err := ops.RefuseReadOnly(c.cfg, "bench"); err != nil {
		return nil, err
	}
	return c.management()
}

// defaultLadder is the ladder `rungs apply` declares with the same ladder
// flags on a broker of this version: by default the version's default
// ladder (queue type, layout, radix), through apply's own path, so that the
// benchmark never decides it a second time.
func (lf *ladderFlags) defaultLadder(v view, vhost string, version func() (topology.Version, error)) (topology.Ladder, error) {
	if err := lf.check(); err != nil {
		return topology.Ladder{}, err
	}
	l, err := lf.fromFlags(vhost, nil)
	if err != nil {
		return l, err
	}
	note, err := lf.newLadderLayout(vhost, &l, version)
	if err != nil {
		return l, err
	}
	v.printLayoutNote(resolved{layoutNote: note})
	// A release that loses keys on a retry is said; an unread release is
	// not, since the run then fails on the broker with one line of its own.
	var verr error
	warning, err := refuseBrokenBCC(l, func() (topology.Version, error) {
		ver, err := version()
		verr = err
		return ver, err
	})
	if err != nil {
		return l, err
	}
	if warning != "" && verr == nil {
		fmt.Fprintln(v.Err, warning)
	}
	return l, nil
}

// printBench writes a report as Markdown (and to --markdown) or JSON, and
// fails when the run found problems.
func (v view) printBench(bf benchFlags, md string, rep any, problems []string) error {
	if bf.markdown != "" {
		if err := os.WriteFile(bf.markdown, []byte(md), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", bf.markdown, err)
		}
	}
	if err := v.emit(rep, md); err != nil {
		return err
	}
	return ops.BenchProblems(problems)
}

const benchLong = `bench runs, in one go and in a vhost of its own (removed afterwards):

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
     "max" is the saturation run.

--phases runs only the phases named, in the order above (punctuality's
"max" row is the throughput phase's, so it is empty without it).

--drain N runs the drain phase instead: a retry storm of N messages of
the same delay in the default ladder, the rate it drains at while a
backlog waits (against the broker's limit measured in the same run), and
how well the first forecast, 30s after the publishing settled, predicted
the finish (docs/benchmarks/storms.md); --record FILE also writes every
reading. --inflow 1500/s keeps publishing the same messages at a steady
rate for --inflow-for (4m) from the storm's start, as retrying clients do.
A consumer takes every arrival off the target, timed from the millisecond
each message was sent: lateness p50/p99/max, early, lost and duplicated
messages, the broker's memory peak and CPU, the load average.
--drain-delay sets the one delay; --capacity H (dead-letter hops/s, from
an earlier drain) states the burst's forecast lateness before publishing,
to compare with the measured p99; --save keeps the capacity measured on
the broker (global parameter rungs-drain-capacity, per queue type), where
rungs publish and the console's publish read it to say how late a burst
will arrive before sending it, and the exporter exports it;
--dead-letter-strategy at-most-once declares the quorum rungs as
rungs apply does with that flag, without confirms between rungs, to
price that trade (a message is lost if the next rung cannot take it
when it expires).

--bridge N runs the bridge phase instead: the broker's limit (publish and
consume through a quorum queue) and a rungs bridge's intake rate (the same
producers publishing N messages with x-delay 1h to its intake while it
schedules each into the default ladder), in alternating rounds (--rounds,
3 by default), medians and their ratio; for a broker on this machine also
the broker's CPU per message in each, and for the bridge's copies alone
(docs/bridge.md).

Delays are uniform over [0, 2^--delay-bits) units, so a phase ends in
seconds even on a 24-level ladder (docs/benchmarks explains the method).
The report is Markdown, or JSON with --json. The exit status is 1 if any
message was lost, duplicated or early; missed targets are reported, not
failed: timings depend on the machine.

What measures rungs itself (the cost of its commands and of the
console, a killed replay, one ladder beside 50,000 other queues, a scan
of scheduled messages) is in the lab, which does not ship: in the source
tree, go run ./cmd/rungs-lab.`
