package model

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// fakeScheduler serves scans from canned messages by queue, and moves
// through the fakeBroker's Move, recording them.
type fakeScheduler struct {
	*fakeBroker
	smu   sync.Mutex
	msgs  map[string][]broker.PeekedMessage
	scans int
	// block makes a scan wait for its context after the first message.
	block bool
}

func (f *fakeScheduler) Scan(ctx context.Context, queue string, o broker.ScanOptions) (broker.ScanStats, error) {
	f.smu.Lock()
	f.scans++
	msgs, block := f.msgs[queue], f.block
	f.smu.Unlock()
	st := broker.ScanStats{Queue: queue, Ready: len(msgs)}
	for _, m := range msgs {
		o.Each(m)
		st.Seen++
		if block {
			<-ctx.Done()
			st.Stopped = broker.StopCancelled
			return st, ctx.Err()
		}
	}
	st.Stopped = broker.ScanTaken
	return st, nil
}

func (f *fakeScheduler) Depth(ctx context.Context, queue string) (int, error) {
	f.smu.Lock()
	defer f.smu.Unlock()
	return len(f.msgs[queue]), nil
}

// inFlight puts n messages for delay d to dest in the first rung of their
// path in Orders, ids PREFIX1.., as a scan would read them.
func (f *fakeScheduler) inFlight(t *testing.T, n int, d time.Duration, dest, prefix string) {
	t.Helper()
	tr, err := fixture.Orders().Trace(d, dest)
	if err != nil {
		t.Fatal(err)
	}
	q := tr.Hops[0].Queue
	f.smu.Lock()
	defer f.smu.Unlock()
	if f.msgs == nil {
		f.msgs = map[string][]broker.PeekedMessage{}
	}
	for i := 1; i <= n; i++ {
		f.msgs[q] = append(f.msgs[q], broker.PeekedMessage{Position: len(f.msgs[q]), Delivery: broker.Delivery{
			RoutingKey: tr.Key, MessageID: fmt.Sprintf("%s%d", prefix, i), CorrelationID: "corr-" + prefix,
			Body: []byte(fmt.Sprintf(`{"job":%d}`, i)), Timestamp: time.Now(),
			Headers: map[string]any{topology.HeaderDelayMS: d.Milliseconds()},
		}})
	}
}

// newScheduledApp opens Orders on a console whose scheduler is fs.
func newScheduledApp(t *testing.T, readOnly bool, w, h int) (App, *fakeScheduler) {
	t.Helper()
	fb := newFake(fixture.Busy())
	fs := &fakeScheduler{fakeBroker: fb}
	a, _ := newApp(t, fb, Options{Ladder: "orders", Backends: Backends{Scheduler: fs, ReadOnly: readOnly}}, w, h)
	return load(t, a, fb), fs
}

// scheduledMessages are what a scan of Orders found, dated from the
// console's clock so that views are the same on every run.
func scheduledMessages(now time.Time) []ops.ScheduledMessage {
	l := fixture.Orders()
	rung := func(level int) string { return l.Rungs()[level].Queue }
	return []ops.ScheduledMessage{
		{Ladder: "orders", Rung: rung(0), Dest: "orders.work", MessageID: "ord-8812-timeout", CorrelationID: "order-8812", Earliest: now.Add(40 * time.Second), Latest: now.Add(41 * time.Second), Exact: true, Basis: topology.DueRungs, Preview: `{"order":8812}`},
		{Ladder: "orders", Rung: rung(3), Dest: "orders.work", MessageID: "ord-8813-timeout", CorrelationID: "order-8813", Earliest: now.Add(9 * time.Minute), Latest: now.Add(9*time.Minute + time.Second), Exact: true, Basis: topology.DueDeath, Preview: `{"order":8813}`},
		{Ladder: "orders", Rung: rung(6), Dest: "orders.email", MessageID: "mail-77", Earliest: now.Add(12 * time.Minute), Latest: now.Add(16 * time.Minute), Basis: topology.DueNone, Preview: "Dear customer,\nyour order"},
	}
}

// scanned answers the scan the s key started with msgs.
func scanned(t *testing.T, a App, msgs []ops.ScheduledMessage) App {
	t.Helper()
	if a.sched.run == nil {
		t.Fatal("no scan running")
	}
	res := ops.ScanResult{Ladder: fixture.Orders(), Messages: msgs, Seen: 412, Matched: len(msgs), Horizons: ops.Horizons{Minute: 1, Hour: 1, Day: 1}}
	return update(t, a, scanDoneMsg{id: a.sched.run.id, res: res})
}

