package model

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/ui"
)

// replayParked opens the replay form on Orders' parking queue.
func replayParked(t *testing.T, fb *fakeBroker, opts Options) App {
	t.Helper()
	opts.Ladder = "orders"
	a, _ := newApp(t, fb, opts, 100, 30)
	return keys(t, load(t, a, fb), "G", "R")
}

// start runs a command's batch, each part in its own goroutine as the
// program does, and returns the messages as they come.
func start(t *testing.T, cmd tea.Cmd) <-chan tea.Msg {
	t.Helper()
	out := make(chan tea.Msg, 16)
	if cmd == nil {
		t.Fatal("no command")
	}
	msg := cmd()
	batch, ok := msg.(tea.BatchMsg)
	if !ok {
		batch = tea.BatchMsg{func() tea.Msg { return msg }}
	}
	for _, c := range batch {
		if c != nil {
			go func(c tea.Cmd) { out <- c() }(c)
		}
	}
	return out
}

// next waits for the next message of a kind, failing after a while.
func next[M tea.Msg](t *testing.T, ch <-chan tea.Msg) M {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-ch:
			if lm, ok := m.(loggedMsg); ok {
				m = lm.msg
			}
			if v, ok := m.(M); ok {
				return v
			}
		case <-deadline:
			var zero M
			t.Fatalf("no %T came", zero)
			return zero
		}
	}
}

// flat is a screen's text with dialog frames and line breaks folded into
// single spaces, so that a check does not depend on where text wraps.
func flat(s string) string {
	var words []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range strings.Fields(l) {
			if w != "│" {
				words = append(words, w)
			}
		}
	}
	return strings.Join(words, " ")
}

func TestReplayFormConfirmRun(t *testing.T) {
	fb := newFake(fixture.Busy())
	fb.moveN = 17
	a := replayParked(t, fb, Options{})
	if !isOpen[replayDialog](a) || dialogOf[replayDialog](t, a).source != "orders.work.parked" || dialogOf[replayDialog](t, a).ready != 17 {
		t.Fatalf("R: dialog %T source %q ready %d", a.dialog, dialogOf[replayDialog](t, a).source, dialogOf[replayDialog](t, a).ready)
	}
	if s := flat(ansi.Strip(dialogOf[replayDialog](t, a).View())); !strings.Contains(s, "replay about 17 messages from orders.work.parked back where each came from") {
		t.Errorf("the form does not preview the replay:\n%s", s)
	}
	// Limit and rate, then review: the confirmation names source, count
	// and destination.
	a = keys(t, a, "tab")
	a = typeText(t, a, "10")
	a = keys(t, a, "tab")
	a = typeText(t, a, "6000/m")
	a = keys(t, a, "enter")
	if dialogOf[replayDialog](t, a).form || dialogOf[replayDialog](t, a).phase != ui.ReplayConfirm {
		t.Fatalf("enter: form %v phase %v err %q", dialogOf[replayDialog](t, a).form, dialogOf[replayDialog](t, a).phase, dialogOf[replayDialog](t, a).err)
	}
	s := flat(ansi.Strip(dialogOf[replayDialog](t, a).View()))
	for _, want := range []string{"Replay about 17 messages (at most 10) from orders.work.parked back where each came from", "At most 100 a second", "y replay"} {
		if !strings.Contains(s, want) {
			t.Errorf("the confirmation lacks %q:\n%s", want, s)
		}
	}
	if len(fb.moves) != 0 {
		t.Fatal("moved before the confirmation")
	}
	a, msgs := run(t, a, press("y"))
	if len(fb.moves) != 1 {
		t.Fatalf("moves %d", len(fb.moves))
	}
	o := fb.moves[0]
	if o.Source != "orders.work.parked" || o.Limit != 10 || o.Rate != 100 || o.Park != "" || o.Progress == nil {
		t.Errorf("move options %+v", o)
	}
	var progress int
	for _, m := range msgs {
		if _, ok := m.(replayProgressMsg); ok {
			progress++
		}
	}
	if progress == 0 {
		t.Error("no progress came through the channel")
	}
	if dialogOf[replayDialog](t, a).phase != ui.ReplayDone || dialogOf[replayDialog](t, a).counts.Moved != 17 || a.busy != "" {
		t.Fatalf("after the move: phase %v counts %+v busy %q", dialogOf[replayDialog](t, a).phase, dialogOf[replayDialog](t, a).counts, a.busy)
	}
	if a.result.Kind != ui.ResultOK || !strings.Contains(a.result.Text, "replayed 17 message(s) from orders.work.parked") {
		t.Errorf("result %+v", a.result)
	}
	if e := a.log.entries[len(a.log.entries)-1]; e.Op != "replay" || !strings.Contains(strings.Join(e.Sent, " "), "limit=10") || e.Result == "" {
		t.Errorf("log entry %+v", e)
	}
	// A late progress report of the finished move changes nothing.
	a = update(t, a, replayProgressMsg{id: a.replays.seq, p: broker.MoveProgress{Moved: 3}})
	if dialogOf[replayDialog](t, a).counts.Moved != 17 {
		t.Error("a stale progress report rewound the counts")
	}
	a = keys(t, a, "enter")
	if a.dialog != nil {
		t.Error("enter did not close the outcome")
	}
}

