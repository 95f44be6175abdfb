package bench

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// Report is everything a run measured, as --json prints it and Markdown
// renders it.
type Report struct {
	RunInfo
	Options RunOptions `json:"options"`
	Limit   []Phase    `json:"limit"`
	// Topic is the reference phase: the ladder's keys through a topic
	// exchange to one queue, no delay (empty unless TopicReference).
	Topic []Phase `json:"topic,omitempty"`
	// Floor is the other reference: a chain of TTL queues dead-lettering
	// through the default exchange, a hop with no routing (empty unless
	// FloorReference).
	Floor       []Phase  `json:"floor,omitempty"`
	Throughput  []Design `json:"throughput"`
	Punctuality []Punct  `json:"punctuality"`
	Targets     []Target `json:"targets"`
	// DefaultDesign names the design that has the shape of the ladder
	// `rungs apply` declares by default on this broker ("" if not given).
	DefaultDesign string `json:"default_design,omitempty"`
	// OtherDesign names the default ladder's shape in the other layout a
	// new ladder may get (prefix beside direct, direct beside prefix).
	OtherDesign string `json:"other_design,omitempty"`
	// Unsafe are the designs that are not safe on this broker's version,
	// each with why and whether it was measured anyway.
	Unsafe []UnsafeDesign `json:"unsafe,omitempty"`
	// Problems are correctness failures: lost, duplicated or early
	// messages. A run with problems measured nothing worth reporting.
	Problems []string `json:"problems"`
}

// BrokerInfo is the broker the run measured.
type BrokerInfo struct {
	RabbitMQ string `json:"rabbitmq_version"`
	Erlang   string `json:"erlang_version"`
	Node     string `json:"node"`
}

// RunOptions are the options as the report states them.
type RunOptions struct {
	DurationS   float64   `json:"duration_s"`
	WarmupS     float64   `json:"warmup_s"`
	Levels      int       `json:"levels"`
	UnitMS      float64   `json:"unit_ms"`
	DelayBits   int       `json:"delay_bits"`
	MaxDelayMS  float64   `json:"max_delay_ms"`
	Size        int       `json:"size"`
	Persistent  bool      `json:"persistent"`
	Layouts     []string  `json:"layouts"`
	Radixes     []int     `json:"radixes"`
	Loads       []float64 `json:"loads"`
	Rounds      int       `json:"rounds"`
	TopicRef    bool      `json:"topic_reference"`
	FloorRef    bool      `json:"floor_reference"`
	InFlight    int       `json:"in_flight"`
	MaxMessages int       `json:"max_messages,omitempty"`
	Smoke       bool      `json:"smoke"`
	Seed        uint64    `json:"seed"`
}

func reportOptions(o Options) RunOptions {
	return RunOptions{
		DurationS: o.Duration.Seconds(), WarmupS: o.Warmup.Seconds(), Levels: o.Levels,
		UnitMS: Millis(o.Unit), DelayBits: o.DelayBits,
		MaxDelayMS: Millis(time.Duration(uint64(1)<<o.DelayBits-1) * o.Unit),
		Size:       o.Size, Persistent: o.Persistent, Layouts: o.Layouts, Radixes: o.Radixes,
		Loads: o.Loads, Rounds: o.Rounds, TopicRef: o.TopicReference, FloorRef: o.FloorReference, InFlight: o.InFlight,
		MaxMessages: o.MaxMessages, Smoke: o.Smoke, Seed: o.Seed,
	}
}

