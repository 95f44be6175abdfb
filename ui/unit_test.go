package ui

import (
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui/fixture"
)

func TestStuck(t *testing.T) {
	const ttl, every = time.Minute, 5 * time.Second
	cases := map[string]struct {
		stats topology.QueueStats
		still time.Duration
		want  string // substring; "" means not stuck
	}{
		"empty":                   {topology.QueueStats{}, time.Hour, ""},
		"young head":              {topology.QueueStats{Ready: 3, HeadAge: ttl}, 0, ""},
		"head within slack":       {topology.QueueStats{Ready: 3, HeadAge: ttl + 2*every}, 0, ""},
		"head past ttl and slack": {topology.QueueStats{Ready: 3, HeadAge: ttl + 2*every + time.Second}, 0, "oldest message is 1m11s old"},
		"still within slack":      {topology.QueueStats{Ready: 3}, ttl + 2*every, ""},
		"still past ttl":          {topology.QueueStats{Ready: 3}, 2 * ttl, "depth 3 unchanged for 2m"},
		"unacked only":            {topology.QueueStats{Unacked: 2}, 2 * ttl, "depth 2 unchanged"},
		"no ttl (not a rung)":     {topology.QueueStats{Ready: 3, HeadAge: time.Hour}, time.Hour, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rungTTL := ttl
			if name == "no ttl (not a rung)" {
				rungTTL = 0
			}
			got := Stuck(tc.stats, rungTTL, rungTTL, tc.still, every)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("Stuck = %q, want %q", got, tc.want)
			}
		})
	}
	if Stuck(topology.QueueStats{Ready: 1}, time.Second, 0, 11*time.Second, 0) != "" {
		t.Error("a zero interval should mean the 5s default, giving 10s of slack")
	}
	// A message keeps its publish timestamp through dead-lettering: in the
	// 4s rung of a ladder whose rungs above hold up to 60s, an age of 30s
	// is normal, 80s is not.
	if got := Stuck(topology.QueueStats{Ready: 1, HeadAge: 30 * time.Second}, 4*time.Second, 60*time.Second, 0, every); got != "" {
		t.Errorf("a message that came down from higher rungs is not stuck: %q", got)
	}
	if got := Stuck(topology.QueueStats{Ready: 1, HeadAge: 80 * time.Second}, 4*time.Second, 60*time.Second, 0, every); got == "" {
		t.Error("a message older than the ladder can hold it here is stuck")
	}
}

func TestMaxAge(t *testing.T) {
	ages := MaxAge(fixture.Orders())
	if ages[9] != 512*time.Second || ages[0] != 1023*time.Second {
		t.Errorf("binary: level 9 %s (want 8m32s), level 0 %s (want 17m3s)", ages[9], ages[0])
	}
	ages = MaxAge(fixture.Retry4())
	// Radix 4, 100ms: the top level's longest rung is 3·4⁴·100ms = 76.8s.
	if ages[4] != 76800*time.Millisecond || ages[0] != fixture.Retry4().MaxDelay() {
		t.Errorf("radix 4: level 4 %s, level 0 %s (want the max delay %s)", ages[4], ages[0], fixture.Retry4().MaxDelay())
	}
}

func TestFormats(t *testing.T) {
	cases := map[string]struct{ got, want string }{
		"count small":      {Count(999_999), "999999"},
		"count millions":   {Count(1_250_000), "1.2M"},
		"count tens of M":  {Count(34_000_000), "34M"},
		"count billions":   {Count(5_600_000_000), "5.6G"},
		"rate zero":        {Rate(0), "0"},
		"rate tiny":        {Rate(0.01), "<0.1"},
		"rate small":       {Rate(2.45), "2.5"},
		"rate big":         {Rate(250), "250"},
		"rate huge":        {Rate(12_500), "12k"},
		"delay ms":         {Delay(1500 * time.Millisecond), "1.5s"},
		"delay below 1s":   {Delay(800 * time.Millisecond), "800ms"},
		"delay exact":      {Delay(90 * time.Second), "1m30s"},
		"short exact":      {ShortDelay(8*time.Minute + 32*time.Second), "8m32s"},
		"short hours":      {ShortDelay(time.Hour + 8*time.Minute + 16*time.Second), "1h8m"},
		"short rounds":     {ShortDelay(3*24*time.Hour + 49*time.Minute), "3d1h"},
		"short drops zero": {ShortDelay(2 * time.Hour), "2h"},
		"age seconds":      {Age(42 * time.Second), "42s"},
		"age days":         {Age(72 * time.Hour), "3d"},
	}
	for name, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", name, tc.got, tc.want)
		}
	}
}

