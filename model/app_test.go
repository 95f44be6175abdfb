package model

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

func TestOpenLadderAndBack(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{}, 80, 24)
	a = load(t, a, fb)
	a = keys(t, a, "j", "j", "enter")
	if a.screen != screenLadder || a.ladder.found.Ladder.Name != "orders" {
		t.Fatalf("enter on the third ladder: screen %v, ladder %q", a.screen, a.ladder.found.Ladder.Name)
	}
	a = keys(t, a, "esc")
	if a.screen != screenList {
		t.Fatal("esc did not go back to the list")
	}
	if f, _ := a.list.Selected(); f.Ladder.Name != "orders" {
		t.Errorf("back on the list, the cursor is on %q, want orders", f.Ladder.Name)
	}
}

func TestLadderOptionOpensDirectly(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{Ladder: "nsb.v2"}, 80, 24)
	a = load(t, a, fb)
	if a.screen != screenLadder || a.ladder.found.Ladder.Layout != "nsb" {
		t.Fatalf("--ladder nsb.v2 did not open it: screen %v", a.screen)
	}

	a, _ = newApp(t, fb, Options{Ladder: "nope"}, 80, 24)
	a = load(t, a, fb)
	if a.screen != screenList || a.result.Kind != ui.ResultError || !strings.Contains(a.result.Text, `no ladder "nope"`) {
		t.Fatalf("--ladder nope: screen %v, result %+v", a.screen, a.result)
	}
}

func TestNavigationClamps(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{Ladder: "nsb.v2"}, 80, 24)
	a = load(t, a, fb)
	a = keys(t, a, "G")
	rows := a.ladder.shown()
	if a.ladder.sel != len(rows)-1 {
		t.Fatalf("G: selection %d, want %d", a.ladder.sel, len(rows)-1)
	}
	if !strings.Contains(plainView(t, a), "Shipping") {
		t.Error("the last row is not scrolled into view")
	}
	a = keys(t, a, "j", "g", "k")
	if a.ladder.sel != 0 || a.ladder.offset != 0 {
		t.Fatalf("g then k: selection %d offset %d, want 0 0", a.ladder.sel, a.ladder.offset)
	}
}

func TestFilterAsYouType(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{}, 80, 24)
	a = load(t, a, fb)
	a = keys(t, a, "/")
	a = typeText(t, a, "ord")
	if n := len(a.list.shown); n != 1 {
		t.Fatalf("filter ord shows %d ladders, want 1", n)
	}
	a = keys(t, a, "enter")
	if a.prompt.Active() || a.list.filter != "ord" {
		t.Fatalf("enter should keep the filter and close the line: active %v filter %q", a.prompt.Active(), a.list.filter)
	}
	if !strings.Contains(plainView(t, a), "/ord") {
		t.Error("the active filter is not shown")
	}
	a = keys(t, a, "esc")
	if a.list.filter != "" {
		t.Error("esc did not clear the filter")
	}
}

func TestTraceFlow(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 80, 24)
	a = load(t, a, fb)
	a = keys(t, a, "t")
	a = typeText(t, a, "90s orders.work")
	tr, ok := a.ladder.Trace()
	if !ok {
		t.Fatalf("no trace after typing: %+v", a.ladder.trace)
	}
	if tr.Key != "0.0.0.1.0.1.1.0.1.0.orders.work" {
		t.Errorf("key %q", tr.Key)
	}
	var hops []string
	for _, r := range a.ladder.shown() {
		if r.Hop != nil {
			hops = append(hops, r.Queue)
		}
	}
	if got := strings.Join(hops, " "); got != "orders.rung.06 orders.rung.04 orders.rung.03 orders.rung.01" {
		t.Errorf("highlighted hops: %s", got)
	}
	a = keys(t, a, "enter")
	if a.prompt.Active() {
		t.Fatal("enter should pin the trace and close the line")
	}
	if _, ok := a.ladder.Trace(); !ok {
		t.Fatal("the pinned trace is gone")
	}
	a = keys(t, a, "esc")
	if a.ladder.trace != nil || a.screen != screenLadder {
		t.Fatalf("esc should clear the trace and stay: trace %v screen %v", a.ladder.trace, a.screen)
	}
}