// DistMS is a lateness distribution in milliseconds.
type DistMS struct {
	N   int     `json:"n"`
	Min float64 `json:"min_ms"`
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// DistMSOf is d in milliseconds.
func DistMSOf(d Dist) DistMS {
	return DistMS{N: d.N, Min: Millis(d.Min), P50: Millis(d.P50), P99: Millis(d.P99), Max: Millis(d.Max)}
}

// Phase is one measured flow: the limit, a ladder at saturation or a
// ladder at an offered load.
type Phase struct {
	Name          string  `json:"name"`
	OfferedPerS   float64 `json:"offered_per_s,omitempty"`
	DeliveredPerS float64 `json:"delivered_per_s"`
	PublishedPerS float64 `json:"published_per_s"`
	// MeanHops counts x-death entries on arrival; ExpectedHops counts the
	// rungs the sent delays' digits name. They agree when nothing is lost.
	MeanHops     float64 `json:"mean_hops"`
	ExpectedHops float64 `json:"expected_hops"`
	MaxHops      int     `json:"max_hops"`
	// LimitPerS is the same round's plain-queue rate; HopBoundPerS is
	// limit ÷ (1 + MeanHops), the most a hop-based design can deliver;
	// Ratio is DeliveredPerS ÷ HopBoundPerS.
	// BrokerCPUus is the broker's CPU time per delivered message in the
	// window, in µs (0 when the broker is not local); CPURatio compares
	// it as Ratio compares rates: limit's CPU × (1 + hops) ÷ this.
	BrokerCPUus float64 `json:"broker_cpu_us_per_msg,omitempty"`
	LimitCPUus  float64 `json:"limit_cpu_us_per_msg,omitempty"`
	// CPUPerHopUS is what one hop adds: (BrokerCPUus − LimitCPUus) ÷ hops.
	CPUPerHopUS  float64 `json:"cpu_us_per_hop,omitempty"`
	CPURatio     float64 `json:"cpu_ratio,omitempty"`
	LimitPerS    float64 `json:"limit_per_s,omitempty"`
	HopBoundPerS float64 `json:"hop_bound_per_s,omitempty"`
	Ratio        float64 `json:"ratio,omitempty"`
	Lateness     DistMS  `json:"lateness"`
	// HostTimer is how late a 1 ms sleep of the benchmark process woke
	// during the window: the machine's own scheduling noise, a floor
	// under any lateness a broker on the same machine can show.
	HostTimer     DistMS            `json:"host_timer,omitempty"`
	LateByHops    map[string]DistMS `json:"lateness_by_hops,omitempty"`
	Published     int               `json:"published"`
	Confirmed     int               `json:"confirmed"`
	Delivered     int               `json:"delivered"`
	Lost          int               `json:"lost"`
	Duplicates    int               `json:"duplicates"`
	Early         int               `json:"early"`
	WindowSeconds float64           `json:"window_s"`
}

func newPhase(tg target, l *topology.Ladder, offered float64, res flowResult, limit Phase) Phase {
	p := Phase{
		Name: tg.name, OfferedPerS: offered, DeliveredPerS: res.Rate, PublishedPerS: res.PublishRate,
		MeanHops: res.MeanHops, ExpectedHops: res.ExpectedHops, MaxHops: res.MaxHops,
		Lateness: DistMSOf(res.Lateness), HostTimer: DistMSOf(res.HostTimer), Published: res.Published, Confirmed: res.Confirmed,
		Delivered: res.Delivered, Lost: res.Lost, Duplicates: res.Duplicates, Early: res.Early,
		WindowSeconds: res.WindowSeconds,
	}
	if n := res.Rate * res.WindowSeconds; res.BrokerCPU > 0 && n > 0 {
		p.BrokerCPUus = float64(res.BrokerCPU.Microseconds()) / n
	}
	hopBased := l != nil || tg.chain > 0
	if hopBased && limit.DeliveredPerS > 0 {
		p.LimitPerS = limit.DeliveredPerS
		p.HopBoundPerS = limit.DeliveredPerS / (1 + res.MeanHops)
		if p.HopBoundPerS > 0 {
			p.Ratio = res.Rate / p.HopBoundPerS
		}
	}
	if hopBased && limit.BrokerCPUus > 0 && p.BrokerCPUus > 0 {
		p.LimitCPUus = limit.BrokerCPUus
		p.CPURatio = limit.BrokerCPUus * (1 + res.MeanHops) / p.BrokerCPUus
		if res.MeanHops > 0 {
			p.CPUPerHopUS = (p.BrokerCPUus - limit.BrokerCPUus) / res.MeanHops
		}
	}
	if l != nil {
		p.LateByHops = map[string]DistMS{}
		for h, d := range res.LateByHops {
			p.LateByHops[strconv.Itoa(h)] = DistMSOf(d)
		}
	}
	return p
}

// Design is one ladder design's throughput over the rounds.
type Design struct {
	Name   string `json:"name"`
	Layout string `json:"layout"`
	Radix  int    `json:"radix"`
	Levels int    `json:"levels"`
	// QueueType is the rungs' queue type: classic or quorum.
	QueueType string   `json:"queue_type,omitempty"`
	Cost      jsonCost `json:"cost"`
	Rounds    []Phase  `json:"rounds"`
	// Medians over the rounds, and the ratio's range.
	DeliveredPerS float64 `json:"delivered_per_s"`
	HopBoundPerS  float64 `json:"hop_bound_per_s"`
	MeanHops      float64 `json:"mean_hops"`
	Ratio         float64 `json:"ratio"`
	RatioMin      float64 `json:"ratio_min"`
	RatioMax      float64 `json:"ratio_max"`
	BrokerCPUus   float64 `json:"broker_cpu_us_per_msg,omitempty"`
	CPUPerHopUS   float64 `json:"cpu_us_per_hop,omitempty"`
	CPURatio      float64 `json:"cpu_ratio,omitempty"`
}

type jsonCost struct {
	Exchanges int     `json:"exchanges"`
	Queues    int     `json:"queues"`
	Rungs     int     `json:"rungs"`
	Bindings  int     `json:"bindings"`
	MeanHops  float64 `json:"mean_hops_full_range"`
	MaxHops   int     `json:"max_hops"`
}

func toJSONCost(c topology.Cost) jsonCost {
	return jsonCost{c.Exchanges, c.Queues, c.Rungs, c.Bindings, c.MeanHops, c.MaxHops}
}

func (d *Design) summarise() {
	var rate, bound, hops, ratio, cpu, cpuRatio, perHop []float64
	for _, p := range d.Rounds {
		rate = append(rate, p.DeliveredPerS)
		bound = append(bound, p.HopBoundPerS)
		hops = append(hops, p.MeanHops)
		ratio = append(ratio, p.Ratio)
		if p.CPURatio > 0 {
			cpu = append(cpu, p.BrokerCPUus)
			cpuRatio = append(cpuRatio, p.CPURatio)
			perHop = append(perHop, p.CPUPerHopUS)
		}
	}
	d.DeliveredPerS, d.HopBoundPerS, d.MeanHops, d.Ratio = median(rate), median(bound), median(hops), median(ratio)
	d.BrokerCPUus, d.CPURatio, d.CPUPerHopUS = median(cpu), median(cpuRatio), median(perHop)
	d.RatioMin, d.RatioMax = minMax(ratio)
}

// median returns the round whose ratio is the median (the lower middle one
// for an even count), for the saturation row of the punctuality table.
func (d Design) median() Phase {
	if len(d.Rounds) == 0 {
		return Phase{}
	}
	rs := append([]Phase(nil), d.Rounds...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Ratio < rs[j].Ratio })
	return rs[(len(rs)-1)/2]
}

