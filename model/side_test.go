package model

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// sideFake is the fake broker with a release and the quorum queues under
// delayed retry it reports, counting the listings and the reads of their
// statistics.
type sideFake struct {
	*fakeBroker
	ver            topology.Version
	qs             []topology.RetryQueue
	listed, statsd atomic.Int32
}

func (f *sideFake) Version(context.Context) (topology.Version, error) { return f.ver, nil }

func (f *sideFake) RetryQueues(context.Context, string, topology.Version) ([]topology.RetryQueue, error) {
	f.listed.Add(1)
	return f.qs, nil
}

func (f *sideFake) RetryStats(context.Context, string, []topology.RetryQueue) ([]topology.RetryQueue, error) {
	f.statsd.Add(1)
	return f.qs, nil
}

// withBridge adds a bridge's queues to snap: a backlog with a lag, and
// two messages parked.
func withBridge(snap topology.Snapshot) topology.Snapshot {
	n := topology.NamesOfBridge("orders.delayed", "")
	snap.Queues = append(snap.Queues,
		topology.Queue{Name: n.Intake, Durable: true, Args: topology.Args{"x-queue-type": "quorum"}, Stats: topology.QueueStats{Ready: 40, Unacked: 10, Consumers: 1, HeadAge: 2 * time.Second}},
		topology.Queue{Name: n.Due, Durable: true, Args: topology.Args{"x-queue-type": "quorum"}, Stats: topology.QueueStats{Consumers: 1}},
		topology.Queue{Name: n.Parked, Durable: true, Args: topology.Args{"x-queue-type": "quorum"}, Stats: topology.QueueStats{Ready: 2}})
	return snap
}

// sideApp is a console on f at a fixed time and size, loaded.
func sideApp(t *testing.T, f *sideFake, w, h int) App {
	t.Helper()
	c := newClock()
	a := New(Options{Backends: Backends{Inspector: f, Publisher: f, Purger: f, Peeker: f, Mover: f, Limits: f,
		BrokerLabel: "guest@127.0.0.1:5672"}, Now: c.now})
	a = update(t, a, tea.WindowSizeMsg{Width: w, Height: h})
	return load(t, a, f.fakeBroker)
}

func newSideFake(version string) *sideFake {
	v, _ := topology.ParseVersion(version)
	fb := newFake(withBridge(fixture.Busy()))
	fb.ov.RabbitMQVersion = version
	return &sideFake{fakeBroker: fb, ver: v, qs: []topology.RetryQueue{
		{Name: "payments", Type: "all", Min: 5 * time.Second, Max: time.Minute, Source: "policy", Policy: "slow-retry", Delayed: 12, Ready: 1, Reported: true, Consumers: 1},
		{Name: "emails", Type: "failed", Min: time.Second, Source: "argument", Reported: true, LimitKnown: true, DeliveryLimit: 20},
	}}
}

func TestSideViewsGolden(t *testing.T) {
	cases := map[string]func(t *testing.T, w, h int) App{
		"bridges": func(t *testing.T, w, h int) App {
			return keys(t, sideApp(t, newSideFake("4.3.6"), w, h), "B")
		},
		"retry": func(t *testing.T, w, h int) App {
			return keys(t, sideApp(t, newSideFake("4.3.6"), w, h), "D")
		},
		"retry-before-4.3": func(t *testing.T, w, h int) App {
			return keys(t, sideApp(t, newSideFake("4.0.5"), w, h), "D")
		},
	}
	for name, mk := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d", name, sz.w, sz.h), func(t *testing.T) {
				checkScreen(t, mk(t, sz.w, sz.h), sz.w, sz.h)
			})
		}
	}
}