func TestTraceTooLongShowsError(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 80, 24)
	a = load(t, a, fb)
	a, _ = a.runCommand("trace 200d")
	if a.ladder.trace == nil || !errors.Is(a.ladder.trace.Err, topology.ErrDelayTooLong) {
		t.Fatalf("trace 200d: %+v", a.ladder.trace)
	}
	if !strings.Contains(plainView(t, a), "exceeds the ladder's maximum") {
		t.Error("the error is not shown inline")
	}
}

func TestPublishFlow(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 80, 24)
	a = load(t, a, fb)
	a = keys(t, a, "p")
	if !isOpen[publishForm](a) {
		t.Fatal("p did not open the form")
	}
	a = typeText(t, a, "90s")
	a = keys(t, a, "tab")
	a = typeText(t, a, "orders.work")
	a = keys(t, a, "tab")
	a = typeText(t, a, "hello")
	a = keys(t, a, "tab")
	a = typeText(t, a, "tenant=acme, attempt=3")
	a = keys(t, a, "tab")
	a = typeText(t, a, "3")
	a = keys(t, a, "tab", "space")
	a, _ = run(t, a, press("enter"))

	if len(fb.published) != 3 {
		t.Fatalf("published %d messages, want 3", len(fb.published))
	}
	m := fb.published[0]
	if m.Exchange != "orders.ingest" || m.RoutingKey != "0.0.0.1.0.1.1.0.1.0.orders.work" || string(m.Body) != "hello" ||
		m.Persistent || m.ContentType != "text/plain" || m.Headers["tenant"] != "acme" || m.Headers["attempt"] != "3" {
		t.Errorf("message %+v", m)
	}
	// The form sends what rungs publish sends: the delay travels with it.
	if m.Headers[topology.HeaderDelayMS] != int64(90000) {
		t.Errorf("delay header %v, want 90000", m.Headers[topology.HeaderDelayMS])
	}
	if a.result.Kind != ui.ResultOK || !strings.Contains(a.result.Text, "3 confirmed") {
		t.Errorf("result %+v", a.result)
	}
	if tr, ok := a.ladder.Trace(); !ok || tr.Delay != 90*time.Second {
		t.Error("after publishing, the ladder should trace the published delay")
	}
	if a.busy != "" {
		t.Errorf("still busy: %q", a.busy)
	}
}

func TestPublishInvalidStaysOpen(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{Ladder: "nsb.v2"}, 80, 24)
	a = load(t, a, fb)
	a = keys(t, a, "p")
	a = typeText(t, a, "90s")
	a = keys(t, a, "enter")
	if !isOpen[publishForm](a) || !strings.Contains(dialogOf[publishForm](t, a).err, "destination") {
		t.Fatalf("an nsb publish without destination must stay open with an error: dialog %T err %q", a.dialog, dialogOf[publishForm](t, a).err)
	}
	if len(fb.published) != 0 {
		t.Fatal("published despite the error")
	}
}

func TestPublishResultCounts(t *testing.T) {
	cases := map[string]struct {
		res  broker.PublishResult
		err  error
		kind ui.ResultKind
		text string
	}{
		"all confirmed": {broker.PublishResult{Confirmed: 5}, nil, ui.ResultOK, "5 confirmed"},
		"some returned": {broker.PublishResult{Confirmed: 3, Returned: 2}, errors.New("2 returned"), ui.ResultWarn, "2 returned (unroutable)"},
		"conn lost":     {broker.PublishResult{Confirmed: 1, Failed: 4}, errors.New("connection lost"), ui.ResultWarn, "4 unknown"},
		"nothing":       {broker.PublishResult{}, errors.New("channel closed"), ui.ResultError, "publish failed: channel closed"},
		"read-only":     {broker.PublishResult{}, broker.ErrReadOnly, ui.ResultWarn, "read-only"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := publishResult(publishedMsg{res: tc.res, err: tc.err, count: 5})
			if r.Kind != tc.kind || !strings.Contains(r.Text, tc.text) {
				t.Errorf("got %+v, want kind %v with %q", r, tc.kind, tc.text)
			}
		})
	}
}