func TestScheduledGolden(t *testing.T) {
	cases := map[string]func(t *testing.T, w, h int) App{
		"empty": func(t *testing.T, w, h int) App {
			// A ladder just applied: every rung exists, none holds anything.
			fb := newFake(fixture.Orders().Plan().Snapshot())
			a, _ := newApp(t, fb, Options{Ladder: "orders", Backends: Backends{Scheduler: &fakeScheduler{fakeBroker: fb}}}, w, h)
			a = update(t, load(t, a, fb), press("s"))
			return update(t, a, scanDoneMsg{id: a.sched.run.id, res: ops.ScanResult{Ladder: fixture.Orders()}})
		},
		"scanning": func(t *testing.T, w, h int) App {
			a, _ := newScheduledApp(t, false, w, h)
			a = update(t, a, press("s"))
			return update(t, a, scanProgressMsg{id: a.sched.run.id, p: ops.ScanProgress{Rung: "orders.rung.03", Index: 3, Rungs: 10, Seen: 120, Total: 412, Matched: 120, Elapsed: 800 * time.Millisecond}})
		},
		"results": func(t *testing.T, w, h int) App {
			a, _ := newScheduledApp(t, false, w, h)
			a = update(t, a, press("s"))
			return keys(t, scanned(t, a, scheduledMessages(a.now())), "j")
		},
		"refused": func(t *testing.T, w, h int) App {
			a, _ := newScheduledApp(t, true, w, h)
			a = update(t, a, press("s"))
			return keys(t, scanned(t, a, scheduledMessages(a.now())), "x")
		},
		"help": func(t *testing.T, w, h int) App {
			a, _ := newScheduledApp(t, false, w, h)
			a = update(t, a, press("s"))
			return keys(t, scanned(t, a, scheduledMessages(a.now())), "?")
		},
		"confirm": func(t *testing.T, w, h int) App {
			a, _ := newScheduledApp(t, false, w, h)
			a = update(t, a, press("s"))
			a = keys(t, scanned(t, a, scheduledMessages(a.now())), "x")
			if !isOpen[actionConfirm](a) {
				t.Fatalf("x did not open the confirmation: %+v", a.result)
			}
			return a
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

// A scan runs as a Cmd against the scheduler; a filter typed with / scans
// again with it, and a bad one is one line that changes nothing.
func TestScheduledScanAndFilter(t *testing.T) {
	a, fs := newScheduledApp(t, false, 120, 40)
	fs.inFlight(t, 30, 90*time.Second, "orders.work", "job-")
	fs.inFlight(t, 5, 10*time.Minute, "orders.email", "mail-")
	a, _ = run(t, a, press("s"))
	if a.screen != screenScheduled || a.sched.run != nil {
		t.Fatalf("screen %v, scan running %v; result %+v", a.screen, a.sched.run != nil, a.result)
	}
	if got := a.sched.res.Matched; got != 35 {
		t.Fatalf("matched %d, want 35: %+v", got, a.result)
	}
	if m, _ := a.sched.Selected(); m.Dest != "orders.work" {
		t.Errorf("first listed goes to %q, want the earliest due (orders.work)", m.Dest)
	}
	a = keys(t, a, "/")
	a = typeText(t, a, "dest=orders.email")
	a, _ = run(t, a, press("enter"))
	if got := a.sched.res.Matched; got != 5 || a.sched.Filter() != "dest=orders.email" {
		t.Fatalf("filtered: matched %d, filter %q, want 5 and dest=orders.email", got, a.sched.Filter())
	}
	scans := fs.scans
	a = keys(t, a, "/", "ctrl+u")
	a = typeText(t, a, "within=-5m")
	a, _ = run(t, a, press("enter"))
	if a.result.Kind != ui.ResultError || !strings.HasPrefix(a.result.Text, "filter: within") || strings.Contains(a.result.Text, "\n") {
		t.Errorf("bad filter: %+v, want one line naming within", a.result)
	}
	if fs.scans != scans || a.sched.res.Matched != 5 {
		t.Errorf("a bad filter scanned again or changed the list (%d scans, %d matched)", fs.scans-scans, a.sched.res.Matched)
	}
}

// esc cancels a scan that is running, keeping what it found; ctrl+c does
// too rather than quit.
func TestScheduledScanCancels(t *testing.T) {
	for _, k := range []string{"esc", "ctrl+c"} {
		t.Run(k, func(t *testing.T) {
			a, fs := newScheduledApp(t, false, 80, 24)
			fs.inFlight(t, 3, 90*time.Second, "orders.work", "job-")
			fs.block = true
			m, cmd := a.Update(press("s"))
			a = m.(App)
			done := scanEnd(cmd)
			m, quit := a.Update(press(k))
			a = m.(App)
			if quit != nil {
				t.Fatalf("%s returned a command (quit?) while a scan ran", k)
			}
			if a.screen != screenScheduled {
				t.Fatalf("%s left the view while a scan ran", k)
			}
			var msg scanDoneMsg
			select {
			case msg = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the scan did not end after being cancelled")
			}
			a = update(t, a, msg)
			if a.sched.run != nil || a.sched.phase != ui.ScanCancelled || a.sched.res.Seen != 1 {
				t.Errorf("after cancel: running %v, phase %v, seen %d; want stopped, cancelled, 1", a.sched.run != nil, a.sched.phase, a.sched.res.Seen)
			}
		})
	}
}

// scanEnd runs a command and every command of its batches, each in its
// own goroutine, and hands back the scan's end when it comes.
func scanEnd(cmd tea.Cmd) <-chan scanDoneMsg {
	out := make(chan scanDoneMsg, 1)
	var walk func(c tea.Cmd)
	walk = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			switch m := c().(type) {
			case tea.BatchMsg:
				for _, c := range m {
					walk(c)
				}
			case loggedMsg:
				if d, ok := m.msg.(scanDoneMsg); ok {
					out <- d
				}
			case scanDoneMsg:
				out <- m
			}
		}()
	}
	walk(cmd)
	return out
}

// Read-only refuses every action with one line and asks nothing.
func TestScheduledReadOnlyRefuses(t *testing.T) {
	for _, k := range []string{"x", "m", "n", "X", "M", "N"} {
		a, fs := newScheduledApp(t, true, 80, 24)
		fs.inFlight(t, 3, 90*time.Second, "orders.work", "job-")
		a, _ = run(t, a, press("s"))
		a, _ = run(t, a, press(k))
		if a.dialog != nil || a.prompt.Active() || a.result.Kind != ui.ResultWarn || !strings.HasPrefix(a.result.Text, "read-only: ") {
			t.Errorf("%s in read-only: dialog %T, prompt %v, result %+v", k, a.dialog, a.prompt.Active(), a.result)
		}
		if len(fs.moves) != 0 {
			t.Errorf("%s in read-only moved messages", k)
		}
	}
}

// Cancel on the selected message confirms, then moves exactly that
// message-id to the parking queue and scans again; no confirms no move.
func TestScheduledCancelSelected(t *testing.T) {
	a, fs := newScheduledApp(t, false, 120, 40)
	fs.inFlight(t, 3, 90*time.Second, "orders.work", "job-")
	a, _ = run(t, a, press("s"))
	a = keys(t, a, "j", "x")
	c := dialogOf[actionConfirm](t, a)
	if c.plan.Action != ops.ActCancel || c.plan.Scan.Filter.MessageID != "job-2" || c.plan.All {
		t.Fatalf("plan %+v, want cancel of message-id job-2", c.plan.ActionRequest)
	}
	a = keys(t, a, "n")
	if len(fs.moves) != 0 || a.dialog != nil {
		t.Fatalf("n: %d moves, dialog %T", len(fs.moves), a.dialog)
	}
	a = keys(t, a, "x", "y")
	// One pass per rung the ladder lists with messages, each parking in
	// the ladder's parking queue; the fake's moves move nothing.
	if len(fs.moves) == 0 {
		t.Fatal("y moved nothing")
	}
	for _, mv := range fs.moves {
		if mv.Park != ops.DefaultPark(fixture.Orders()) {
			t.Errorf("a pass over %s parks in %q, want %s", mv.Source, mv.Park, ops.DefaultPark(fixture.Orders()))
		}
	}
	if a.result.Kind == ui.ResultError {
		t.Errorf("result %+v", a.result)
	}
}

// Reschedule asks for the new time on the input line; a bad one and one
// past the ladder's maximum are one line each, with nothing moved.
func TestScheduledRescheduleInput(t *testing.T) {
	a, fs := newScheduledApp(t, false, 120, 40)
	fs.inFlight(t, 3, 90*time.Second, "orders.work", "job-")
	a, _ = run(t, a, press("s"))
	for input, want := range map[string]string{"soon": "reschedule: ", "400d": "delay: "} {
		a = keys(t, a, "m")
		if !a.prompt.Active() || a.prompt.Kind() != promptReschedule {
			t.Fatal("m did not ask for the new time")
		}
		a = typeText(t, a, input)
		a, _ = run(t, a, press("enter"))
		if a.result.Kind != ui.ResultError || !strings.HasPrefix(a.result.Text, want) || a.dialog != nil {
			t.Errorf("%s: result %+v, dialog %T; want an error starting %q", input, a.result, a.dialog, want)
		}
	}
	a = keys(t, a, "m")
	a = typeText(t, a, "10m")
	a, _ = run(t, a, press("enter"))
	c := dialogOf[actionConfirm](t, a)
	if c.plan.Action != ops.ActReschedule || c.plan.Delay != 10*time.Minute {
		t.Fatalf("plan %+v, want reschedule by 10m", c.plan.ActionRequest)
	}
	if len(fs.moves) != 0 {
		t.Errorf("moved before the confirmation")
	}
}

// A quorum ladder before 4.3 with a delivery limit is not scanned unless
// the operator types "force"; read-only refuses it in one line.
func TestScheduledScanNeedsForce(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		fb := newFake(fixture.Busy())
		fb.limitKnown, fb.limit = true, 20
		fs := &fakeScheduler{fakeBroker: fb}
		a, _ := newApp(t, fb, Options{Ladder: "retry4", Backends: Backends{Scheduler: fs, ReadOnly: readOnly}}, 80, 24)
		a = load(t, a, fb)
		a, _ = run(t, a, press("s"))
		if fs.scans != 0 {
			t.Fatalf("read-only %v: scanned %d rungs before force", readOnly, fs.scans)
		}
		if readOnly {
			if a.dialog != nil || !strings.HasPrefix(a.result.Text, "read-only: scanning ") {
				t.Errorf("read-only: dialog %T, result %+v", a.dialog, a.result)
			}
			continue
		}
		dialogOf[scanForce](t, a)
		a = typeText(t, a, forceWord)
		a, _ = run(t, a, press("enter"))
		if fs.scans == 0 || a.sched.phase != ui.ScanDone {
			t.Errorf("after force: %d rungs scanned, phase %v, result %+v", fs.scans, a.sched.phase, a.result)
		}
	}
}