func TestReplayCancel(t *testing.T) {
	for _, stop := range []string{"esc", "ctrl+c"} {
		t.Run(stop, func(t *testing.T) {
			fb := newFake(fixture.Busy())
			fb.moveN, fb.moveBlock = 3, true
			a := keys(t, replayParked(t, fb, Options{}), "enter")
			m, cmd := a.Update(press("y"))
			a = m.(App)
			if dialogOf[replayDialog](t, a).phase != ui.ReplayRunning || !strings.Contains(plainView(t, a), "esc or ctrl+c stops cleanly") {
				t.Fatalf("y: phase %v\n%s", dialogOf[replayDialog](t, a).phase, plainView(t, a))
			}
			msgs := start(t, cmd)
			p := next[replayProgressMsg](t, msgs)
			m, rearm := a.Update(p)
			a = m.(App)
			if dialogOf[replayDialog](t, a).counts.Moved != p.p.Moved || rearm == nil {
				t.Fatalf("progress: counts %+v, re-armed %v", dialogOf[replayDialog](t, a).counts, rearm != nil)
			}
			m, quit := a.Update(press(stop))
			a = m.(App)
			if quit != nil {
				if _, ok := quit().(tea.QuitMsg); ok {
					t.Fatal(stop + " quit instead of stopping the replay")
				}
			}
			if dialogOf[replayDialog](t, a).phase != ui.ReplayCancelling || !dialogOf[replayDialog](t, a).cancelled {
				t.Fatalf("%s: phase %v", stop, dialogOf[replayDialog](t, a).phase)
			}
			if !strings.Contains(plainView(t, a), "stopping") {
				t.Errorf("no word that the replay stops:\n%s", plainView(t, a))
			}
			done := next[replayDoneMsg](t, msgs)
			if done.err == nil || !strings.Contains(done.err.Error(), context.Canceled.Error()) {
				t.Errorf("the move did not see the cancel: %v", done.err)
			}
			a = update(t, a, done)
			if dialogOf[replayDialog](t, a).phase != ui.ReplayDone || !dialogOf[replayDialog](t, a).cancelled || dialogOf[replayDialog](t, a).runErr != "" {
				t.Fatalf("done: phase %v cancelled %v err %q", dialogOf[replayDialog](t, a).phase, dialogOf[replayDialog](t, a).cancelled, dialogOf[replayDialog](t, a).runErr)
			}
			s := flat(ansi.Strip(dialogOf[replayDialog](t, a).View()))
			if !strings.Contains(s, "Cancelled: the 3 messages confirmed stay moved; the rest stay on") {
				t.Errorf("the outcome does not say what a cancel left:\n%s", s)
			}
			if a.result.Kind != ui.ResultWarn || !strings.Contains(a.result.Text, "replay stopped: 3 moved") {
				t.Errorf("result %+v", a.result)
			}
		})
	}
}

func TestReplayDestinations(t *testing.T) {
	fb := newFake(fixture.Busy())
	a := replayParked(t, fb, Options{})
	// Into the ladder: a delay and a destination the bindings deliver.
	a = keys(t, a, "space", "tab")
	a = typeText(t, a, "5m")
	a = keys(t, a, "tab")
	a = typeText(t, a, "orders.work")
	p, err := planOf(t, a)
	if err != nil || !strings.Contains(p.Describe, "into ladder orders: 5m later to orders.work") {
		t.Fatalf("into the ladder: %q, %v", p.Describe, err)
	}
	r, err := p.Options.Route(broker.Delivery{})
	if err != nil || r.Exchange != "orders.ingest" || !r.SaveDeath || !strings.HasSuffix(r.RoutingKey, ".orders.work") {
		t.Errorf("ladder route %+v, %v", r, err)
	}
	// A destination the ladder does not deliver to is refused.
	a = keys(t, a, "backspace", "backspace", "backspace", "backspace")
	a = typeText(t, a, "mail")
	a = keys(t, a, "enter")
	if !dialogOf[replayDialog](t, a).form || !strings.Contains(dialogOf[replayDialog](t, a).err, "would not reach orders.mail") {
		t.Errorf("unknown destination: form %v err %q", dialogOf[replayDialog](t, a).form, dialogOf[replayDialog](t, a).err)
	}
	// To a queue: it must exist and not be the source.
	a = keys(t, a, "shift+tab", "shift+tab", "space", "tab")
	a = typeText(t, a, "orders.work.parked")
	a = keys(t, a, "enter")
	if !strings.Contains(dialogOf[replayDialog](t, a).err, "is the source queue") {
		t.Errorf("to itself: %q", dialogOf[replayDialog](t, a).err)
	}
	for range "orders.work.parked" {
		a = keys(t, a, "backspace")
	}
	a = typeText(t, a, "orders.email")
	a = keys(t, a, "enter")
	if dialogOf[replayDialog](t, a).form || dialogOf[replayDialog](t, a).plan.Describe != "to queue orders.email" {
		t.Fatalf("to orders.email: form %v describe %q err %q", dialogOf[replayDialog](t, a).form, dialogOf[replayDialog](t, a).plan.Describe, dialogOf[replayDialog](t, a).err)
	}
	// n goes back to the form, esc closes it: nothing moved.
	a = keys(t, a, "n")
	if !dialogOf[replayDialog](t, a).form {
		t.Fatal("n did not go back to the form")
	}
	a = keys(t, a, "esc")
	if a.dialog != nil || len(fb.moves) != 0 || !strings.Contains(a.result.Text, "nothing was moved") {
		t.Errorf("esc: dialog %T moves %d result %+v", a.dialog, len(fb.moves), a.result)
	}
}