func TestReadOnlyRefusesVisibly(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{Backends: Backends{ReadOnly: true}, Ladder: "orders"}, 80, 24)
	a = load(t, a, fb)
	for _, k := range []string{"p", "x", "X"} {
		a = keys(t, a, k)
		if a.dialog != nil {
			t.Fatalf("%s opened an overlay in read-only mode", k)
		}
		if a.result.Kind != ui.ResultWarn || !strings.Contains(a.result.Text, "read-only") {
			t.Errorf("%s: result %+v", k, a.result)
		}
	}
	for _, c := range []string{"publish", "purge orders.rung.03"} {
		a, _ = a.runCommand(c)
		if a.dialog != nil || !strings.Contains(a.result.Text, "read-only") {
			t.Errorf(":%s in read-only: dialog %T result %+v", c, a.dialog, a.result)
		}
	}
	if len(fb.published)+len(fb.purged) != 0 {
		t.Fatal("read-only mode reached the broker")
	}
	if !strings.Contains(plainView(t, a), "READ-ONLY") {
		t.Error("no read-only badge")
	}
}

func TestPurgeQueue(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 80, 24)
	a = load(t, a, fb)
	a = keys(t, a, "j", "j", "j", "x")
	if !isOpen[purgeConfirm](a) || !strings.Contains(plainView(t, a), "412 ready messages in orders.rung.06") {
		t.Fatal("x should confirm, naming the queue and what is lost")
	}
	a = keys(t, a, "n")
	if a.dialog != nil || len(fb.purged) != 0 {
		t.Fatal("n should cancel without purging")
	}
	a = keys(t, a, "x")
	a, _ = run(t, a, press("y"))
	if strings.Join(fb.purged, ",") != "orders.rung.06" {
		t.Fatalf("purged %v", fb.purged)
	}
	if a.result.Kind != ui.ResultOK || a.result.Text != "purged 412 messages from 1 queue" {
		t.Errorf("result %+v", a.result)
	}
}

func TestPurgeLadderNeedsTheName(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 80, 24)
	a = load(t, a, fb)
	a = keys(t, a, "X")
	a = typeText(t, a, "yes")
	a = keys(t, a, "enter")
	if !isOpen[purgeConfirm](a) || !strings.Contains(dialogOf[purgeConfirm](t, a).err, "type orders") {
		t.Fatalf("a wrong name must not purge: dialog %T err %q", a.dialog, dialogOf[purgeConfirm](t, a).err)
	}
	for range "yes" {
		a = keys(t, a, "backspace")
	}
	a = typeText(t, a, "orders")
	a, _ = run(t, a, press("enter"))
	if len(fb.purged) != 12 {
		t.Fatalf("purged %d queues, want the 10 rungs, done and unroutable: %v", len(fb.purged), fb.purged)
	}
	for _, q := range fb.purged {
		if q == "orders.work" || q == "orders.email" || q == "orders.work.parked" {
			t.Errorf("purged application queue %s", q)
		}
	}
}

func TestPurgeFailureIsReported(t *testing.T) {
	fb := newFake(fixture.Busy())
	fb.purgeErr = errors.New("NOT_FOUND - no queue")
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 80, 24)
	a = load(t, a, fb)
	a = keys(t, a, "x")
	a, _ = run(t, a, press("y"))
	if a.result.Kind != ui.ResultError || !strings.Contains(a.result.Text, "NOT_FOUND") {
		t.Fatalf("result %+v", a.result)
	}
}

func TestCommandLine(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{}, 80, 24)
	a = load(t, a, fb)
	a = keys(t, a, ":")
	a = typeText(t, a, "ladder orders")
	a = keys(t, a, "enter")
	if a.screen != screenLadder || a.ladder.found.Ladder.Name != "orders" {
		t.Fatal(":ladder orders did not open it")
	}
	a = keys(t, a, ":")
	a = typeText(t, a, "refresh 10")
	a = keys(t, a, "enter")
	if a.loop.interval != 10*time.Second || a.loop.followBroker {
		t.Fatalf(":refresh 10 set %s", a.loop.interval)
	}
	a = keys(t, a, ":")
	a = typeText(t, a, "frobnicate")
	a = keys(t, a, "enter")
	if a.result.Kind != ui.ResultError || !strings.Contains(a.result.Text, "unknown command") {
		t.Errorf("unknown command: %+v", a.result)
	}

	// History: ↑ walks back, ↓ returns to what was being typed.
	a = keys(t, a, ":")
	a = typeText(t, a, "dr")
	a = keys(t, a, "up")
	if v := a.prompt.input.Value(); v != "frobnicate" {
		t.Fatalf("↑ recalled %q", v)
	}
	a = keys(t, a, "up", "up")
	if v := a.prompt.input.Value(); v != "ladder orders" {
		t.Fatalf("↑↑↑ recalled %q", v)
	}
	a = keys(t, a, "down", "down", "down")
	if v := a.prompt.input.Value(); v != "dr" {
		t.Fatalf("↓ back to the draft gave %q", v)
	}
	a = keys(t, a, "esc")
	if a.prompt.Active() {
		t.Fatal("esc did not close the command line")
	}
	if _, cmd := a.runCommand("q"); cmd == nil || cmd() != tea.Quit() {
		t.Error(":q does not quit")
	}
}

