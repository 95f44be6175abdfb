// Package bench is the engine behind `rungs bench`, what an operator runs
// to measure ladders against the broker's own limit: the throughput of a
// plain queue, the throughput and hops of ladders of each layout and
// radix, and how late delayed messages arrive at offered loads. It does
// its I/O through package broker, in a vhost of its own that it removes
// afterwards. What measures rungs itself (its commands' cost, the
// console's, a killed replay) is not here but in the lab, cmd/rungs-lab,
// which does not ship.
//
// Timings are measurements, not assertions: the package's tests run a
// smoke-sized benchmark and check only that every message arrived, once and
// never early, and that a report was produced.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// Options configure a run. The zero value of a field means its default
// (DefaultOptions); Smoke shrinks every phase to a few hundred messages.
type Options struct {
	// Duration is the measured window of each phase.
	Duration time.Duration
	// Warmup is the ramp before the window; a throughput phase adds the
	// longest delay to it, so that the window sees a ladder in steady state.
	Warmup time.Duration
	// Levels is the number of binary levels; radix r ladders get the
	// fewest levels that hold the same range (24 → 12, 8, 6).
	Levels int
	// Unit is the ladders' resolution.
	Unit time.Duration
	// DelayBits: delays are uniform over [0, 2^DelayBits) units, which
	// keeps a phase short (see docs/benchmarks for why and what it costs).
	DelayBits int
	// Size is the message body size in bytes.
	Size       int
	Persistent bool
	// Layouts are measured in radix 2; Radixes (prefix and direct
	// layouts) besides 2 are measured next to them.
	Layouts []string
	Radixes []int
	// Loads are offered loads in messages/s; 0 is saturation, measured in
	// the throughput phases.
	Loads []float64
	// Rounds repeats the throughput phases, limit first in each round, so
	// that each ratio compares figures taken minutes apart at most.
	Rounds int
	// InFlight caps published-but-undelivered messages of the limit
	// phase; ladders get this plus the limit's rate times the mean delay.
	InFlight int
	// TopicReference adds a phase per round that publishes the binary
	// ladder's keys through a topic exchange to one queue without delay:
	// what a single topic-routed transfer costs, next to the limit's
	// default-exchange transfer.
	TopicReference bool
	// FloorReference adds a phase per round that sends every message
	// through a chain of one-unit TTL queues, as many as the binary
	// ladder's mean hops, dead-lettered through the default exchange: what
	// a hop costs the broker when nothing is routed, the floor under any
	// dead-letter ladder.
	FloorReference bool
	// Quorum adds the binary prefix ladder again with quorum rungs
	// (at-least-once dead-lettering), to price the queue type.
	Quorum bool
	// Default, if set, is the ladder `rungs apply` declares on this broker
	// by default (the caller decides it through apply's path): its layout,
	// radix and queue type are measured too, in the run's range and unit,
	// unless a design already has that shape.
	Default *topology.Ladder
	// MaxMessages caps each phase's messages (smoke runs); 0 is no cap.
	MaxMessages int
	// Smoke marks a correctness-only run: timings are not meaningful.
	Smoke bool
	// Seed makes the drawn delays reproducible.
	Seed uint64
	// Phases names the phases to run, in the order of phases; empty runs
	// them all.
	Phases []string
	// BrokerPID is the broker's process on this machine, whose CPU time
	// the run reads: 0 for the os_pid the management API reports when the
	// broker is on loopback, -1 for none (a broker in a container has
	// another pid here).
	BrokerPID int
	// Log receives one line per phase as the run progresses.
	Log io.Writer
}

// DefaultOptions is a full run: about 15 minutes on a 2-core machine.
func DefaultOptions() Options {
	return Options{
		Duration: 20 * time.Second, Warmup: 3 * time.Second,
		Levels: 24, Unit: time.Millisecond, DelayBits: 12, Size: 256, Persistent: false,
		// The default ladder (direct r16), the topic ladder it replaced
		// (prefix r16), both in binary (the NServiceBus/Celery shape), and
		// the seed's suffix ladder. --radix 2,4,8,16 adds the radixes between.
		Layouts: []string{"prefix", "direct", "suffix"}, Radixes: []int{2, 16},
		Loads: []float64{100, 1000, 0}, Rounds: 3, InFlight: 2000,
		TopicReference: true, FloorReference: true, Quorum: true, Seed: 1,
	}
}