func minMax(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

// Punct is one punctuality measurement.
type Punct struct {
	Design  string `json:"design"`
	Offered string `json:"offered"` // messages/s as printed, or "max"
	// OfferedPerS is the offered load; 0 is saturation.
	OfferedPerS float64 `json:"offered_per_s"`
	// Rounds are every measurement; Phase is the one with the median p99,
	// and P99Min and P99Max the range over the rounds.
	Rounds []Phase `json:"rounds"`
	Phase  Phase   `json:"median"`
	P99Min float64 `json:"p99_min_ms"`
	P99Max float64 `json:"p99_max_ms"`
}

func (p *Punct) summarise() {
	if len(p.Rounds) == 0 {
		return
	}
	rs := append([]Phase(nil), p.Rounds...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Lateness.P99 < rs[j].Lateness.P99 })
	p.Phase = rs[(len(rs)-1)/2]
	p.P99Min, p.P99Max = rs[0].Lateness.P99, rs[len(rs)-1].Lateness.P99
}

// Target is one of the targets and whether the run met it.
type Target struct {
	Name string `json:"name"`
	Want string `json:"want"`
	Got  string `json:"got"`
	Met  bool   `json:"met"`
}

// targets checks the run against the targets, for the binary
// prefix ladder the issue names and for the prefix and direct layouts'
// default radix; and, when both were measured, the default radix against
// radix 2 (the NServiceBus/Celery shape), and the direct layout against
// the prefix layout in the default radix (the criterion that made it the
// default).
func (r Report) targets() []Target {
	var out []Target
	judged := func(layout string, radix int) bool {
		return (layout == "prefix" || layout == "direct") && (radix == 2 || radix == topology.DefaultRadix)
	}
	for _, d := range r.Throughput {
		if judged(d.Layout, d.Radix) {
			out = append(out, Target{
				Name: fmt.Sprintf("%s throughput ÷ (limit ÷ (1 + mean hops))", d.Name), Want: "≥ 0.85",
				Got: fmt.Sprintf("%.2f (rounds %.2f–%.2f)", d.Ratio, d.RatioMin, d.RatioMax), Met: d.Ratio >= 0.85,
			})
		}
	}
	for _, p := range r.Punctuality {
		radix := 2
		for _, d := range r.Throughput {
			if d.Name == p.Design {
				radix = d.Radix
			}
		}
		layout, _, _ := strings.Cut(p.Design, " ")
		if judged(layout, radix) && p.OfferedPerS == 1000 && len(p.Rounds) > 0 {
			out = append(out, Target{
				Name: fmt.Sprintf("%s p99 lateness at 1000 msg/s, %sms unit, the range of %d binary levels", p.Design, FormatMS(r.Options.UnitMS), r.Options.Levels),
				Want: "≤ 20 ms", Got: fmt.Sprintf("%s ms (rounds %s–%s)", FormatMS(p.Phase.Lateness.P99), FormatMS(p.P99Min), FormatMS(p.P99Max)), Met: p.Phase.Lateness.P99 <= 20 && p.Phase.Lateness.N > 0,
			})
		}
	}
	// Ladders are compared with ladders of their own queue type: the
	// default's quorum rows beside the classic ones must not pair across.
	design := func(layout string, radix int, qt string) (Design, bool) {
		for _, d := range r.Throughput {
			if d.Layout == layout && d.Radix == radix && d.DeliveredPerS > 0 && (d.QueueType == qt || d.QueueType == "" && qt == string(topology.Classic)) {
				return d, true
			}
		}
		return Design{}, false
	}
	relative := func(a, b Design, want float64, why string) {
		x := a.DeliveredPerS / b.DeliveredPerS
		out = append(out, Target{
			Name: fmt.Sprintf("%s throughput ÷ %s throughput%s", a.Name, b.Name, why), Want: fmt.Sprintf("≥ %.1f", want),
			Got: fmt.Sprintf("%.2f (%s ÷ %s msg/s)", x, topology.FormatRate(a.DeliveredPerS), topology.FormatRate(b.DeliveredPerS)), Met: x >= want,
		})
	}
	classic := string(topology.Classic)
	if binary, ok := design("prefix", 2, classic); ok {
		for _, lay := range []string{"prefix", "direct"} {
			if d, ok := design(lay, topology.DefaultRadix, classic); ok {
				relative(d, binary, 2.5, "")
			}
		}
	}
	for _, qt := range []string{classic, string(topology.Quorum)} {
		if topic, ok := design("prefix", topology.DefaultRadix, qt); ok {
			if direct, ok := design("direct", topology.DefaultRadix, qt); ok {
				relative(direct, topic, 1.5, " (the default's margin over the topic ladder: ≥ 1.5 on 4.0, ≥ 1.0 on 3.10)")
			}
		}
	}
	return out
}