func TestCommandErrors(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{}, 80, 24)
	a = load(t, a, fb)
	for line, want := range map[string]string{
		"ladder":          "usage: :ladder NAME",
		"ladder zzz":      `no ladder "zzz"`,
		"refresh 10ms":    "at least 1s",
		"purge nothing":   `no queue or ladder "nothing"`,
		"publish 1s x y":  `count "y"`,
		"drift":           "open one first",
		"trace":           "usage: :trace",
		"purge a b":       "usage: :purge",
		"publish 1 2 3 4": "usage: :publish",
	} {
		b := runCommand(t, a, line)
		if b.result.Kind != ui.ResultError || !strings.Contains(b.result.Text, want) {
			t.Errorf(":%s gave %+v, want an error with %q", line, b.result, want)
		}
	}
	// A unique prefix is enough.
	b, _ := a.runCommand("l ret")
	if b.ladder.found.Ladder.Name != "retry4" {
		t.Errorf(":l ret opened %q", b.ladder.found.Ladder.Name)
	}
}

func TestRefreshLoop(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, c := newApp(t, fb, Options{Refresh: 5 * time.Second}, 80, 24)
	a = load(t, a, fb)

	// A tick of an older loop does nothing.
	b, seen := run(t, a, pollMsg{gen: a.loop.gen - 1})
	if len(seen) != 0 || b.loop.pending != nil {
		t.Fatalf("a stale tick started a request: %v", seen)
	}
	// A current tick fetches statistics (one request), not a snapshot.
	c.advance(5 * time.Second)
	before := fb.calls["stats"]
	a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	if fb.calls["stats"] != before+1 {
		t.Fatalf("tick made %d stats requests", fb.calls["stats"]-before)
	}
	if a.refreshed != c.now() {
		t.Errorf("refreshed at %s", a.refreshed)
	}
	// Every sixth tick reads the whole snapshot.
	snaps := fb.calls["snapshot"]
	for i := 0; i < ops.SnapshotEvery; i++ {
		a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	}
	if fb.calls["snapshot"] != snaps+1 {
		t.Errorf("%d ticks made %d snapshots, want 1", ops.SnapshotEvery, fb.calls["snapshot"]-snaps)
	}
	// r restarts the loop with a snapshot.
	gen := a.loop.gen
	snaps = fb.calls["snapshot"]
	a, _ = run(t, a, press("r"))
	if a.loop.gen != gen+1 || fb.calls["snapshot"] != snaps+1 {
		t.Errorf("r: generation %d→%d, snapshots +%d", gen, a.loop.gen, fb.calls["snapshot"]-snaps)
	}
}

func TestNewQueueTriggersSnapshot(t *testing.T) {
	fb := newFake(fixture.Healthy())
	a, _ := newApp(t, fb, Options{}, 80, 24)
	a = load(t, a, fb)
	fb.mu.Lock()
	fb.snap = fb.snap.Merge(fixture.Billing().Plan().Snapshot())
	fb.mu.Unlock()
	snaps := fb.calls["snapshot"]
	a, _ = run(t, update(t, a, pollMsg{gen: a.loop.gen}), nil)
	a.loop.pending = nil
	a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	if fb.calls["snapshot"] <= snaps {
		t.Fatal("new queues in the statistics did not trigger a snapshot")
	}
	if len(a.found) != 2 {
		t.Fatalf("found %d ladders after the snapshot, want 2", len(a.found))
	}
}

