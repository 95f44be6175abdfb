package model

import (
	"bytes"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/rungs-dev/rungs/internal/fixture"
)

// waitFor waits until the program has drawn s.
func waitFor(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(s)) },
		teatest.WithDuration(10*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

// TestConsoleFlow runs the real program loop: load, open a ladder, trace a
// delay from the command line, publish from the form, quit.
func TestConsoleFlow(t *testing.T) {
	fb := newFake(fixture.Busy())
	a := New(Options{Backends: Backends{Inspector: fb, Publisher: fb, Purger: fb, BrokerLabel: "guest@127.0.0.1:5672"}, Refresh: time.Hour})
	tm := teatest.NewTestModel(t, a, teatest.WithInitialTermSize(100, 30))

	waitFor(t, tm, "retry4")
	tm.Send(press("j"))
	tm.Send(press("j"))
	tm.Send(press("enter"))
	waitFor(t, tm, "orders.rung.09")

	tm.Type(":trace 90s orders.work")
	tm.Send(press("enter"))
	waitFor(t, tm, "0.0.0.1.0.1.1.0.1.0.orders.work")

	tm.Send(press("p"))
	waitFor(t, tm, "Publish into orders")
	tm.Send(press("enter"))
	waitFor(t, tm, "1 confirmed")

	tm.Type(":q")
	tm.Send(press("enter"))
	final, ok := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(App)
	if !ok {
		t.Fatal("final model is not an App")
	}
	if final.screen != screenLadder || final.ladder.found.Ladder.Name != "orders" {
		t.Errorf("ended on screen %v, ladder %q", final.screen, final.ladder.found.Ladder.Name)
	}
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if len(fb.published) != 1 || fb.published[0].RoutingKey != "0.0.0.1.0.1.1.0.1.0.orders.work" {
		t.Errorf("published %+v", fb.published)
	}
}

// TestConsoleHangingBroker shows that a broker that never answers leaves a
// console that still answers keys and quits at once.
func TestConsoleHangingBroker(t *testing.T) {
	fb := newFake(fixture.Busy())
	fb.hang = true
	a := New(Options{Backends: Backends{Inspector: fb, Publisher: fb, Purger: fb, BrokerLabel: "guest@10.0.0.9:5672"}})
	tm := teatest.NewTestModel(t, a, teatest.WithInitialTermSize(80, 24))

	waitFor(t, tm, "Reading ladders")
	tm.Send(press("?"))
	waitFor(t, tm, "Keys and commands")
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(2*time.Second)).(App)
	if final.loaded {
		t.Error("a hanging broker produced data")
	}
}
