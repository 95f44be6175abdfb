package bench

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

func TestRank(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(101-i)*time.Millisecond)
	}
	d := NewDist(ds)
	if d.N != 100 || d.Min != time.Millisecond || d.P50 != 50*time.Millisecond || d.P99 != 99*time.Millisecond || d.Max != 100*time.Millisecond {
		t.Fatalf("newDist = %+v", d)
	}
	if one := NewDist([]time.Duration{7}); one.P50 != 7 || one.P99 != 7 || one.Max != 7 {
		t.Fatalf("one sample: %+v", one)
	}
	if (NewDist(nil) != Dist{}) {
		t.Fatal("empty dist is not zero")
	}
}

func TestFormat(t *testing.T) {
	cases := map[string]struct{ got, want string }{
		"ms":        {FormatMS(12.345), "12.3"},
		"sub ms":    {FormatMS(0.1234), "0.123"},
		"big ms":    {FormatMS(1536.4), "1536"},
		"no cpu":    {formatUS(0), "–"},
		"no ratio":  {formatRatio(0), "–"},
		"ratio":     {formatRatio(0.856), "0.86"},
		"design r2": {designName(mustLadder(t, "prefix", 2)), "prefix"},
		"design r8": {designName(mustLadder(t, "prefix", 8)), "prefix r8"},
	}
	for name, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", name, tc.got, tc.want)
		}
	}
}

func TestDesigns(t *testing.T) {
	ls, err := DefaultOptions().designs()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ls {
		got = append(got, designName(l)+"/"+time.Duration(l.MaxDelay()).String())
		if l.MaxDelay() < ls[0].MaxDelay() {
			t.Errorf("%s holds less than the binary ladder", designName(l))
		}
	}
	want := "prefix/4h39m37.215s prefix r16/4h39m37.215s direct/4h39m37.215s direct r16/4h39m37.215s suffix/4h39m37.215s prefix quorum/4h39m37.215s"
	if strings.Join(got, " ") != want {
		t.Fatalf("designs: %s\nwant %s", strings.Join(got, " "), want)
	}
	o := DefaultOptions()
	o.Layouts, o.Radixes = []string{"prefix", "direct"}, []int{2, 16}
	if ls, err = o.designs(); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, l := range ls {
		got = append(got, designName(l)+"/"+l.Name)
	}
	if want := "prefix/bench.prefix prefix r16/bench.prefix.r16 direct/bench.direct direct r16/bench.direct.r16 prefix quorum/bench.prefix.quorum"; strings.Join(got, " ") != want {
		t.Fatalf("designs: %s\nwant %s", strings.Join(got, " "), want)
	}
	// The default ladder's shape joins the designs, in the run's range,
	// unless one of them has it already.
	// unless one of them has it already, and so does its shape in the other
	// layout a new ladder may get.
	for name, tc := range map[string]struct {
		def  topology.Ladder
		want string
	}{
		"4.0 default, new":     {topology.Ladder{Layout: "direct", Radix: 16, QueueType: topology.Quorum}, "direct r16 quorum/bench.default prefix r16 quorum/bench.default.other"},
		"3.10 default, new":    {topology.Ladder{Layout: "prefix", Radix: 16, QueueType: topology.Quorum}, "prefix r16 quorum/bench.default direct r16 quorum/bench.default.other"},
		"classic, measured":    {topology.Ladder{Layout: "direct", Radix: 16, QueueType: topology.Classic}, ""},
		"binary quorum, there": {topology.Ladder{Layout: "prefix", Radix: 2, QueueType: topology.Quorum}, "direct quorum/bench.default.other"},
		"no other layout":      {topology.Ladder{Layout: "suffix", Radix: 2, QueueType: topology.Quorum}, "suffix quorum/bench.default"},
	} {
		o := DefaultOptions()
		o.Default = &tc.def
		ls, err := o.designs()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		base, _ := DefaultOptions().designs()
		var added []string
		for _, l := range ls[len(base):] {
			added = append(added, designName(l)+"/"+l.Name)
			if l.MaxDelay() != base[0].MaxDelay() {
				t.Errorf("%s: %s holds %s, want the run's range %s", name, designName(l), l.MaxDelay(), base[0].MaxDelay())
			}
		}
		if got := strings.Join(added, " "); got != tc.want {
			t.Errorf("%s: added %q, want %q", name, got, tc.want)
		}
	}
	bad := map[string]Options{
		"nsb":        {Layouts: []string{"nsb"}},
		"bits":       {DelayBits: 30, Levels: 24},
		"no ladders": {Layouts: []string{"prefix"}, Radixes: []int{}},
	}
	for name, o := range bad {
		o = o.withDefaults()
		if name == "no ladders" {
			o.Radixes = []int{}
		}
		if _, err := o.designs(); !errors.Is(err, ErrOptions) && name != "no ladders" {
			t.Errorf("%s: %v, want ErrOptions", name, err)
		}
	}
}