func TestFailingBrokerIsState(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, c := newApp(t, fb, Options{Ladder: "orders"}, 80, 24)
	a = load(t, a, fb)
	fb.err = errRefused
	c.advance(5 * time.Second)
	a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	if a.loop.err == nil {
		t.Fatal("a failing refresh left no trace")
	}
	s := plainView(t, a)
	if !strings.Contains(s, "connect: connection") || !strings.Contains(s, "orders.rung.09") {
		t.Fatalf("a failing broker should show the reason above the last data:\n%s", s)
	}
	// Keys still work.
	a = keys(t, a, "?")
	if !isOpen[helpDialog](a) {
		t.Fatal("help does not open while the broker fails")
	}
	a = keys(t, a, "esc")
	// Recovery clears the state.
	fb.err = nil
	c.advance(5 * time.Second)
	a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	if a.loop.err != nil || strings.Contains(plainView(t, a), "connect: connection") {
		t.Fatal("the failure outlived a successful refresh")
	}
}

func TestSlowBrokerIsState(t *testing.T) {
	fb := newFake(fixture.Busy())
	fb.hang = true
	a, c := newApp(t, fb, Options{Refresh: 5 * time.Second}, 80, 24)
	// Nothing answers: the first request is pending, and ticks do not pile
	// more requests onto the broker.
	c.advance(6 * time.Second)
	a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	s := plainView(t, a)
	if !strings.Contains(s, "waiting for broker 6s") || !strings.Contains(s, "no answer yet after 6s") {
		t.Fatalf("a slow broker is not shown:\n%s", s)
	}
	if n := fb.calls["snapshot"] + fb.calls["stats"]; n != 0 {
		t.Errorf("%d more requests sent to a broker that has not answered", n)
	}
	if !a.amqp.clockOn {
		t.Error("the waiting time should tick")
	}
	a = keys(t, a, "?")
	if !isOpen[helpDialog](a) {
		t.Fatal("keys do not work while the broker hangs")
	}
	// Past twice the timeout, the request is given up and reported.
	a = keys(t, a, "esc")
	c.advance(2 * defaultTimeout)
	a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	if a.loop.err == nil || !strings.Contains(a.loop.err.err.Error(), "no answer after") {
		t.Fatalf("an abandoned request is not reported: %+v", a.loop.err)
	}
}

func TestStuckDetectionOverTime(t *testing.T) {
	snap := fixture.Healthy()
	still := fixture.WithStats(snap, map[string]topology.QueueStats{"orders.rung.02": {Ready: 9, State: "running"}})
	fb := newFake(still)
	a, c := newApp(t, fb, Options{Ladder: "orders", Refresh: 5 * time.Second}, 80, 24)
	a = load(t, a, fb)
	stuck := func() bool {
		for _, r := range a.ladder.rows {
			if r.Queue == "orders.rung.02" {
				return r.Stuck
			}
		}
		return false
	}
	// rung 02 holds messages for 4s; allow two 5s intervals of slack.
	for i := 0; i < 2; i++ {
		c.advance(5 * time.Second)
		a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	}
	if stuck() {
		t.Fatal("stuck after 10s; the TTL plus slack is 14s")
	}
	c.advance(5 * time.Second)
	a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	if !stuck() {
		t.Fatal("a depth unchanged for 15s on a 4s rung is not flagged")
	}
}