// Markdown renders the report as the tables docs/benchmarks holds.
func (r Report) Markdown() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	o := r.Options
	persist := "transient"
	if o.Persistent {
		persist = "persistent"
	}
	w("## rungs bench, %s\n\n", r.Started.Format("2006-01-02 15:04 UTC"))
	if o.Smoke {
		w("**Smoke run: a few hundred messages per phase; the timings mean nothing.**\n\n")
	}
	w("- Machine: %s; %d CPUs, %s; load average %s before, %s after\n", r.Machine.CPU, r.Machine.CPUs, r.Machine.Memory, r.Machine.LoadBefore, r.Machine.LoadAfter)
	w("- Broker: RabbitMQ %s, Erlang %s, on the same machine (loopback)\n", r.Broker.RabbitMQ, r.Broker.Erlang)
	w("- Client: %s, %s; rungs bench\n", r.Machine.Go, r.Machine.OS)
	queues := "classic durable queues"
	for _, d := range r.Throughput {
		if d.QueueType == "quorum" {
			// Quorum queues keep every message on disk whatever its
			// delivery mode: compare them with a persistent run.
			queues = "classic durable queues (quorum rungs in the quorum design, at-least-once dead-lettering)"
			break
		}
	}
	w("- Messages: %d-byte bodies, %s, %s, publisher confirms, manual acks (prefetch %d)\n", o.Size, persist, queues, Prefetch)
	w("- Ladders: %d binary levels at a %s unit (radix r: the fewest levels holding the same range); delays uniform over [0, %s] (%d bits)\n",
		o.Levels, FormatMS(o.UnitMS)+" ms", FormatMS(o.MaxDelayMS)+"ms", o.DelayBits)
	w("- Phases: %s measured after a %s ramp (throughput phases add the longest delay to it); %d round(s); run took %s\n\n",
		FormatSeconds(o.DurationS), FormatSeconds(o.WarmupS), o.Rounds, FormatSeconds(r.Seconds))

	w("### Throughput at saturation (median of %d round(s))\n\n", len(r.Limit))
	w("| design | levels | rungs | bindings | mean hops | delivered msg/s | limit ÷ (1 + hops) | ratio | ratio range | broker CPU µs/msg | µs/hop | CPU ratio |\n")
	w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var lims, limCPU []float64
	for _, p := range r.Limit {
		lims = append(lims, p.DeliveredPerS)
		if p.BrokerCPUus > 0 {
			limCPU = append(limCPU, p.BrokerCPUus)
		}
	}
	lo, hi := minMax(lims)
	w("| plain queue (the limit) | – | 1 queue | – | 0 | %s | %s | 1.00 | %s–%s msg/s | %s | – | 1.00 |\n",
		topology.FormatRate(median(lims)), topology.FormatRate(median(lims)), topology.FormatRate(lo), topology.FormatRate(hi), formatUS(median(limCPU)))
	if len(r.Topic) > 0 {
		var rates, cpus []float64
		for _, p := range r.Topic {
			rates = append(rates, p.DeliveredPerS)
			if p.BrokerCPUus > 0 {
				cpus = append(cpus, p.BrokerCPUus)
			}
		}
		lo, hi := minMax(rates)
		w("| reference: the %d-word keys through a topic exchange, no delay | – | 1 queue | 1 | 0 | %s | – | – | %s–%s msg/s | %s | – | – |\n",
			o.Levels, topology.FormatRate(median(rates)), topology.FormatRate(lo), topology.FormatRate(hi), formatUS(median(cpus)))
	}
	if len(r.Floor) > 0 {
		// The floor's rounds summarise as a design's do.
		f := Design{Rounds: r.Floor}
		f.summarise()
		w("| floor: a chain of %.0f TTL queues dead-lettering through the default exchange, no routing | – | %.0f | – | %.2f | %s | %s | **%.2f** | %.2f–%.2f | %s | %s | %s |\n",
			f.MeanHops, f.MeanHops, f.MeanHops, topology.FormatRate(f.DeliveredPerS), topology.FormatRate(f.HopBoundPerS), f.Ratio, f.RatioMin, f.RatioMax,
			formatUS(f.BrokerCPUus), formatUS(f.CPUPerHopUS), formatRatio(f.CPURatio))
	}
	for _, d := range r.Throughput {
		w("| %s | %d | %d | %d | %.2f | %s | %s | **%.2f** | %.2f–%.2f | %s | %s | %s |\n", r.label(d.Name), d.Levels, d.Cost.Rungs, d.Cost.Bindings,
			d.MeanHops, topology.FormatRate(d.DeliveredPerS), topology.FormatRate(d.HopBoundPerS), d.Ratio, d.RatioMin, d.RatioMax,
			formatUS(d.BrokerCPUus), formatUS(d.CPUPerHopUS), formatRatio(d.CPURatio))
	}
	for _, u := range r.unmeasured() {
		w("| %s |%s\n", r.label(u), strings.Repeat(" – |", 11))
	}
	w("\n")

	w("### Punctuality: lateness = arrival − publish − requested delay\n\n")
	w("Each row is the round with the median p99 of %d; \"p99 range\" spans the rounds. \"Host timer p99\" is how late a 1 ms sleep of the benchmark process woke meanwhile: the machine's scheduling noise.\n\n", o.Rounds)
	w("| design | offered msg/s | delivered msg/s | messages | p50 ms | p99 ms | max ms | p99 range ms | early | host timer p99 ms | broker CPU µs/msg |\n")
	w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, p := range r.Punctuality {
		early := 0
		for _, rp := range p.Rounds {
			early += rp.Early
		}
		host := "–"
		if p.Phase.HostTimer.N > 0 {
			host = FormatMS(p.Phase.HostTimer.P99)
		}
		w("| %s | %s | %s | %d | %s | %s | %s | %s–%s | %d | %s | %s |\n", r.label(p.Design), p.Offered, topology.FormatRate(p.Phase.DeliveredPerS), p.Phase.Lateness.N,
			FormatMS(p.Phase.Lateness.P50), FormatMS(p.Phase.Lateness.P99), FormatMS(p.Phase.Lateness.Max), FormatMS(p.P99Min), FormatMS(p.P99Max),
			early, host, formatUS(p.Phase.BrokerCPUus))
	}
	for _, u := range r.unmeasured() {
		w("| %s |%s\n", r.label(u), strings.Repeat(" – |", 10))
	}
	w("\n")
	r.writeUnsafe(w)
	r.writeLayoutPair(w)

	WriteTargets(&b, r.Targets)
	WriteProblems(&b, r.Problems, "Every message arrived exactly once and none before its delay.")
	return b.String()
}