func TestMarkdownTargets(t *testing.T) {
	r := Report{
		Options: reportOptions(DefaultOptions().withDefaults()),
		Limit:   []Phase{{Name: "limit", DeliveredPerS: 20000, BrokerCPUus: 40}},
		Throughput: []Design{{Name: "prefix", Layout: "prefix", Radix: 2, Levels: 24,
			DeliveredPerS: 2000, HopBoundPerS: 2857, MeanHops: 6, Ratio: 0.7, RatioMin: 0.6, RatioMax: 0.8}},
		Punctuality: []Punct{{Design: "prefix", Offered: topology.FormatRate(1000), OfferedPerS: 1000, Rounds: []Phase{
			{Lateness: DistMS{N: 10, P50: 3, P99: 30, Max: 40}},
			{Lateness: DistMS{N: 10, P50: 3, P99: 12, Max: 20}},
			{Lateness: DistMS{N: 10, P50: 2, P99: 5, Max: 9}},
		}}},
	}
	r.Punctuality[0].summarise()
	r.Targets = r.targets()
	met := map[string]bool{}
	for _, tg := range r.Targets {
		met[strings.Fields(tg.Name)[0]+" "+strings.Fields(tg.Name)[1]] = tg.Met
	}
	want := map[string]bool{"prefix throughput": false, "prefix p99": true}
	for k, v := range want {
		if got, ok := met[k]; !ok || got != v {
			t.Errorf("target %q: met=%v (present %v), want %v", k, got, ok, v)
		}
	}
	md := r.Markdown()
	for _, s := range []string{"| prefix | 24 |", "**0.70**", "| prefix | 1k |", "| 12.0 |", "| 5.0–30.0 |", "none before its delay"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
}

func mustLadder(t *testing.T, layout string, radix int) topology.Ladder {
	t.Helper()
	l, err := topology.Ladder{Layout: layout, Radix: radix, Levels: 6, Unit: time.Millisecond, QueueType: topology.Classic}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// With the default radix of both layouts and radix 2 measured, the run is
// judged on the relative targets too.
func TestRelativeTargets(t *testing.T) {
	r := Report{Throughput: []Design{
		{Name: "prefix", Layout: "prefix", Radix: 2, DeliveredPerS: 800},
		{Name: "prefix r16", Layout: "prefix", Radix: 16, DeliveredPerS: 1700},
		{Name: "direct r16", Layout: "direct", Radix: 16, DeliveredPerS: 2600},
	}}
	got := map[string]bool{}
	for _, tg := range r.targets() {
		if strings.Contains(tg.Name, "÷ prefix throughput") || strings.Contains(tg.Name, "÷ prefix r16 throughput") {
			got[strings.Fields(tg.Name)[0]+" "+strings.Fields(tg.Name)[1]+" / "+strings.Fields(tg.Name)[4]+" "+strings.Fields(tg.Name)[5]] = tg.Met
		}
	}
	want := map[string]bool{"prefix r16 / prefix throughput": false, "direct r16 / prefix throughput": true, "direct r16 / prefix r16": true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("relative targets %v, want %v", got, want)
	}
}

// A design is screened by the version rules apply and doctor follow: a
// direct ladder is not measured where every dead-lettering drops BCC keys,
// and a direct quorum ladder is measured but labelled where a dead-letter
// retry drops them.
func TestScreenByVersion(t *testing.T) {
	o := DefaultOptions()
	o.Layouts, o.Radixes, o.Quorum = []string{"direct"}, []int{16}, false
	o.Default = &topology.Ladder{Layout: "prefix", Radix: 16, QueueType: topology.Quorum}
	designs, err := o.designs()
	if err != nil {
		t.Fatal(err)
	}
	for version, want := range map[string]struct {
		measured string
		unsafe   string // design: measured
	}{
		"3.10.8": {"direct r16 prefix r16 quorum direct r16 quorum", "direct r16 quorum: true"},
		"3.12.4": {"direct r16 prefix r16 quorum direct r16 quorum", "direct r16 quorum: true"},
		"3.13.1": {"prefix r16 quorum", "direct r16: false, direct r16 quorum: false"},
		"3.13.3": {"direct r16 prefix r16 quorum direct r16 quorum", ""},
		"4.3.6":  {"direct r16 prefix r16 quorum direct r16 quorum", ""},
		"":       {"direct r16 prefix r16 quorum direct r16 quorum", ""},
	} {
		v, _ := topology.ParseVersion(version)
		var r Report
		var got, unsafe []string
		for _, l := range r.screen(designs, v) {
			got = append(got, designName(l))
		}
		for _, u := range r.Unsafe {
			unsafe = append(unsafe, fmt.Sprintf("%s: %v", u.Design, u.Measured))
		}
		if strings.Join(got, " ") != want.measured || strings.Join(unsafe, ", ") != want.unsafe {
			t.Errorf("%q: measured %q, unsafe %q; want %q, %q", version, strings.Join(got, " "), strings.Join(unsafe, ", "), want.measured, want.unsafe)
		}
	}
}

// The Markdown marks the default and its other-layout shape in both tables,
// compares them direct against prefix, and keeps a row for a design left out
// as unsafe.
func TestMarkdownLayoutPair(t *testing.T) {
	punct := func(design string, load, p50, p99, cpu float64) Punct {
		p := Punct{Design: design, Offered: topology.FormatRate(load), OfferedPerS: load, Rounds: []Phase{{Lateness: DistMS{N: 10, P50: p50, P99: p99}, BrokerCPUus: cpu}}}
		p.summarise()
		return p
	}
	r := Report{
		Options:       reportOptions(DefaultOptions().withDefaults()),
		DefaultDesign: "direct r16 quorum", OtherDesign: "prefix r16 quorum",
		Throughput: []Design{
			{Name: "direct r16 quorum", Layout: "direct", Radix: 16, Levels: 6, DeliveredPerS: 3000, BrokerCPUus: 300},
			{Name: "prefix r16 quorum", Layout: "prefix", Radix: 16, DeliveredPerS: 2000, BrokerCPUus: 400},
		},
		Punctuality: []Punct{
			punct("direct r16 quorum", 1000, 10, 50, 800),
			punct("prefix r16 quorum", 1000, 12, 100, 1000),
		},
	}
	markdownHas(t, r.Markdown(),
		"| direct r16 quorum (**the default**) | 6 |", "| prefix r16 quorum (the default's shape, **other layout**) | 1k |",
		"### Direct or prefix on the default ladder",
		"| throughput at saturation, msg/s | 3k | 2k | 1.50 |",
		"| broker CPU at saturation, µs/msg | 300 | 400 | 0.75 |",
		"| p50 / p99 lateness at 1k msg/s, ms | 10.0 / 50.0 | 12.0 / 100 | 0.50 |",
		"| broker CPU at 1k msg/s, µs/msg | 800 | 1000 | 0.80 |")
	r.Throughput, r.Punctuality = r.Throughput[1:], r.Punctuality[1:]
	r.DefaultDesign, r.OtherDesign = "prefix r16 quorum", "direct r16 quorum"
	r.Unsafe = []UnsafeDesign{{Design: "direct r16 quorum", Why: "not measured: broken here"}}
	markdownHas(t, r.Markdown(),
		"| direct r16 quorum (the default's shape, **other layout**) (**unsafe on this version**, below) | – |",
		"- direct r16 quorum: not measured: broken here.",
		"Not compared: direct r16 quorum was not measured on this broker.")
}

func markdownHas(t *testing.T, md string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// The direct ÷ prefix target pairs ladders of one queue type only.
func TestRelativeTargetsByQueueType(t *testing.T) {
	r := Report{Throughput: []Design{
		{Name: "direct r16", Layout: "direct", Radix: 16, QueueType: "classic", DeliveredPerS: 4000},
		{Name: "direct r16 quorum", Layout: "direct", Radix: 16, QueueType: "quorum", DeliveredPerS: 3000},
		{Name: "prefix r16 quorum", Layout: "prefix", Radix: 16, QueueType: "quorum", DeliveredPerS: 2500},
	}}
	var got []string
	for _, tg := range r.targets() {
		if strings.Contains(tg.Name, "÷ prefix") {
			got = append(got, tg.Name)
		}
	}
	if want := "direct r16 quorum throughput ÷ prefix r16 quorum throughput (the default's margin over the topic ladder: ≥ 1.5 on 4.0, ≥ 1.0 on 3.10)"; len(got) != 1 || got[0] != want {
		t.Fatalf("targets %q, want [%q]", got, want)
	}
}

// A run's phases keep their own order whatever order they are asked in;
// an unknown one is an options error before anything runs.
func TestPhases(t *testing.T) {
	names := func(ps []phase) (out []string) {
		for _, p := range ps {
			out = append(out, p.name)
		}
		return out
	}
	all, err := DefaultOptions().phases()
	if err != nil || !reflect.DeepEqual(names(all), PhaseNames()) {
		t.Fatalf("every phase: %v, %v; want %v", names(all), err, PhaseNames())
	}
	o := DefaultOptions()
	o.Phases = []string{"punctuality", "throughput"}
	if got, err := o.phases(); err != nil || !reflect.DeepEqual(names(got), []string{"throughput", "punctuality"}) {
		t.Errorf("phases %v, %v", names(got), err)
	}
	o.Phases = []string{"punctuality", "nonesuch"}
	if err := o.Check(); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), `"nonesuch"`) {
		t.Errorf("unknown phase: %v", err)
	}
}
