package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/rungs-dev/rungs/topology"
)

// bridges are two bridges of a vhost: one with a backlog and a lag and
// something parked, one nobody consumes.
func bridges() []topology.Bridge {
	q := func(name string, ready, unacked, consumers int64, age time.Duration) topology.Queue {
		return topology.Queue{Name: name, Stats: topology.QueueStats{Ready: ready, Unacked: unacked, Consumers: consumers, HeadAge: age}}
	}
	return []topology.Bridge{
		{Exchange: "orders.delayed", Intake: q("orders.delayed.bridge.intake", 1200, 50, 2, 3*time.Second),
			Due: q("orders.delayed.bridge.due", 4, 0, 2, 0), Parked: q("orders.delayed.bridge.parked", 3, 0, 0, 0), HasDue: true, HasParked: true},
		{Exchange: "notifications.email.transactional.delayed", Intake: q("notifications.email.transactional.delayed.bridge.intake", 7, 0, 0, 0),
			Due: q("notifications.email.transactional.delayed.bridge.due", 0, 0, 0, 0), Parked: q("notifications.email.transactional.delayed.bridge.parked", 0, 0, 0, 0), HasDue: true, HasParked: true},
	}
}

// quorumIntake is a bridge consumed by one, with n in its intake and no
// age of the oldest: the broker gives none for a quorum queue.
func quorumIntake(n int64) []topology.Bridge {
	b := bridges()[0]
	b.Intake.Stats.Ready, b.Intake.Stats.Unacked, b.Intake.Stats.HeadAge, b.Intake.Stats.Consumers = n, 0, 0, 1
	b.Parked.Stats.Ready = 0
	return []topology.Bridge{b}
}

func TestBridgeOverlayGolden(t *testing.T) {
	st := NewStyles(true)
	at := time.Date(2026, 11, 28, 10, 4, 5, 0, time.UTC)
	cases := map[string]BridgeState{
		"two":         {Vhost: "shop", Bridges: bridges(), Read: true, At: at, Every: 5 * time.Second, Hints: "v peek parked · esc close"},
		"second":      {Vhost: "shop", Bridges: bridges(), Read: true, At: at, Every: 5 * time.Second, Selected: 1, Hints: "esc close"},
		"lag-unknown": {Vhost: "shop", Bridges: quorumIntake(40), Read: true, At: at, Every: 5 * time.Second, Hints: "esc close"},
		"keeping-up":  {Vhost: "shop", Bridges: quorumIntake(0), Read: true, At: at, Every: 5 * time.Second, Hints: "esc close"},
		"none":        {Vhost: "shop", Read: true, At: at, Every: 5 * time.Second, Hints: "esc close"},
		"reading":     {Vhost: "shop", Hints: "esc close"},
		"failed":      {Vhost: "shop", Read: true, Err: "list queues: 401 Unauthorized", At: at, Hints: "esc close"},
	}
	for name, s := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d", name, sz.w, sz.h), func(t *testing.T) {
				out := ansi.Strip(BridgeOverlay(s, st, min(sz.w, 110), sz.h))
				ls := strings.Split(out, "\n")
				if len(ls) > OverlayHeight(sz.h) {
					t.Errorf("%d lines, want at most %d", len(ls), OverlayHeight(sz.h))
				}
				for _, l := range ls {
					if ansi.StringWidth(l) > sz.w {
						t.Errorf("line wider than %d: %q", sz.w, l)
					}
				}
				golden.RequireEqual(t, out)
			})
		}
	}
	out := ansi.Strip(BridgeOverlay(cases["two"], st, 80, 24))
	for _, want := range []string{"1250", "3s", "orders.delayed.bridge.parked", "x-rungs-reason", "no bridge consumes"} {
		if want == "no bridge consumes" {
			out = ansi.Strip(BridgeOverlay(cases["second"], st, 80, 24))
		}
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("the bridges do not say %q:\n%s", want, out)
		}
	}
}
