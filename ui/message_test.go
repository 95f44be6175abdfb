package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// The message and replay renderers are shared by the console and the CLI
// (rungs peek, rungs replay): these pin the CLI's output.

func TestRenderBody(t *testing.T) {
	cases := map[string]struct {
		body        string
		contentType string
		max         int
		kind        string
		first       string
		lines       int
	}{
		"empty":           {body: "", kind: "empty"},
		"json by type":    {body: `{"a":1,"b":[2]}`, contentType: "application/json", kind: "JSON", first: "{", lines: 6},
		"json by shape":   {body: ` [1, 2] `, kind: "JSON", first: "[", lines: 4},
		"not quite json":  {body: `{"a":`, contentType: "application/json", kind: "text", first: `{"a":`, lines: 1},
		"text":            {body: "héllo\nworld", kind: "text", first: "héllo", lines: 2},
		"text cut":        {body: strings.Repeat("x", 100), max: 10, kind: "text, first 10 shown", first: strings.Repeat("x", 10), lines: 1},
		"text cut a rune": {body: "ééééé", max: 3, kind: "text, first 3 shown", first: "é", lines: 1},
		"binary":          {body: "\x00\x01\x02binary", kind: "binary, hex", first: "00000000  00 01 02 62 69 6e 61 72  79                       |...binary|", lines: 1},
		"control chars":   {body: "a\x07b", kind: "binary, hex", lines: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kind, lines := Body([]byte(tc.body), tc.contentType, tc.max)
			if kind != tc.kind || len(lines) != tc.lines || tc.first != "" && lines[0] != tc.first {
				t.Errorf("Body() = %q, %q; want %q, %d lines starting %q", kind, lines, tc.kind, tc.lines, tc.first)
			}
		})
	}
}

func TestDeathLinesAndHistory(t *testing.T) {
	l, _ := topology.Ladder{Name: "jobs", Levels: 4, Radix: 2, Unit: time.Second, Targets: []string{"work"}}.Normalize()
	at := time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)
	deaths := []topology.Death{
		{Queue: "work", Reason: "rejected", Count: 1, Time: at.Add(5 * time.Second), Exchange: "jobs.rung.00.expired", RoutingKeys: []string{"0.1.0.1.work"}},
		{Queue: "jobs.rung.02", Reason: "expired", Count: 1, Time: at, Exchange: "jobs.ingest", RoutingKeys: []string{"0.1.0.1.work"}},
	}
	got := DeathLines(topology.Timeline(deaths, []topology.Ladder{l}))
	want := []string{
		"+0s  jobs.rung.02  rung 2 (4s)  expired ×1   13:00:00  from jobs.ingest key 0.1.0.1.work",
		"+5s  work          target       rejected ×1  13:00:05  from jobs.rung.00.expired key 0.1.0.1.work",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("DeathLines() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	h := HistoryLines([]topology.Attempt{
		{N: 1, At: at, Reason: "boom", Delay: 2 * time.Second},
		{N: 2, At: at.Add(3 * time.Second), Reason: "boom again", Parked: true},
	})
	if len(h) != 2 || !strings.Contains(h[0], "retried after 2s") || !strings.Contains(h[1], "parked") {
		t.Errorf("HistoryLines() = %q", h)
	}
	hs := HeaderLines(map[string]any{"b": int64(2), "a": "x", topology.HeaderDeath: []any{}, "t": at, "m": map[string]any{"k": []any{int64(1)}}})
	if strings.Join(hs, "|") != `a=x|b=2|m={"k":[1]}|t=2026-11-22T13:00:00Z` {
		t.Errorf("HeaderLines() = %q", hs)
	}
}

// A direct ladder's trace and peek show the BCC keys it routes by; the
// peek rebuilds them from the routing key, since the broker strips BCC.
func TestDirectTraceAndPathShowBCC(t *testing.T) {
	l, err := topology.Ladder{Name: "jobs", Layout: "direct", Levels: 3, Targets: []string{"orders"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := l.Trace(90*time.Second, "orders")
	if err != nil {
		t.Fatal(err)
	}
	lines := ansi.Strip(strings.Join(traceLines(TraceState{Input: "90s orders", Trace: &tr}, NewStyles(true), 80), "\n"))
	if !strings.Contains(lines, "BCC   i>01.5  01>00.a  00>=orders") {
		t.Errorf("trace pane:\n%s", lines)
	}
	m := broker.PeekedMessage{Delivery: broker.Delivery{Exchange: "jobs.ingest", RoutingKey: tr.Key}}
	text := strings.Join(MessageText(m, topology.StoryOf(m.Headers, m.Exchange, m.RoutingKey, []topology.Ladder{l}), 100), "\n")
	for _, want := range []string{"path          1m30s to orders, rebuilt from the routing key", "BCC i>01.5  01>00.a  00>=orders", "jobs.rung.01.5 (1m20s) → jobs.rung.00.a (10s) → orders"} {
		if !strings.Contains(text, want) {
			t.Errorf("peek lacks %q:\n%s", want, text)
		}
	}
}