func TestReplayFormRefusesBadInput(t *testing.T) {
	cases := map[string]struct {
		field int // tabs from the first field
		text  string
		want  string
	}{
		"limit negative": {1, "-3", `limit: "-3" is not a number`},
		"bad rate":       {2, "fast", "rate:"},
		"park itself":    {3, "orders.work.parked", "park: orders.work.parked is the source queue"},
		"limit a words":  {1, "ten", `limit: "ten"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fb := newFake(fixture.Busy())
			a := replayParked(t, fb, Options{})
			for i := 0; i < tc.field; i++ {
				a = keys(t, a, "tab")
			}
			a = typeText(t, a, tc.text)
			a = keys(t, a, "enter")
			if !dialogOf[replayDialog](t, a).form || !strings.Contains(dialogOf[replayDialog](t, a).err, tc.want) {
				t.Errorf("err %q, want %q", dialogOf[replayDialog](t, a).err, tc.want)
			}
		})
	}
}

func TestReplayReadOnly(t *testing.T) {
	fb := newFake(fixture.Busy())
	a := replayParked(t, fb, Options{Backends: Backends{ReadOnly: true}})
	if a.dialog != nil || a.result.Kind != ui.ResultWarn || !strings.Contains(a.result.Text, "read-only: replaying is switched off") {
		t.Fatalf("R in read-only: dialog %T result %+v", a.dialog, a.result)
	}
	a, _ = a.runCommand("replay orders.work.parked")
	if a.dialog != nil || !strings.Contains(a.result.Text, "replaying is switched off") {
		t.Fatalf(":replay in read-only: dialog %T result %+v", a.dialog, a.result)
	}
}

func TestReplayFromThePeek(t *testing.T) {
	fb := parkedFake()
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 100, 30)
	a = keys(t, load(t, a, fb), "G")
	a, _ = run(t, a, press("v"))
	a = keys(t, a, "R")
	if !isOpen[replayDialog](a) || dialogOf[replayDialog](t, a).source != "orders.work.parked" || dialogOf[replayDialog](t, a).ladder == nil || dialogOf[replayDialog](t, a).ladder.Name != "orders" {
		t.Fatalf("R in the peek: dialog %T source %q", a.dialog, dialogOf[replayDialog](t, a).source)
	}
	fb.moveN = 3
	a = keys(t, a, "enter", "y", "enter")
	if a.screen != screenPeek || !strings.Contains(plainView(t, a), "3 replayed away since this peek") {
		t.Errorf("the peek does not say its messages were replayed:\n%s", plainView(t, a))
	}
}

// planOf is the replay dialog's plan as it stands: worked out when the
// form last changed, not when it is drawn.
func planOf(t *testing.T, a App) (ops.ReplayPlan, error) {
	t.Helper()
	d := dialogOf[replayDialog](t, a)
	return d.plan, d.planErr
}

// Drift fix (issue 19): one spelling of "no limit". The form takes 0, as
// rungs replay --limit 0 does, and an empty field, as the default.
func TestReplayFormLimitZeroMeansNoLimit(t *testing.T) {
	for _, text := range []string{"0", ""} {
		fb := newFake(fixture.Busy())
		a := replayParked(t, fb, Options{})
		a = keys(t, a, "tab")
		a = typeText(t, a, text)
		a = keys(t, a, "enter")
		d := dialogOf[replayDialog](t, a)
		if d.form || d.err != "" || d.plan.Options.Limit != 0 {
			t.Errorf("limit %q: form %v err %q limit %d; want the review with no limit", text, d.form, d.err, d.plan.Options.Limit)
		}
	}
}