func TestConnectionStates(t *testing.T) {
	c := newClock()
	cases := map[string]struct {
		state broker.ConnState
		want  string
	}{
		"connected":    {broker.ConnState{Status: broker.Connected}, "● connected"},
		"reconnecting": {broker.ConnState{Status: broker.Reconnecting, NextAttempt: c.now().Add(2500 * time.Millisecond), Attempt: 1}, "reconnecting in 3s (attempt 2)"},
		"failed":       {broker.ConnState{Status: broker.Failed, Err: errors.New("ACCESS_REFUSED")}, "AMQP failed: ACCESS_REFUSED"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fb := newFake(fixture.Healthy())
			conn := &fakeConn{state: tc.state, ch: make(chan broker.ConnState, 1)}
			a, _ := newApp(t, fb, Options{Backends: Backends{Conn: conn}}, 120, 40)
			a = load(t, a, fb)
			if s := plainView(t, a); !strings.Contains(s, tc.want) {
				t.Errorf("header lacks %q:\n%s", tc.want, strings.SplitN(s, "\n", 2)[0])
			}
		})
	}
	// A change arrives as a message and re-arms the watch.
	fb := newFake(fixture.Healthy())
	conn := &fakeConn{state: broker.ConnState{Status: broker.Connected}, ch: make(chan broker.ConnState, 1)}
	a, _ := newApp(t, fb, Options{Backends: Backends{Conn: conn}}, 80, 24)
	m, cmd := a.Update(connMsg{broker.ConnState{Status: broker.Reconnecting, NextAttempt: c.now().Add(5 * time.Second)}, conn.ch})
	a = m.(App)
	if cmd == nil || !a.amqp.clockOn {
		t.Fatal("reconnecting should re-arm the watch and start the countdown clock")
	}
}

func TestBackgroundColourRestyles(t *testing.T) {
	fb := newFake(fixture.Healthy())
	a, _ := newApp(t, fb, Options{}, 80, 24)
	if !a.styles.IsDark {
		t.Fatal("styles should default to dark until the terminal answers")
	}
	a = update(t, a, tea.BackgroundColorMsg{Color: colorWhite{}})
	if a.styles.IsDark || a.list.st.IsDark {
		t.Fatal("a light background did not switch to light styles")
	}
}

type colorWhite struct{}

func (colorWhite) RGBA() (r, g, b, a uint32) { return 0xffff, 0xffff, 0xffff, 0xffff }

func TestResizeKeepsScreenSize(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{Ladder: "nsb.v2"}, 120, 40)
	a = load(t, a, fb)
	for _, sz := range []struct{ w, h int }{{80, 24}, {60, 15}, {200, 60}, {80, 24}} {
		a = update(t, a, tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
		if n := strings.Count(plainView(t, a), "\n") + 1; n != sz.h {
			t.Errorf("%dx%d: %d lines", sz.w, sz.h, n)
		}
	}
}

func TestViewAlwaysAltScreen(t *testing.T) {
	a := New(Options{Backends: Backends{Inspector: newFake(fixture.Empty())}})
	if v := a.View(); !v.AltScreen {
		t.Fatal("the view before the first size leaves the alternate screen")
	}
}

// A radix-4 ladder folds its idle rungs; z unfolds them, the cursor stays
// on its queue through both, and a filter shows idle rungs too.
func TestFoldIdleRungs(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{Ladder: "retry4"}, 120, 40)
	a = load(t, a, fb)
	all := len(a.ladder.traceRows())
	folded := len(a.ladder.shown())
	if folded >= all || !strings.Contains(plainView(t, a), "idle rungs folded (z)") {
		t.Fatalf("retry4 shows %d of %d rows; view:\n%s", folded, all, plainView(t, a))
	}
	cur, _ := a.ladder.Selected()
	a = keys(t, a, "z")
	if n := len(a.ladder.shown()); n != all || strings.Contains(plainView(t, a), "folded") {
		t.Fatalf("z: %d rows shown, want all %d", n, all)
	}
	if got, _ := a.ladder.Selected(); got.Queue != cur.Queue {
		t.Errorf("z moved the cursor from %s to %s", cur.Queue, got.Queue)
	}
	// Walk down onto an idle rung, fold again: the rung under the cursor stays.
	var idle string
	for i := 0; i < all; i++ {
		r, _ := a.ladder.Selected()
		if r.Kind == health.RungRow && r.Stats.Messages() == 0 && r.Severity == health.Fine {
			idle = r.Queue
			break
		}
		a = keys(t, a, "j")
	}
	if idle == "" {
		t.Fatal("no idle rung in retry4")
	}
	a = keys(t, a, "z")
	if got, _ := a.ladder.Selected(); got.Queue != idle || len(a.ladder.shown()) != folded+1 {
		t.Fatalf("folding with the cursor on idle %s: cursor on %s, %d rows (want %d)", idle, got.Queue, len(a.ladder.shown()), folded+1)
	}
	// Moving off it lets it fold, and the cursor lands on the row moved to.
	a = keys(t, a, "k")
	before, _ := a.ladder.Selected()
	if before.Queue == idle || len(a.ladder.shown()) != folded {
		t.Fatalf("after k: cursor on %s, %d rows (want %d, idle %s folded)", before.Queue, len(a.ladder.shown()), folded, idle)
	}
	// Binary ladders never fold.
	a, _ = newApp(t, fb, Options{Ladder: "orders"}, 120, 40)
	a = load(t, a, fb)
	if len(a.ladder.shown()) != len(a.ladder.traceRows()) {
		t.Error("a radix-2 ladder folded rungs")
	}
}