func TestTableDropsByRank(t *testing.T) {
	cols := []column{
		{id: "a", width: 10},
		{id: "b", width: 10, drop: 1},
		{id: "c", width: 10, drop: 2},
		{id: "d", width: 5, flex: 10},
	}
	for w, want := range map[int]string{
		38: "a b c d",
		30: "a b d",
		20: "a d",
	} {
		tb := newTable(cols, w)
		var got []string
		for _, c := range cols {
			if tb.has(c.id) {
				got = append(got, c.id)
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("width %d shows %v, want %s", w, got, want)
		}
		if tb.used() > w {
			t.Errorf("width %d: layout uses %d", w, tb.used())
		}
	}
	if tb := newTable(cols, 60); tb.colWidth("d") != 15 {
		t.Errorf("flex column got %d cells, want its 5 plus 10", tb.colWidth("d"))
	}
}

func TestFitKeepsWidth(t *testing.T) {
	for _, s := range []string{"", "short", "orders.rung.09", "nsb.v2.delay-level-27"} {
		for _, w := range []int{1, 5, 12, 30} {
			if got := ansi.StringWidth(fit(s, w, false)); got != w {
				t.Errorf("fit(%q, %d) is %d wide", s, w, got)
			}
			if got := ansi.StringWidth(fitLeft(s, w)); got != w {
				t.Errorf("fitLeft(%q, %d) is %d wide", s, w, got)
			}
		}
	}
	if got := fitLeft("nsb.v2.delay-level-27", 12); got != "…y-level-27" && !strings.HasSuffix(got, "level-27") {
		t.Errorf("fitLeft keeps the end: %q", got)
	}
}

func TestBar(t *testing.T) {
	for _, tc := range []struct {
		v, max int64
		w      int
		fill   string
	}{
		{0, 10, 4, ""},
		{10, 10, 4, "████"},
		{5, 10, 4, "██"},
		{1, 1000, 4, "▏"}, // a non-empty queue always shows
		{20, 10, 4, "███+"},
	} {
		fill, track := barText(tc.v, tc.max, tc.w)
		if fill != tc.fill || ansi.StringWidth(fill+track) != tc.w {
			t.Errorf("bar(%d/%d, %d) = %q+%q", tc.v, tc.max, tc.w, fill, track)
		}
	}
}

func TestKeyHintsKeepHelp(t *testing.T) {
	st := NewStyles(true)
	bs := []key.Binding{
		key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "first action")),
		key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "second action")),
		key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "off"), key.WithDisabled()),
		key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
	}
	if got := ansi.Strip(KeyHints(bs, st, 80)); got != "a first action · b second action · ? help" {
		t.Errorf("wide: %q", got)
	}
	got := ansi.Strip(KeyHints(bs, st, 30))
	if got != "a first action … ? help" || ansi.StringWidth(got) > 30 {
		t.Errorf("narrow: %q", got)
	}
}

func TestHeaderNeverLosesState(t *testing.T) {
	st := NewStyles(false)
	h := HeaderState{
		Broker: "guest@rabbit-prod-eu-west-1.internal:5672", Vhost: "/orders", Version: "RabbitMQ 4.1.0",
		AMQP:     Conn{Kind: ConnWaiting, Text: "reconnecting in 4s (attempt 3)", Short: "retry in 4s"},
		Refresh:  Conn{Kind: ConnDown, Text: "stale since 09:26:53", Short: "stale"},
		ReadOnly: true, Crumbs: []string{"ladders", "orders"},
		Result: Result{Kind: ResultOK, Text: "published 10"},
	}
	for _, w := range []int{60, 80, 120} {
		out := ansi.Strip(Header(h, st, w))
		lines := strings.Split(out, "\n")
		if len(lines) != HeaderHeight {
			t.Fatalf("%d: %d lines", w, len(lines))
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > w {
				t.Errorf("%d: line too wide: %q", w, l)
			}
		}
		for _, want := range []string{"READ-ONLY", "retry", "stale", "published 10"} {
			if !strings.Contains(out, want) {
				t.Errorf("%d: %q missing from\n%s", w, want, out)
			}
		}
	}
}

func TestLadderRowsMissingAndDeadLetters(t *testing.T) {
	snap := fixture.Healthy()
	var qs []topology.Queue
	for _, q := range snap.Queues {
		if q.Name != "orders.rung.04" {
			qs = append(qs, q)
		}
	}
	snap.Queues = qs
	f := topology.Discover(snap)[0]
	rows := LadderRows(f, snap, Health{})
	kinds := map[string]RowKind{}
	for _, r := range rows {
		kinds[r.Queue] = r.Kind
		if r.Queue == "orders.rung.04" && (!r.Missing || r.Severity != Problem) {
			t.Errorf("a deleted rung must show as missing: %+v", r)
		}
	}
	for q, k := range map[string]RowKind{
		"orders.rung.09": RungRow, "orders.done": TargetRow, "orders.work": TargetRow,
		"orders.unroutable": UnroutableRow, "orders.work.parked": DeadLetterRow,
	} {
		if kinds[q] != k {
			t.Errorf("%s is %v, want %v", q, kinds[q], k)
		}
	}
	if rows[0].Queue != "orders.rung.09" {
		t.Errorf("rows start with %s, want the highest rung", rows[0].Queue)
	}
}

func TestApplyTraceLeavesInputAlone(t *testing.T) {
	snap := fixture.Healthy()
	f := topology.Discover(snap)[0]
	rows := LadderRows(f, snap, Health{})
	tr, err := f.Ladder.Trace(5*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	traced := ApplyTrace(rows, &tr)
	hops := 0
	for i := range traced {
		if traced[i].Hop != nil {
			hops++
		}
		if rows[i].Hop != nil {
			t.Fatal("ApplyTrace changed its input")
		}
	}
	if hops != 2 {
		t.Errorf("5s crosses %d rungs, want 2 (4s and 1s)", hops)
	}
}
