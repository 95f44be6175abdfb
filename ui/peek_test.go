package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

func parkedState() PeekState {
	busy := fixture.Busy()
	var ladders []topology.Ladder
	for _, f := range topology.Discover(busy) {
		ladders = append(ladders, f.Ladder)
	}
	r := fixture.Parked()
	return PeekState{
		Queue: r.Queue, QueueType: "classic", Ready: r.Ready, Messages: r.Messages, Stories: stories(r.Messages, ladders),
		Effect: "peeking left them in the queue, in order, marked redelivered",
		At:     fixture.PeekedAt, Now: fixture.PeekedAt, MaxBody: DefaultMaxBody,
	}
}

func TestPeekViewGolden(t *testing.T) {
	cases := map[string]func() PeekState{
		"json": parkedState,
		"history": func() PeekState {
			s := parkedState()
			s.Selected = 1
			return s
		},
		"binary": func() PeekState {
			s := parkedState()
			s.Selected = 2
			return s
		},
		"json-scrolled": func() PeekState {
			s := parkedState()
			s.Scroll = 12
			return s
		},
		"quorum-forced": func() PeekState {
			s := parkedState()
			s.QueueType = "quorum"
			for i := range s.Messages {
				s.Messages[i].DeliveryCount = int64(i + 3)
			}
			s.Effect, s.Warn = "forced: peeking left them in order, marked redelivered, and raised x-delivery-count by 1", true
			return s
		},
		"empty": func() PeekState {
			s := parkedState()
			s.Messages, s.Ready = nil, 0
			return s
		},
	}
	for name, mk := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d", name, sz.w, sz.h), func(t *testing.T) {
				body := sz.h - HeaderHeight - 1
				view := PeekView(mk(), NewStyles(true), sz.w, body)
				checkFrame(t, view, sz.w, body)
				golden.RequireEqual(t, ansi.Strip(view))
			})
		}
	}
}

func TestPeekDetailScrollsToTheEnd(t *testing.T) {
	s := parkedState()
	for _, sz := range sizes {
		h := sz.h - HeaderHeight - 1
		s.Scroll = 1 << 20
		view := ansi.Strip(PeekView(s, NewStyles(true), sz.w, h))
		if !strings.Contains(view, "x-rungs-delay-ms=90000") {
			t.Errorf("%dx%d: scrolled to the end, the last header is not shown:\n%s", sz.w, sz.h, view)
		}
		if n := s.DetailLen(sz.w); n <= s.DetailHeight(h) && sz.h == 24 {
			t.Errorf("%dx%d: the detail (%d lines) should need scrolling", sz.w, sz.h, n)
		}
	}
}

func TestMessageTextIsWhatPeekPrints(t *testing.T) {
	ms := parkedState().Messages
	got := strings.Join(MessageText(ms[0], parkedState().Stories[0], DefaultMaxBody), "\n")
	for _, want := range []string{
		"#1  order-1042",
		"  exchange      orders.work.dlx",
		"  body          80 bytes, JSON",
		`                  "customer": "acme",`,
		"  x-death       +0s     orders.rung.06  rung 6 (1m4s)  expired ×1   09:19:53  from orders.ingest key 0.0.0.1.0.1.1.0.1.0.orders.work",
		"                +1m35s  orders.work     target         rejected ×3  09:21:28  from orders.rung.01.expired key 0.0.0.1.0.1.1.0.1.0.orders.work",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("MessageText lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\x1b") {
		t.Error("MessageText wrote escape sequences")
	}
	if got := strings.Join(MessageText(ms[1], stories(ms, nil)[1], 0), "\n"); !strings.Contains(got, "  retries       attempt 1  2025-03-14 09:16:53  retried after 10s  gateway timeout after 30s") {
		t.Errorf("no retry history:\n%s", got)
	}
}

func TestReplayDialogGolden(t *testing.T) {
	base := ReplayState{Source: "orders.work.parked", Describe: "back where each came from (its latest x-death entry, or x-rungs-queue)", Ready: 17, Limit: 0, Rate: 200}
	cases := map[string]func() ReplayState{
		"confirm": func() ReplayState { return base },
		"running": func() ReplayState {
			s := base
			s.Phase = ReplayRunning
			s.Counts = broker.MoveProgress{Moved: 9, Kept: 1, Elapsed: 2 * time.Second, SourceReady: -1}
			return s
		},
		"cancelled": func() ReplayState {
			s := base
			s.Phase, s.Cancelled = ReplayDone, true
			s.Counts = broker.MoveProgress{Moved: 9, Elapsed: 2 * time.Second, Stopped: "cancelled", Done: true}
			return s
		},
		"failed": func() ReplayState {
			s := base
			s.Phase, s.Park = ReplayDone, "orders.unroutable"
			s.Counts = broker.MoveProgress{Moved: 4, Parked: 2, Unknown: 1, Reconnects: 1, Elapsed: 3 * time.Second, Stopped: "failed",
				Reasons: map[string]int{"unroutable: the default exchange key \"gone\" (312 NO_ROUTE)": 2}, Done: true}
			s.Err = "move from \"orders.work.parked\": the publishing channel was closed by the broker"
			return s
		},
	}
	for name, mk := range cases {
		for _, w := range []int{80, 120} {
			t.Run(fmt.Sprintf("%s/%d", name, w), func(t *testing.T) {
				view := Replay(mk(), NewStyles(true), min(w, 76))
				for i, l := range strings.Split(view, "\n") {
					if lw := ansi.StringWidth(l); lw > w {
						t.Errorf("line %d is %d cells wide", i+1, lw)
					}
				}
				golden.RequireEqual(t, ansi.Strip(view))
			})
		}
	}
}

func TestReplayReportWording(t *testing.T) {
	c := broker.MoveProgress{Moved: 3, Parked: 1, Kept: 2, Skipped: 4, Elapsed: 1500 * time.Millisecond, Stopped: "the source is empty",
		Reasons: map[string]int{"b": 1, "a": 1, "c": 3}}
	got := ReplayReport(c, "dlq", "to queue work", "hold", "--where")
	want := []string{
		"replayed 3 message(s) from dlq to queue work in 1.5s (2.7/s); stopped: the source is empty",
		"  1 parked in hold, 2 kept on the source, 4 skipped by --where",
		"  3 × c", "  1 × a", "  1 × b",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ReplayReport() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := ReplayReport(c, "dlq", "to queue work", "", ""); strings.Contains(got[1], "skipped") || strings.Contains(got[1], " in ") {
		t.Errorf("without a filter or a parking queue: %q", got[1])
	}
}

// stories reads each message's story, as ops.PeekStories does for the
// console and rungs peek.
func stories(ms []broker.PeekedMessage, ladders []topology.Ladder) []topology.Story {
	out := make([]topology.Story, len(ms))
	for i, m := range ms {
		out[i] = topology.StoryOf(m.Headers, m.Exchange, m.RoutingKey, ladders)
	}
	return out
}