// Firing every message of the ladder (no filter) wants the ladder's name
// typed; a y alone does nothing.
func TestScheduledFireAllNeedsTheName(t *testing.T) {
	a, fs := newScheduledApp(t, false, 120, 40)
	fs.inFlight(t, 3, 90*time.Second, "orders.work", "job-")
	a, _ = run(t, a, press("s"))
	a = keys(t, a, "N")
	c := dialogOf[actionConfirm](t, a)
	if c.plan.Action != ops.ActFire || !c.plan.All {
		t.Fatalf("plan %+v, want fire on all", c.plan.ActionRequest)
	}
	a = keys(t, a, "y", "enter")
	if len(fs.moves) != 0 || !isOpen[actionConfirm](a) {
		t.Fatalf("fired without the name typed (%d moves)", len(fs.moves))
	}
	a = keys(t, a, "backspace")
	a = typeText(t, a, "orders")
	a, _ = run(t, a, press("enter"))
	if len(fs.moves) == 0 || a.result.Kind == ui.ResultError {
		t.Errorf("after the name: %d moves, result %+v", len(fs.moves), a.result)
	}
}

// A filter submitted while a scan runs waits for that scan to hand its
// messages back before scanning again: the new scan must not see a rung
// emptied by the old one.
func TestScheduledRescanWaitsForTheOldScan(t *testing.T) {
	a, fs := newScheduledApp(t, false, 80, 24)
	fs.inFlight(t, 3, 90*time.Second, "orders.work", "job-")
	fs.block = true
	m, cmd := a.Update(press("s"))
	a = m.(App)
	done := scanEnd(cmd)
	first := a.sched.run.id
	a = keys(t, a, "/")
	a = typeText(t, a, "job-2")
	m, _ = a.Update(press("enter"))
	a = m.(App)
	if a.sched.run == nil || a.sched.run.id != first {
		t.Fatalf("a new scan started before the old one ended")
	}
	var msg scanDoneMsg
	select {
	case msg = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the old scan did not end")
	}
	fs.smu.Lock()
	fs.block = false
	fs.smu.Unlock()
	a, _ = run(t, a, msg)
	if a.sched.run != nil || a.sched.Filter() != "job-2" || a.sched.res.Matched != 1 {
		t.Errorf("after the old scan ended: running %v, filter %q, matched %d; want the new scan done with 1", a.sched.run != nil, a.sched.Filter(), a.sched.res.Matched)
	}
}

// A finished scan's line says how many it read and listed, and, when
// messages moved down a rung while it read, that they were counted once.
func TestScanDoneText(t *testing.T) {
	cases := []struct {
		res      ops.ScanResult
		filtered bool
		want     string
	}{
		{ops.ScanResult{Seen: 40, Matched: 40}, false, "scanned 40 messages: 40 scheduled"},
		{ops.ScanResult{Seen: 40, Matched: 5}, true, "scanned 40 messages: 5 match"},
		{ops.ScanResult{Seen: 20, Matched: 20, Recounted: 9}, false, "scanned 20 messages: 20 scheduled (9 moved down while read, counted once)"},
	}
	for _, c := range cases {
		if got := scanDoneText(c.res, c.filtered); got != c.want {
			t.Errorf("%+v: %q, want %q", c.res, got, c.want)
		}
	}
}