// c (the cost of each radix) and f (when the messages in flight arrive)
// show a pane in place of the table; the same key or esc go back, and a
// pane's key over another pane replaces it.
func TestPanes(t *testing.T) {
	for _, c := range []struct {
		key, ladder, other string
		want               []string
		on                 func(ladderView) bool
	}{
		{"c", "retry4", "d", []string{"› cost", "COST  the range up to", "◂ this ladder", "RADIX LEVELS RUNGS"}, func(v ladderView) bool { return v.showCost }},
		{"f", "orders", "c", []string{"› forecast", "FORECAST", "within 1m", "later", "unknown: stuck rung"}, func(v ladderView) bool { return v.showForecast }},
	} {
		fb := newFake(fixture.Busy())
		a, _ := newApp(t, fb, Options{Ladder: c.ladder}, 80, 24)
		a = keys(t, load(t, a, fb), c.key)
		v := plainView(t, a)
		for _, want := range c.want {
			if !strings.Contains(v, want) {
				t.Fatalf("%s pane lacks %q:\n%s", c.key, want, v)
			}
		}
		a = keys(t, a, "esc")
		if c.on(a.ladder) || a.screen != screenLadder {
			t.Fatalf("esc did not close the %s pane", c.key)
		}
		a = keys(t, a, c.other, c.key)
		if !c.on(a.ladder) || a.ladder.showDrift || a.ladder.showCost && c.key != "c" {
			t.Fatalf("%s over the %s pane should replace it", c.key, c.other)
		}
		a = keys(t, a, c.key)
		if c.on(a.ladder) {
			t.Fatalf("%s did not toggle its pane off", c.key)
		}
	}
}

// A ladder opened before its rungs' statistics arrive has every rung
// folded, so the first row is the done queue; when the rungs fill, the
// cursor the operator never moved goes to the top rung, not stay below.
func TestCursorFollowsTheTopUntilMoved(t *testing.T) {
	busy := fixture.Busy()
	quiet := busy
	quiet.Queues = append([]topology.Queue(nil), busy.Queues...)
	for i := range quiet.Queues {
		if strings.HasPrefix(quiet.Queues[i].Name, "retry4.rung.") {
			quiet.Queues[i].Stats = topology.QueueStats{}
		}
	}
	fb := newFake(quiet)
	a, _ := newApp(t, fb, Options{Ladder: "retry4"}, 120, 40)
	a = load(t, a, fb)
	if r, _ := a.ladder.Selected(); r.Kind == health.RungRow {
		t.Fatalf("all rungs idle, yet the cursor is on rung %s", r.Queue)
	}
	fb.mu.Lock()
	fb.snap = busy
	fb.mu.Unlock()
	a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	if r, _ := a.ladder.Selected(); r.Kind != health.RungRow {
		t.Fatalf("the rungs filled, but the unmoved cursor is on %s", r.Queue)
	}
	// Once moved, the cursor stays on its queue across refreshes.
	a = keys(t, a, "j")
	cur, _ := a.ladder.Selected()
	a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	if r, _ := a.ladder.Selected(); r.Queue != cur.Queue {
		t.Fatalf("after j and a refresh the cursor moved from %s to %s", cur.Queue, r.Queue)
	}
}

