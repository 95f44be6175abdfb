package bench

import (
	"errors"
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
	d := newDist(ds)
	if d.N != 100 || d.Min != time.Millisecond || d.P50 != 50*time.Millisecond || d.P99 != 99*time.Millisecond || d.Max != 100*time.Millisecond {
		t.Fatalf("newDist = %+v", d)
	}
	if one := newDist([]time.Duration{7}); one.P50 != 7 || one.P99 != 7 || one.Max != 7 {
		t.Fatalf("one sample: %+v", one)
	}
	if (newDist(nil) != Dist{}) {
		t.Fatal("empty dist is not zero")
	}
}

func TestFormat(t *testing.T) {
	cases := map[string]struct{ got, want string }{
		"rate":      {formatRate(1234567.4), "1,234,567"},
		"small":     {formatRate(999), "999"},
		"ms":        {formatMS(12.345), "12.3"},
		"sub ms":    {formatMS(0.1234), "0.123"},
		"big ms":    {formatMS(1536.4), "1536"},
		"bytes":     {formatBytes(3 << 10), "3.0 KiB"},
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
	for name, tc := range map[string]struct {
		def  topology.Ladder
		want string
	}{
		"4.0 default, new":     {topology.Ladder{Layout: "direct", Radix: 16, QueueType: topology.Quorum}, "direct r16 quorum/4h39m37.215s"},
		"3.10 default, new":    {topology.Ladder{Layout: "prefix", Radix: 16, QueueType: topology.Quorum}, "prefix r16 quorum/4h39m37.215s"},
		"classic, measured":    {topology.Ladder{Layout: "direct", Radix: 16, QueueType: topology.Classic}, ""},
		"binary quorum, there": {topology.Ladder{Layout: "prefix", Radix: 2, QueueType: topology.Quorum}, ""},
	} {
		o := DefaultOptions()
		o.Default = &tc.def
		ls, err := o.designs()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		base, _ := DefaultOptions().designs()
		last := ls[len(ls)-1]
		switch {
		case tc.want == "" && len(ls) != len(base):
			t.Errorf("%s: %d designs, want %d (no duplicate shape)", name, len(ls), len(base))
		case tc.want != "" && (len(ls) != len(base)+1 || designName(last)+"/"+last.MaxDelay().String() != tc.want):
			t.Errorf("%s: last design %s/%s of %d, want %s", name, designName(last), last.MaxDelay(), len(ls), tc.want)
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
		Punctuality: []Punct{{Design: "prefix", Offered: "1,000", OfferedPerS: 1000, Rounds: []Phase{
			{Lateness: DistMS{N: 10, P50: 3, P99: 30, Max: 40}},
			{Lateness: DistMS{N: 10, P50: 3, P99: 12, Max: 20}},
			{Lateness: DistMS{N: 10, P50: 2, P99: 5, Max: 9}},
		}}},
		Console: ConsoleCost{Queues: 1000, Ladders: 10, RungsPerLadder: 28, StatsRequests: 1, StatsBytes: 1 << 20, RenderNs: 400000},
	}
	r.Punctuality[0].summarise()
	r.Targets = r.targets()
	met := map[string]bool{}
	for _, tg := range r.Targets {
		met[strings.Fields(tg.Name)[0]+" "+strings.Fields(tg.Name)[1]] = tg.Met
	}
	want := map[string]bool{"prefix throughput": false, "prefix p99": true, "render a": true, "management requests": true}
	for k, v := range want {
		if got, ok := met[k]; !ok || got != v {
			t.Errorf("target %q: met=%v (present %v), want %v", k, got, ok, v)
		}
	}
	md := r.Markdown()
	for _, s := range []string{"| prefix | 24 |", "**0.70**", "| prefix | 1,000 |", "| 12.0 |", "| 5.0–30.0 |", "none before its delay"} {
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