// SmokeOptions is a run of every phase with a few hundred messages, for CI.
func SmokeOptions() Options {
	o := DefaultOptions()
	o.Duration, o.Warmup = time.Second, 200*time.Millisecond
	// 8 binary levels (2 at radix 16) hold the 6-bit delays: every hop is
	// still taken, and a quorum ladder declares 30 rungs instead of 90.
	o.Levels, o.DelayBits, o.Rounds, o.MaxMessages = 8, 6, 1, 300
	o.Smoke = true
	return o
}

// withDefaults fills zero fields from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Duration <= 0 {
		o.Duration = d.Duration
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	}
	if o.Levels == 0 {
		o.Levels = d.Levels
	}
	if o.Unit == 0 {
		o.Unit = d.Unit
	}
	if o.DelayBits == 0 {
		o.DelayBits = d.DelayBits
	}
	if o.Size == 0 {
		o.Size = d.Size
	}
	if len(o.Layouts) == 0 {
		o.Layouts = d.Layouts
	}
	if len(o.Radixes) == 0 {
		o.Radixes = d.Radixes
	}
	if len(o.Loads) == 0 {
		o.Loads = d.Loads
	}
	if o.Rounds <= 0 {
		o.Rounds = 1
	}
	if o.InFlight <= 0 {
		o.InFlight = d.InFlight
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// Check says what is wrong with the options, if anything, before a run
// connects to a broker: the phases it names and the designs it asks for.
// Run checks them too.
func (o Options) Check() error {
	o = o.withDefaults()
	if _, err := o.phases(); err != nil {
		return err
	}
	_, err := o.designs()
	return err
}

// ErrOptions wraps every invalid option. It is bad input (an
// *ops.InputError), so a front end treats a refused option as it treats
// any other refused input.
var ErrOptions error = &ops.InputError{Err: errors.New("invalid benchmark options")}

// designs are the ladders a run measures: each layout in radix 2, then the
// layouts that take a radix (prefix, direct) in every other, all holding
// the same range. A radixed layout is measured in radix 2 only if Radixes
// has 2.
func (o Options) designs() ([]topology.Ladder, error) {
	if o.DelayBits < 1 || o.DelayBits > o.Levels {
		return nil, fmt.Errorf("%w: %d delay bits for %d levels (want 1 to levels)", ErrOptions, o.DelayBits, o.Levels)
	}
	if o.Size < 0 || o.Size > 16<<20 {
		return nil, fmt.Errorf("%w: message size %d (want 0 to 16 MiB)", ErrOptions, o.Size)
	}
	var out []topology.Ladder
	for _, lay := range o.Layouts {
		if lay == "nsb" {
			return nil, fmt.Errorf("%w: the nsb layout's unit is fixed at 1s, too coarse to measure; use prefix or suffix", ErrOptions)
		}
		base, err := topology.Ladder{Name: "bench." + lay, Layout: lay, Unit: o.Unit, Levels: o.Levels, Radix: 2, QueueType: topology.Classic}.Normalize()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrOptions, err)
		}
		radixed := lay == "prefix" || lay == "direct"
		if hasInt(o.Radixes, 2) || !radixed {
			out = append(out, base)
		}
		if !radixed {
			continue
		}
		for _, r := range o.Radixes {
			if r == 2 {
				continue
			}
			alt, err := base.WithRadix(r)
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrOptions, err)
			}
			alt.Name = fmt.Sprintf("bench.%s.r%d", lay, r)
			out = append(out, alt)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no ladder to measure", ErrOptions)
	}
	if o.Quorum {
		// The same ladder as the first design, rungs of the other type.
		q := out[0]
		q.QueueType = topology.Quorum
		q.Name += ".quorum"
		out = append(out, q)
	}
	pair, err := o.defaultPair()
	if err != nil {
		return nil, err
	}
	for _, d := range pair {
		if !hasShape(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// defaultPair is the default ladder's shape in the run's unit and range,
// then the same ladder in the other layout a new ladder may get (prefix for
// direct, direct for prefix), so that every run compares the two layouts on
// the ladder users get. It is empty without a Default, and holds the
// default alone when its layout has no such other.
func (o Options) defaultPair() ([]topology.Ladder, error) {
	if o.Default == nil {
		return nil, nil
	}
	def := *o.Default
	shape := func(layout, name string) (topology.Ladder, error) {
		l, err := topology.Ladder{Name: name, Layout: layout, Unit: o.Unit, Levels: o.Levels, Radix: 2, QueueType: def.QueueType}.Normalize()
		if err == nil && def.Radix != 2 {
			l, err = l.WithRadix(def.Radix)
			l.Name = name
		}
		if err != nil {
			return l, fmt.Errorf("%w: the default ladder in the %s layout: %v", ErrOptions, layout, err)
		}
		return l, nil
	}
	l, err := shape(def.Layout, "bench.default")
	if err != nil {
		return nil, err
	}
	pair := []topology.Ladder{l}
	if other, ok := otherLayout(def.Layout); ok {
		if l, err = shape(other, "bench.default.other"); err != nil {
			return nil, err
		}
		pair = append(pair, l)
	}
	return pair, nil
}

// otherLayout pairs the two layouts rungs gives a new ladder by default,
// depending on the broker's version.
func otherLayout(layout string) (string, bool) {
	switch layout {
	case "direct":
		return "prefix", true
	case "prefix":
		return "direct", true
	}
	return "", false
}

// hasShape reports whether designs hold a ladder of l's layout, radix and
// queue type: the run measures each shape once.
func hasShape(designs []topology.Ladder, l topology.Ladder) bool {
	for _, d := range designs {
		if d.Layout == l.Layout && d.Radix == l.Radix && d.QueueType == l.QueueType {
			return true
		}
	}
	return false
}

// unsafeOn says what is wrong with a design on a broker of version v, by
// the verdict apply and doctor follow (Ladder.RiskOn), and whether it can
// still be measured: a direct ladder on a release that drops BCC keys on
// every dead-lettering delivers nothing, so it is not measured; a direct
// quorum ladder on a release whose dead-letter retries drop them runs as
// well as any until a retry happens (a node restart, a confirm timeout),
// which a benchmark does not cause, so it is measured and labelled.
func unsafeOn(l topology.Ladder, v topology.Version) (why string, measure bool) {
	switch l.RiskOn(v) {
	case topology.LayoutBroken:
		return "not measured: " + topology.BCCBrokenWhy(v.String()), false
	case topology.LayoutLosesOnRetry:
		return "unsafe: " + topology.BCCRetryWhy(v, l.Name), true
	}
	return "", true
}

func hasInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// Run performs a benchmark against the broker cfg addresses (its Vhost is
// ignored: the run creates and removes its own). mgmt must be allowed to
// create vhosts. Correctness failures (lost, duplicated or early messages)
// are listed in Report.Problems; the error is for a run that could not be
// carried out.
func Run(ctx context.Context, cfg broker.Config, mgmt *broker.Management, opts Options) (rep Report, err error) {
	o := opts.withDefaults()
	selected, err := o.phases()
	if err != nil {
		return Report{}, err
	}
	designs, err := o.designs()
	if err != nil {
		return Report{}, err
	}
	rep = Report{RunInfo: StartRun(), Options: reportOptions(o), Problems: []string{}}
	if pair, err := o.defaultPair(); err == nil {
		rep.DefaultDesign = designName(pair[0])
		if len(pair) > 1 {
			rep.OtherDesign = designName(pair[1])
		}
	}
	began := time.Now()
	ov, err := rep.MeetBroker(ctx, mgmt)
	if err != nil {
		return rep, err
	}
	v, _ := topology.ParseVersion(ov.RabbitMQVersion)
	if designs = rep.screen(designs, v); len(designs) == 0 {
		return rep, fmt.Errorf("%w: no design is safe on RabbitMQ %s: %s", ErrOptions, v, rep.Unsafe[0].Why)
	}

	vh, err := NewVhost(ctx, mgmt, cfg, "rungs-bench-")
	if err != nil {
		return rep, err
	}
	defer vh.Remove(ctx, time.Minute, &rep.Problems)
	vcfg := vh.Config
	// Publishing and consuming use separate connections: RabbitMQ's flow
	// control blocks a publishing connection, which would hold up acks.
	// Each phase dials its consumer's own.
	pub, err := broker.Dial(ctx, vcfg)
	if err != nil {
		return rep, err
	}
	defer pub.Close()
	dial := func(ctx context.Context) (*broker.Conn, error) { return broker.Dial(ctx, vcfg) }
	r := &runner{o: o, pub: pub, dial: dial, rep: &rep, body: make([]byte, o.Size)}
	r.cpu, _ = findBrokerCPU(ctx, mgmt, ov.Node, cfg.URL, o.BrokerPID)
	for i := range r.body {
		r.body[i] = 'x'
	}

	for _, ph := range selected {
		if err := ph.run(r, ctx, designs); err != nil {
			return rep, err
		}
	}
	rep.Finish(began)
	rep.Targets = rep.targets()
	return rep, nil
}

// phase is one part of a run, in the order phases lists them. A new
// phase is a method of runner in a file of its own, its figures a field
// of Report with a section of Markdown, and one entry here.
type phase struct {
	name string
	run  func(r *runner, ctx context.Context, designs []topology.Ladder) error
}

// phases are every phase a run may hold, in the order they run: the
// limit and each design at saturation, then punctuality at offered
// loads, whose saturation rows are the throughput phase's.
var phases = []phase{
	{"throughput", (*runner).throughput},
	{"punctuality", (*runner).punctuality},
}

// PhaseNames names every phase, in the order a run runs them.
func PhaseNames() []string {
	names := make([]string, len(phases))
	for i, ph := range phases {
		names[i] = ph.name
	}
	return names
}

// phases are the phases Phases selects, in their order; all of them when
// it is empty.
func (o Options) phases() ([]phase, error) {
	if len(o.Phases) == 0 {
		return phases, nil
	}
	var out []phase
	for _, ph := range phases {
		if slices.Contains(o.Phases, ph.name) {
			out = append(out, ph)
		}
	}
	for _, name := range o.Phases {
		if !slices.Contains(PhaseNames(), name) {
			return nil, fmt.Errorf("%w: no phase %q (phases: %s)", ErrOptions, name, strings.Join(PhaseNames(), ", "))
		}
	}
	return out, nil
}

// runner carries one run's connections and report.
type runner struct {
	o    Options
	pub  *broker.Conn
	dial func(context.Context) (*broker.Conn, error)
	cpu  brokerCPU
	rep  *Report
	body []byte
	seed uint64
}

func (r *runner) logf(format string, a ...any) {
	fmt.Fprintf(r.o.Log, format+"\n", a...)
}

// meanDelay is the mean of the drawn delays.
func (r *runner) meanDelay() time.Duration {
	return time.Duration(float64(uint64(1)<<r.o.DelayBits-1) / 2 * float64(r.o.Unit))
}

func (r *runner) maxDelay() time.Duration {
	return time.Duration(uint64(1)<<r.o.DelayBits-1) * r.o.Unit
}

// phase applies a target's objects, runs one flow and tears them down.
func (r *runner) phase(ctx context.Context, tg target, spec flowSpec) (flowResult, error) {
	var plan topology.Plan
	switch {
	case tg.keysOnly:
		plan = topology.Plan{
			Exchanges: []topology.Exchange{{Name: tg.exchange, Type: "topic", Durable: true}},
			Queues:    []topology.Queue{{Name: tg.queue, Durable: true}},
			Bindings: []topology.Binding{{Source: tg.exchange, Destination: tg.queue, DestinationType: topology.ToQueue,
				RoutingKey: strings.TrimSuffix(strings.Repeat("*.", tg.ladder.Levels), ".") + ".#"}},
		}
	case tg.chain > 0:
		for i := 0; i < tg.chain; i++ {
			plan.Queues = append(plan.Queues, topology.Queue{Name: chainQueue(i), Durable: true, Args: topology.Args{
				"x-message-ttl":             r.o.Unit.Milliseconds(),
				"x-dead-letter-exchange":    "",
				"x-dead-letter-routing-key": chainQueue(i + 1),
			}})
		}
		plan.Queues = append(plan.Queues, topology.Queue{Name: chainQueue(tg.chain), Durable: true})
	case tg.ladder != nil:
		plan = tg.ladder.Plan()
	default:
		plan = topology.Plan{Queues: []topology.Queue{{Name: tg.queue, Durable: true}}}
	}
	if _, err := r.pub.Apply(ctx, plan); err != nil {
		return flowResult{}, fmt.Errorf("%s: apply: %w", tg.name, err)
	}
	r.seed++
	spec.target, spec.unit, spec.body, spec.persistent = tg, r.o.Unit, r.body, r.o.Persistent
	spec.maxMessages, spec.seed = r.o.MaxMessages, r.o.Seed*1000+r.seed
	if r.cpu.pid != 0 {
		spec.cpu = r.cpu.used
	}
	res, ferr := runFlow(ctx, r.pub, r.dial, spec)
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := r.pub.Teardown(tctx, plan); err != nil && ferr == nil {
		ferr = fmt.Errorf("%s: teardown: %w", tg.name, err)
	}
	if ferr != nil {
		return res, fmt.Errorf("%s: %w", tg.name, ferr)
	}
	r.check(tg.name, spec, res)
	return res, ctx.Err()
}

// check records correctness failures: every published message confirmed
// and delivered exactly once, none before its delay.
func (r *runner) check(name string, spec flowSpec, res flowResult) {
	what := name
	if spec.rate > 0 {
		what = fmt.Sprintf("%s at %s msg/s", name, topology.FormatRate(spec.rate))
	}
	add := func(format string, a ...any) {
		r.rep.Problems = append(r.rep.Problems, what+": "+fmt.Sprintf(format, a...))
	}
	if res.Unconfirmed > 0 {
		add("%d of %d messages not confirmed", res.Unconfirmed, res.Published)
	}
	if res.Lost > 0 {
		add("%d of %d confirmed messages never arrived", res.Lost, res.Confirmed)
	}
	if res.Duplicates > 0 {
		add("%d duplicate deliveries", res.Duplicates)
	}
	if res.Early > 0 {
		add("%d messages arrived before their delay", res.Early)
	}
	if res.Confirmed == 0 {
		add("no message was confirmed")
	}
}

func (r *runner) throughput(ctx context.Context, designs []topology.Ladder) error {
	limitTarget := target{name: "limit", queue: "bench.limit"}
	for round := 1; round <= r.o.Rounds; round++ {
		lim, err := r.phase(ctx, limitTarget, flowSpec{warmup: r.o.Warmup, window: r.o.Duration, inFlight: r.o.InFlight})
		if err != nil {
			return err
		}
		limPhase := newPhase(limitTarget, nil, 0, lim, Phase{})
		r.rep.Limit = append(r.rep.Limit, limPhase)
		r.logf("round %d/%d: limit %s msg/s (p50 %s, broker %s µs/msg)", round, r.o.Rounds, topology.FormatRate(lim.Rate), ms(lim.Lateness.P50), formatUS(limPhase.BrokerCPUus))
		if r.o.TopicReference {
			keys := designs[0]
			tg := target{name: "topic", ladder: &keys, keysOnly: true, exchange: "bench.topic", queue: "bench.topic"}
			res, err := r.phase(ctx, tg, flowSpec{delayBits: r.o.DelayBits, warmup: r.o.Warmup, window: r.o.Duration, inFlight: r.o.InFlight})
			if err != nil {
				return err
			}
			p := newPhase(tg, nil, 0, res, Phase{})
			r.rep.Topic = append(r.rep.Topic, p)
			r.logf("round %d/%d: topic transfer %s msg/s (broker %s µs/msg)", round, r.o.Rounds, topology.FormatRate(res.Rate), formatUS(p.BrokerCPUus))
		}
		if r.o.FloorReference {
			// As many hops as the binary ladder's delays visit on average,
			// so that the floor's ratio is read against the same bound.
			n := max(1, (r.o.DelayBits+1)/2)
			tg := target{name: "floor", chain: n, queue: chainQueue(n)}
			inflight := r.o.InFlight + int(math.Ceil(lim.Rate*(time.Duration(n)*r.o.Unit).Seconds()))
			res, err := r.phase(ctx, tg, flowSpec{warmup: r.o.Warmup, window: r.o.Duration, inFlight: inflight})
			if err != nil {
				return err
			}
			p := newPhase(tg, nil, 0, res, limPhase)
			r.rep.Floor = append(r.rep.Floor, p)
			r.logf("round %d/%d: floor chain of %d hops %s msg/s, ratio %.2f, CPU ratio %.2f (broker %s µs/msg)", round, r.o.Rounds, n, topology.FormatRate(res.Rate), p.Ratio, p.CPURatio, formatUS(p.BrokerCPUus))
		}
		for i, l := range designs {
			l := l
			tg := target{name: designName(l), ladder: &l, queue: l.Name + ".done"}
			inflight := r.o.InFlight + int(math.Ceil(lim.Rate*r.meanDelay().Seconds()))
			res, err := r.phase(ctx, tg, flowSpec{
				delayBits: r.o.DelayBits, warmup: r.maxDelay() + r.o.Warmup, window: r.o.Duration, inFlight: inflight,
			})
			if err != nil {
				return err
			}
			p := newPhase(tg, &l, 0, res, limPhase)
			if round == 1 {
				r.rep.Throughput = append(r.rep.Throughput, Design{Name: tg.name, Layout: l.Layout, Radix: l.Radix, Levels: l.Levels, QueueType: string(l.QueueType), Cost: toJSONCost(l.Cost())})
			}
			r.rep.Throughput[i].Rounds = append(r.rep.Throughput[i].Rounds, p)
			r.logf("round %d/%d: %s %s msg/s, %.2f hops, ratio %.2f, CPU ratio %.2f (p99 %s)", round, r.o.Rounds, tg.name, topology.FormatRate(res.Rate), res.MeanHops, p.Ratio, p.CPURatio, ms(res.Lateness.P99))
		}
	}
	for i := range r.rep.Throughput {
		r.rep.Throughput[i].summarise()
	}
	return nil
}

func (r *runner) punctuality(ctx context.Context, designs []topology.Ladder) error {
	// One row per design and load; the rounds go round-robin over the
	// rows, so that a burst of load from elsewhere on the machine hits one
	// round of many rows rather than every round of one.
	type row struct {
		l    topology.Ladder
		load float64
	}
	var rows []row
	for _, l := range designs {
		for _, load := range r.o.Loads {
			p := Punct{Design: designName(l), Offered: "max", OfferedPerS: max(load, 0)}
			if load > 0 {
				p.Offered = topology.FormatRate(load)
			} else {
				// Saturation: the throughput phases' rounds.
				for _, d := range r.rep.Throughput {
					if d.Name == p.Design {
						p.Rounds = d.Rounds
					}
				}
			}
			r.rep.Punctuality = append(r.rep.Punctuality, p)
			rows = append(rows, row{l, load})
		}
	}
	for round := 1; round <= r.o.Rounds; round++ {
		for i, rw := range rows {
			if rw.load <= 0 {
				continue
			}
			l := rw.l
			tg := target{name: designName(l), ladder: &l, queue: l.Name + ".done"}
			res, err := r.phase(ctx, tg, flowSpec{rate: rw.load, delayBits: r.o.DelayBits, warmup: r.o.Warmup, window: r.o.Duration, probe: true})
			if err != nil {
				return err
			}
			p := newPhase(tg, &l, rw.load, res, Phase{})
			r.rep.Punctuality[i].Rounds = append(r.rep.Punctuality[i].Rounds, p)
			r.logf("round %d/%d: punctuality of %s at %s msg/s: p50 %s p99 %s max %s, %d early (host timer p99 %s)", round, r.o.Rounds,
				tg.name, topology.FormatRate(rw.load), ms(res.Lateness.P50), ms(res.Lateness.P99), ms(res.Lateness.Max), res.Early, ms(res.HostTimer.P99))
		}
	}
	for i := range r.rep.Punctuality {
		r.rep.Punctuality[i].summarise()
	}
	return nil
}

// designName names a ladder design in tables: layout, radix if not 2,
// and the queue type if quorum.
func designName(l topology.Ladder) string {
	name := l.Layout
	if l.Radix != 2 {
		name = fmt.Sprintf("%s r%d", l.Layout, l.Radix)
	}
	if l.QueueType == topology.Quorum {
		name += " quorum"
	}
	return name
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
