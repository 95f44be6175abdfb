package model

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/ops"
)

var sizes = []struct{ w, h int }{{80, 24}, {120, 40}}

// screen renders the app as the terminal would show it, without colour.
func plainView(t *testing.T, a App) string {
	t.Helper()
	v := a.View()
	if !v.AltScreen {
		t.Error("view left the alternate screen")
	}
	return ansi.Strip(v.Content)
}

// checkScreen asserts that the screen is exactly w×h, that the header's
// first line and the footer are there, and matches the golden file.
func checkScreen(t *testing.T, a App, w, h int) {
	t.Helper()
	s := plainView(t, a)
	ls := strings.Split(s, "\n")
	if len(ls) != h {
		t.Errorf("screen has %d lines, want %d", len(ls), h)
	}
	for i, l := range ls {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("line %d is %d cells wide, want at most %d", i+1, lw, w)
		}
	}
	if !strings.HasPrefix(ls[0], " rungs ") {
		t.Errorf("header missing: %q", ls[0])
	}
	golden.RequireEqual(t, s)
}

// openParked opens Orders with the cursor on its parking queue.
func openParked(t *testing.T, w, h int) App {
	t.Helper()
	fb := newFake(fixture.Busy())
	fb.peekRes = map[string]broker.PeekResult{"orders.work.parked": fixture.Parked()}
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, w, h)
	return keys(t, load(t, a, fb), "G")
}

// peekParked peeks at Orders' parking queue.
func peekParked(t *testing.T, w, h int) App {
	t.Helper()
	a, _ := run(t, openParked(t, w, h), press("v"))
	if a.screen != screenPeek {
		t.Fatalf("v did not open the peek: screen %v, result %+v", a.screen, a.result)
	}
	return a
}

func TestScreensGolden(t *testing.T) {
	cases := map[string]func(t *testing.T, w, h int) App{
		"list": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Busy())
			a, _ := newApp(t, fb, Options{}, w, h)
			return load(t, a, fb)
		},
		"loading": func(t *testing.T, w, h int) App {
			a, _ := newApp(t, newFake(fixture.Busy()), Options{}, w, h)
			return a
		},
		"unreachable": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Busy())
			fb.err = errRefused
			a, _ := newApp(t, fb, Options{}, w, h)
			return load(t, a, fb)
		},
		"ladder": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Busy())
			a, _ := newApp(t, fb, Options{Ladder: "orders"}, w, h)
			return keys(t, load(t, a, fb), "j", "j", "j")
		},
		"ladder-readonly-stale": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Busy())
			a, c := newApp(t, fb, Options{Backends: Backends{ReadOnly: true, Conn: &fakeConn{state: broker.ConnState{Status: broker.Connected}}}, Ladder: "orders"}, w, h)
			a = load(t, a, fb)
			c.advance(7 * time.Second)
			fb.err = errRefused
			a, _ = run(t, a, pollMsg{gen: a.loop.gen})
			return keys(t, a, "x")
		},
		"trace": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Busy())
			a, _ := newApp(t, fb, Options{Ladder: "orders"}, w, h)
			a = keys(t, load(t, a, fb), "t")
			return typeText(t, a, "90s orders.work")
		},
		"forecast": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Busy())
			a, _ := newApp(t, fb, Options{Ladder: "retry4"}, w, h)
			return keys(t, load(t, a, fb), "f")
		},
		"help": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Busy())
			a, _ := newApp(t, fb, Options{Ladder: "orders"}, w, h)
			return keys(t, load(t, a, fb), "?")
		},
		"help-readonly": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Busy())
			a, _ := newApp(t, fb, Options{Backends: Backends{ReadOnly: true}}, w, h)
			return keys(t, load(t, a, fb), "?")
		},
		"publish": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Busy())
			a, _ := newApp(t, fb, Options{Ladder: "orders"}, w, h)
			a = keys(t, load(t, a, fb), "p")
			a = typeText(t, a, "90s")
			a = keys(t, a, "tab")
			return typeText(t, a, "orders.work")
		},
		"purge-queue": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Busy())
			a, _ := newApp(t, fb, Options{Ladder: "orders"}, w, h)
			return keys(t, load(t, a, fb), "j", "j", "j", "x")
		},
		"purge-ladder": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Busy())
			a, _ := newApp(t, fb, Options{Ladder: "orders"}, w, h)
			a = keys(t, load(t, a, fb), "X")
			return typeText(t, a, "ord")
		},
		"command": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Busy())
			a, _ := newApp(t, fb, Options{}, w, h)
			a = keys(t, load(t, a, fb), ":")
			return typeText(t, a, "ladder or")
		},
		"peek": func(t *testing.T, w, h int) App {
			return peekParked(t, w, h)
		},
		"peek-binary": func(t *testing.T, w, h int) App {
			return keys(t, peekParked(t, w, h), "j", "j")
		},
		"peek-history": func(t *testing.T, w, h int) App {
			return keys(t, peekParked(t, w, h), "j")
		},
		"peek-force": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Busy())
			fb.limit, fb.limitKnown = 20, true // 4.0's default, on a rung an earlier rungs declared
			a, _ := newApp(t, fb, Options{Ladder: "retry4"}, w, h)
			a = keys(t, load(t, a, fb), ":")
			a = typeText(t, a, "peek retry4.rung.02.3")
			a, _ = run(t, a, press("enter"))
			return typeText(t, a, "for")
		},
		"trace-message": func(t *testing.T, w, h int) App {
			return keys(t, peekParked(t, w, h), "t")
		},
		"replay-form": func(t *testing.T, w, h int) App {
			a := openParked(t, w, h)
			a = keys(t, a, "R", "space", "tab")
			a = typeText(t, a, "5m")
			a = keys(t, a, "tab")
			return typeText(t, a, "orders.work")
		},
		"replay-confirm": func(t *testing.T, w, h int) App {
			a := keys(t, openParked(t, w, h), "R", "tab", "tab")
			a = typeText(t, a, "200/s")
			return keys(t, a, "enter")
		},
		"replay-progress": func(t *testing.T, w, h int) App {
			a := keys(t, openParked(t, w, h), "R", "enter")
			m, _ := a.Update(press("y"))
			a = m.(App)
			return update(t, a, replayProgressMsg{id: a.replays.run.id, p: broker.MoveProgress{Moved: 7, Kept: 1, Elapsed: 1500 * time.Millisecond, SourceReady: -1}})
		},
		"replay-done": func(t *testing.T, w, h int) App {
			a := keys(t, openParked(t, w, h), "R", "enter")
			m, _ := a.Update(press("y"))
			a = m.(App)
			return update(t, a, replayDoneMsg{id: a.replays.run.id, source: "orders.work.parked", describe: ops.ReplayToOrigin,
				p: broker.MoveProgress{Moved: 16, Kept: 1, Elapsed: 1200 * time.Millisecond, Stopped: broker.StopEmpty, Done: true,
					Reasons: map[string]int{"no route: " + broker.ErrNoOrigin.Error(): 1}}})
		},
		"reconnecting": func(t *testing.T, w, h int) App {
			fb := newFake(fixture.Healthy())
			c := newClock()
			conn := &fakeConn{state: broker.ConnState{Status: broker.Reconnecting, NextAttempt: c.now().Add(4 * time.Second), Attempt: 2}}
			a, _ := newApp(t, fb, Options{Backends: Backends{Conn: conn}}, w, h)
			return keys(t, load(t, a, fb), "enter")
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