// WriteTargets lists targets and whether each was met, if there are any.
func WriteTargets(b *strings.Builder, targets []Target) {
	if len(targets) == 0 {
		return
	}
	b.WriteString("### Targets\n\n| target | want | measured | met |\n|---|---|---|---|\n")
	for _, t := range targets {
		met := "no"
		if t.Met {
			met = "yes"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", t.Name, t.Want, t.Got, met)
	}
	b.WriteString("\n")
}

// WriteProblems lists a run's problems, or says that there were none.
func WriteProblems(b *strings.Builder, problems []string, none string) {
	if len(problems) == 0 {
		b.WriteString(none + "\n")
		return
	}
	b.WriteString("### Problems\n\n")
	for _, p := range problems {
		fmt.Fprintf(b, "- %s\n", p)
	}
	b.WriteString("\n")
}

// UnsafeDesign is a design that this broker's version cannot run safely.
type UnsafeDesign struct {
	Design   string `json:"design"`
	Why      string `json:"why"`
	Measured bool   `json:"measured"`
}

// screen drops the designs a broker of version v cannot run at all and
// records every unsafe one, so that the tables say so instead of showing
// a ladder no user should have.
func (r *Report) screen(designs []topology.Ladder, v topology.Version) []topology.Ladder {
	var out []topology.Ladder
	for _, l := range designs {
		why, measure := unsafeOn(l, v)
		if why != "" {
			r.Unsafe = append(r.Unsafe, UnsafeDesign{Design: designName(l), Why: why, Measured: measure})
		}
		if measure {
			out = append(out, l)
		}
	}
	return out
}

// unmeasured names the designs left out as unsafe on this broker.
func (r Report) unmeasured() []string {
	var out []string
	for _, u := range r.Unsafe {
		if !u.Measured {
			out = append(out, u.Design)
		}
	}
	return out
}

// writeLayoutPair compares the default ladder with its shape in the other
// layout, direct against prefix, from the rows the tables above hold: the
// evidence for each version's default layout.
func (r Report) writeLayoutPair(w func(string, ...any)) {
	if r.DefaultDesign == "" || r.OtherDesign == "" {
		return
	}
	var direct, prefix Design
	for _, d := range r.Throughput {
		if d.Name != r.DefaultDesign && d.Name != r.OtherDesign {
			continue
		}
		switch d.Layout {
		case "direct":
			direct = d
		case "prefix":
			prefix = d
		}
	}
	w("### Direct or prefix on the default ladder\n\n")
	if direct.Name == "" || prefix.Name == "" {
		w("Not compared: %s.\n\n", strings.Join(r.unmeasured(), ", ")+" was not measured on this broker")
		return
	}
	w("| measure | %s | %s | direct ÷ prefix |\n|---|---:|---:|---:|\n", direct.Name, prefix.Name)
	row := func(what, a, b string, x, y float64) {
		ratio := "–"
		if x > 0 && y > 0 {
			ratio = strconv.FormatFloat(x/y, 'f', 2, 64)
		}
		w("| %s | %s | %s | %s |\n", what, a, b, ratio)
	}
	row("throughput at saturation, msg/s", topology.FormatRate(direct.DeliveredPerS), topology.FormatRate(prefix.DeliveredPerS), direct.DeliveredPerS, prefix.DeliveredPerS)
	row("broker CPU at saturation, µs/msg", formatUS(direct.BrokerCPUus), formatUS(prefix.BrokerCPUus), direct.BrokerCPUus, prefix.BrokerCPUus)
	for _, pd := range r.Punctuality {
		if pd.Design != direct.Name || pd.OfferedPerS <= 0 {
			continue
		}
		for _, pp := range r.Punctuality {
			if pp.Design != prefix.Name || pp.OfferedPerS != pd.OfferedPerS {
				continue
			}
			a, b := pd.Phase, pp.Phase
			row(fmt.Sprintf("p50 / p99 lateness at %s msg/s, ms", pd.Offered),
				FormatMS(a.Lateness.P50)+" / "+FormatMS(a.Lateness.P99), FormatMS(b.Lateness.P50)+" / "+FormatMS(b.Lateness.P99), a.Lateness.P99, b.Lateness.P99)
			row(fmt.Sprintf("broker CPU at %s msg/s, µs/msg", pd.Offered), formatUS(a.BrokerCPUus), formatUS(b.BrokerCPUus), a.BrokerCPUus, b.BrokerCPUus)
		}
	}
	w("\nThe lateness ratio compares p99s. Every direct message also carries its BCC keys, which a producer that is not rungs must compute (README, \"The direct layout and producers in other languages\").\n\n")
}

// label is a design's name in a table, marked when it is the default
// ladder's shape or that shape in the other layout, and when it is unsafe
// on this broker.
func (r Report) label(design string) string {
	out := design
	switch {
	case design == "":
		return ""
	case design == r.DefaultDesign:
		out += " (**the default**)"
	case design == r.OtherDesign:
		out += " (the default's shape, **other layout**)"
	}
	for _, u := range r.Unsafe {
		if u.Design == design {
			out += " (**unsafe on this version**, below)"
		}
	}
	return out
}

// writeUnsafe says why each unsafe design is so on this broker.
func (r Report) writeUnsafe(w func(string, ...any)) {
	if len(r.Unsafe) == 0 {
		return
	}
	w("### Unsafe on RabbitMQ %s\n\n", r.Broker.RabbitMQ)
	for _, u := range r.Unsafe {
		w("- %s: %s.\n", u.Design, u.Why)
	}
	w("\n")
}

// formatUS prints microseconds, or "–" when not measured.
func formatUS(v float64) string {
	if v <= 0 {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func formatRatio(v float64) string {
	if v <= 0 {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// Millis is d in milliseconds, as the reports' _ms fields hold it.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ms(d time.Duration) string { return FormatMS(Millis(d)) + "ms" }

// FormatMS prints milliseconds with precision that suits their size.
func FormatMS(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) < 1:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case math.Abs(v) < 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// FormatSeconds prints a run's length in seconds, to a tenth.
func FormatSeconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(100 * time.Millisecond).String()
}