// The bridge view reads the bridges as status does and again on each
// tick of its own loop; a tick of a loop that a read asked for replaced
// is dropped; v peeks the parked queue through the console's peek; esc
// closes it and its ticks die with it.
func TestBridgeView(t *testing.T) {
	f := newSideFake("4.3.6")
	a := sideApp(t, f, 120, 40)
	a = keys(t, a, "B")
	v := dialogOf[bridgeView](t, a)
	if len(v.state.Bridges) != 1 || v.state.Bridges[0].Exchange != "orders.delayed" {
		t.Fatalf("the view read %+v, want bridge orders.delayed", v.state.Bridges)
	}
	screen := plainView(t, a)
	for _, want := range []string{"orders.delayed", "50", "2s", "orders.delayed.bridge.parked"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the bridge view lacks %q:\n%s", want, screen)
		}
	}
	// Fewer messages in the intake: a tick reads them; a stale tick does nothing.
	f.mu.Lock()
	for i, q := range f.snap.Queues {
		if q.Name == "orders.delayed.bridge.intake" {
			f.snap.Queues[i].Stats.Ready = 5
		}
	}
	f.mu.Unlock()
	before := f.calls["snapshot"]
	a, _ = run(t, a, sideTickMsg{sideBridges, v.seq - 1})
	if f.calls["snapshot"] != before {
		t.Error("a stale tick read the bridges")
	}
	a, _ = run(t, a, sideTickMsg{sideBridges, v.seq})
	if got := dialogOf[bridgeView](t, a).state.Bridges[0].Intake.Stats.Ready; got != 5 {
		t.Errorf("after a tick the intake shows %d ready, want 5", got)
	}
	a = keys(t, a, "v")
	if a.screen != screenPeek || a.peek.Queue() != "orders.delayed.bridge.parked" || a.dialog != nil {
		t.Fatalf("v: screen %v, peek %q, dialog %T, result %+v", a.screen, a.peek.Queue(), a.dialog, a.result)
	}
	a = keys(t, a, "esc", "B", "esc")
	if a.dialog != nil {
		t.Fatalf("esc left %T open", a.dialog)
	}
	before = f.calls["snapshot"]
	a, _ = run(t, a, sideTickMsg{sideBridges, 1})
	if f.calls["snapshot"] != before || a.dialog != nil {
		t.Error("a tick after the view closed read the bridges")
	}
}

// The delayed-retry view lists the queues once when it opens and when
// asked (r); its ticks read their counts only. Before 4.3 it reads
// nothing and says the release has none.
func TestRetryView(t *testing.T) {
	f := newSideFake("4.3.6")
	a := keys(t, sideApp(t, f, 120, 40), "D")
	v := dialogOf[retryView](t, a)
	if f.listed.Load() != 1 || v.state.Hold.Delayed != 12 {
		t.Fatalf("opening listed %d times and shows %d held, want once and 12", f.listed.Load(), v.state.Hold.Delayed)
	}
	if s := plainView(t, a); !strings.Contains(s, "12 held by delayed retry in 1 queue") || !strings.Contains(s, "payments") {
		t.Errorf("the view does not show what is held:\n%s", s)
	}
	f.qs[0].Delayed = 30
	a, _ = run(t, a, sideTickMsg{sideRetry, v.seq})
	if got := dialogOf[retryView](t, a).state.Hold.Delayed; got != 30 || f.listed.Load() != 1 || f.statsd.Load() != 1 {
		t.Errorf("a tick: %d held, %d listings, %d statistics reads; want 30, 1, 1", got, f.listed.Load(), f.statsd.Load())
	}
	a = keys(t, a, "r")
	if f.listed.Load() != 2 {
		t.Errorf("r listed %d times in all, want 2", f.listed.Load())
	}

	old := newSideFake("4.0.5")
	a = keys(t, sideApp(t, old, 80, 24), "D")
	if s := plainView(t, a); !strings.Contains(s, "not on this release (4.0.5)") {
		t.Errorf("before 4.3:\n%s", s)
	}
	if old.listed.Load() != 0 || old.statsd.Load() != 0 {
		t.Error("before 4.3 the view read the queues")
	}
	// The command line opens both too.
	a = keys(t, a, "esc")
	a = runCommand(t, a, "bridges")
	if !isOpen[bridgeView](a) {
		t.Errorf(":bridges opened %T", a.dialog)
	}
}

var _ broker.Inspector = (*sideFake)(nil)
