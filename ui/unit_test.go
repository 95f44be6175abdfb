package ui

import (
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"
)

func TestFormats(t *testing.T) {
	cases := map[string]struct{ got, want string }{
		"short exact":      {ShortDelay(8*time.Minute + 32*time.Second), "8m32s"},
		"short hours":      {ShortDelay(time.Hour + 8*time.Minute + 16*time.Second), "1h8m"},
		"short rounds":     {ShortDelay(3*24*time.Hour + 49*time.Minute), "3d1h"},
		"short drops zero": {ShortDelay(2 * time.Hour), "2h"},
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