// TestStallDetectionOverTime: the console flags a quorum rung stalled once
// its expired messages have waited, without their count falling, for its
// TTL (at most one interval) plus two intervals; a count that falls
// restarts the clock.
func TestStallDetectionOverTime(t *testing.T) {
	snap := fixture.Stalled()
	fb := newFake(snap)
	a, c := newApp(t, fb, Options{Ladder: "jobs", Refresh: 5 * time.Second}, 80, 24)
	a = load(t, a, fb)
	row := func(q string) health.Row {
		for _, r := range a.ladder.rows {
			if r.Queue == q {
				return r
			}
		}
		t.Fatalf("no row %s", q)
		return health.Row{}
	}
	tick := func() {
		c.advance(5 * time.Second)
		a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	}
	// jobs.rung.03.1 (TTL 4.096s): the window is 14.096s.
	tick()
	tick()
	if row("jobs.rung.03.1").Stalled {
		t.Fatal("stalled after 10s; the window is 14.096s")
	}
	if r := row("jobs.rung.03.1"); r.Tag != "536 expired" {
		t.Errorf("a rung waiting within the window says %q", r.Tag)
	}
	tick()
	if r := row("jobs.rung.03.1"); !r.Stalled || !strings.Contains(r.Status, "not dead-lettered in 15s") {
		t.Fatalf("536 expired messages standing for 15s are not flagged: %+v", r)
	}
	if !strings.Contains(plainView(t, a), "✗ 4 stalled") {
		t.Errorf("the summary does not count the stalled rungs:\n%s", plainView(t, a))
	}
	// The count falls: the clock starts again.
	fb.mu.Lock()
	fb.snap = fixture.WithStats(snap, map[string]topology.QueueStats{"jobs.rung.03.1": {Expired: 100, Type: "quorum", State: "running"}})
	fb.mu.Unlock()
	tick()
	if row("jobs.rung.03.1").Stalled {
		t.Error("a rung whose waiting count fell is still stalled")
	}
}

// Drift fix (issue 19): the purge plan comes from ops, so :purge LADDER
// confirms over the screen the operator is on instead of opening the
// ladder only to read its rows.
func TestPurgeLadderCommandStaysOnTheList(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{}, 80, 24)
	a = load(t, a, fb)
	a, _ = a.runCommand("purge orders")
	if !isOpen[purgeConfirm](a) || a.screen != screenList {
		t.Fatalf(":purge orders: dialog %T, screen %v; want the confirmation over the list", a.dialog, a.screen)
	}
	a = typeText(t, a, "orders")
	a, _ = run(t, a, press("enter"))
	if len(fb.purged) != 12 {
		t.Fatalf("purged %d queues, want the 10 rungs, done and unroutable: %v", len(fb.purged), fb.purged)
	}
}

// Drift fix (issue 19): the trace pane checks the route over the broker's
// bindings, as rungs trace does, and says where it breaks.
func TestTracePaneChecksTheRoute(t *testing.T) {
	snap := fixture.Busy()
	var kept []topology.Binding
	for _, b := range snap.Bindings {
		if b.Destination != "orders.rung.06" {
			kept = append(kept, b)
		}
	}
	snap.Bindings = kept
	fb := newFake(snap)
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 120, 40)
	a = load(t, a, fb)
	a, _ = a.runCommand("trace 90s orders.work")
	if v := plainView(t, a); !strings.Contains(v, "BROKEN on the broker") {
		t.Fatalf("a trace through an unbound rung was not flagged:\n%s", v)
	}
}

// With a drain capacity saved on the broker for the ladder's rungs, the
// publish form says how late a burst will arrive before it is sent; a
// single message, or a broker without a capacity, says nothing.
func TestPublishFormForecastsLateness(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 120, 40)
	a = load(t, a, fb)
	a = keys(t, a, "p")
	a = typeText(t, a, "90s")
	a = keys(t, a, "tab", "tab", "tab", "tab")
	a = typeText(t, a, "10000")
	if strings.Contains(plainView(t, a), "will arrive") {
		t.Fatal("a forecast without a saved capacity")
	}
	a = keys(t, a, "esc")
	a, _ = run(t, a, capacityMsg{"quorum": {HopsPerS: 100, RabbitMQ: "4.3.6"}, "classic": {HopsPerS: 100, RabbitMQ: "4.3.6"}})
	a = keys(t, a, "p")
	a = typeText(t, a, "90s")
	a = keys(t, a, "tab", "tab", "tab", "tab")
	a = typeText(t, a, "10000")
	if v := plainView(t, a); !strings.Contains(v, "10000 messages of 1m30s will arrive up to about") {
		t.Errorf("no forecast in the form:\n%s", v)
	}
}
