package model

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/ui"
)

// publishThroughForm publishes count messages of 90s to orders.work.
func publishThroughForm(t *testing.T, a App) App {
	t.Helper()
	a = keys(t, a, "p")
	a = typeText(t, a, "90s")
	a = keys(t, a, "tab")
	a = typeText(t, a, "orders.work")
	a = keys(t, a, "tab", "tab")
	a = typeText(t, a, "tenant=acme")
	a = keys(t, a, "tab")
	a = typeText(t, a, "3")
	a, _ = run(t, a, press("enter"))
	return a
}

// Every publish and purge is logged with exactly what went to the broker,
// then its outcome; L shows the log and closes it again.
func TestCommandLogRecordsWhatWasSent(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 120, 40)
	a = load(t, a, fb)
	a = publishThroughForm(t, a)
	a = typeText(t, a, ":")
	a = typeText(t, a, "purge orders.rung.09")
	a = keys(t, a, "enter", "y")

	if len(a.log.entries) != 2 {
		t.Fatalf("log has %d entries: %+v", len(a.log.entries), a.log.entries)
	}
	pub, pur := a.log.entries[0], a.log.entries[1]
	sent := strings.Join(pub.Sent, " ")
	for _, want := range []string{"exchange=orders.ingest", "routing_key=0.0.0.1.0.1.1.0.1.0.orders.work", "count=3", "delivery_mode=2", "header tenant=acme"} {
		if !strings.Contains(sent, want) {
			t.Errorf("publish entry lacks %q: %s", want, sent)
		}
	}
	m := fb.published[0]
	if !strings.Contains(sent, "exchange="+m.Exchange) || !strings.Contains(sent, "routing_key="+m.RoutingKey) {
		t.Errorf("the log says %s, the broker got %s %s", sent, m.Exchange, m.RoutingKey)
	}
	if pub.Op != "publish" || pub.Failed || !strings.Contains(pub.Result, "3 confirmed") {
		t.Errorf("publish entry %+v", pub)
	}
	if pur.Op != "purge" || strings.Join(pur.Sent, " ") != "queue=orders.rung.09" || pur.Failed || !strings.Contains(pur.Result, "purged") {
		t.Errorf("purge entry %+v", pur)
	}

	a = keys(t, a, "L")
	if !isOpen[logDialog](a) {
		t.Fatal("L did not open the log")
	}
	if s := plainView(t, a); !strings.Contains(s, "Sent to the broker") || !strings.Contains(s, "queue=orders.rung.09") {
		t.Fatalf("log view:\n%s", s)
	}
	a = keys(t, a, "L")
	if a.dialog != nil {
		t.Fatal("L did not close the log")
	}
	a = typeText(t, a, ":")
	a = typeText(t, a, "log")
	a = keys(t, a, "enter")
	if !isOpen[logDialog](a) {
		t.Fatal(":log did not open the log")
	}
}

// A refused purge is logged as failed, with the broker's reason.
func TestCommandLogRecordsFailures(t *testing.T) {
	fb := newFake(fixture.Busy())
	fb.purgeErr = errors.New("NOT_FOUND - no queue")
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 120, 40)
	a = load(t, a, fb)
	a = typeText(t, a, ":")
	a = typeText(t, a, "purge orders.rung.09")
	a = keys(t, a, "enter", "y")
	if len(a.log.entries) != 1 || !a.log.entries[0].Failed || !strings.Contains(a.log.entries[0].Result, "NOT_FOUND") {
		t.Fatalf("log %+v", a.log.entries)
	}
}

func TestCommandLogIsBounded(t *testing.T) {
	var l commandLog
	first := l.Add(newClock().now(), "publish", "x")
	for i := 0; i < maxLog+50; i++ {
		l.Add(newClock().now(), "purge", fmt.Sprint("queue=", i))
	}
	if len(l.entries) != maxLog || len(l.ids) != maxLog {
		t.Fatalf("log holds %d entries", len(l.entries))
	}
	l.Finish(first, "late", false) // evicted: nothing to do, nothing breaks
	last := l.ids[len(l.ids)-1]
	l.Finish(last, "done", false)
	if l.entries[len(l.entries)-1].Result != "done" || l.entries[len(l.entries)-1].Sent[0] != fmt.Sprint("queue=", maxLog+49) {
		t.Fatalf("newest entry %+v", l.entries[len(l.entries)-1])
	}
}

func TestCommandLogGolden(t *testing.T) {
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			fb := newFake(fixture.Busy())
			a, _ := newApp(t, fb, Options{Ladder: "orders", Context: "local"}, sz.w, sz.h)
			a = load(t, a, fb)
			a = publishThroughForm(t, a)
			a = keys(t, a, "L")
			checkScreen(t, a, sz.w, sz.h)
		})
	}
}

// :ctx lists the contexts and switches to one: the old clients are
// closed, the new broker is read, its read-only setting applies, and the
// old connection's messages no longer count.
func TestContextSwitch(t *testing.T) {
	local := newFake(fixture.Busy())
	prod := newFake(fixture.Healthy())
	oldConn := &fakeConn{state: broker.ConnState{Status: broker.Connected}, ch: make(chan broker.ConnState, 1)}
	newConn := &fakeConn{state: broker.ConnState{Status: broker.Connected}, ch: make(chan broker.ConnState, 1)}
	closed := 0
	var asked []string
	connect := func(_ context.Context, name string) (Backends, error) {
		asked = append(asked, name)
		if name == "down" {
			return Backends{}, errors.New("dial tcp: connection refused")
		}
		return Backends{Inspector: prod, Publisher: prod, Purger: prod, Conn: newConn, Vhost: "jobs", BrokerLabel: "ops@rabbit.prod:5671", ReadOnly: true}, nil
	}
	a, _ := newApp(t, local, Options{Backends: Backends{Conn: oldConn, Close: func() { closed++ }}, Contexts: []string{"down", "local", "prod"}, Context: "local", Connect: connect}, 120, 40)
	a = load(t, a, local)
	if len(a.found) != 4 {
		t.Fatalf("local shows %d ladders", len(a.found))
	}
	a = command(t, a, "ctx")
	if !strings.Contains(a.result.Text, "*local") || !strings.Contains(a.result.Text, "prod") {
		t.Fatalf(":ctx lists %q", a.result.Text)
	}
	a = command(t, a, "ctx nope")
	if a.result.Kind != ui.ResultError || len(asked) != 0 {
		t.Fatalf(":ctx nope: %+v, connected to %v", a.result, asked)
	}
	a = command(t, a, "ctx down")
	if a.result.Kind != ui.ResultError || !strings.Contains(a.result.Text, "still on guest@127.0.0.1:5672") || closed != 0 || a.insp != local {
		t.Fatalf("a failed switch must keep the old broker: %+v", a.result)
	}
	a = command(t, a, "ctx prod")
	if a.context != "prod" || a.insp != prod || a.vhost != "jobs" || closed != 1 || !a.readOnly || a.keys.actions.Publish.Enabled() {
		t.Fatalf("after :ctx prod: context %q vhost %q closed %d read-only %v", a.context, a.vhost, closed, a.readOnly)
	}
	if !a.loaded || len(a.found) != 1 || a.found[0].Ladder.Name != "orders" {
		t.Fatalf("prod not read: loaded %v, %d ladders", a.loaded, len(a.found))
	}
	if s := plainView(t, a); !strings.Contains(s, "prod · ops@rabbit.prod:5671") || !strings.Contains(s, "vhost jobs") {
		t.Fatalf("header after switch:\n%s", strings.SplitN(s, "\n", 2)[0])
	}
	// The old connection's last words do not touch the new state.
	a = update(t, a, connMsg{broker.ConnState{Status: broker.Closed}, oldConn.ch})
	if a.amqp.state.Status != broker.Connected {
		t.Fatalf("old connection's state leaked: %v", a.amqp.state.Status)
	}
	var ops []string
	for _, e := range a.log.entries {
		ops = append(ops, e.Op+" "+strings.Join(e.Sent, " ")+" "+fmt.Sprint(e.Failed))
	}
	if strings.Join(ops, "|") != "connect context=down true|connect context=prod false" {
		t.Fatalf("log %v", ops)
	}
}

func TestContextCommandWithoutContexts(t *testing.T) {
	fb := newFake(fixture.Busy())
	a, _ := newApp(t, fb, Options{}, 80, 24)
	a = command(t, a, "ctx")
	if a.result.Kind != ui.ResultError || !strings.Contains(a.result.Text, "no contexts") {
		t.Fatalf("%+v", a.result)
	}
}

// command runs one `:` command line.
func command(t *testing.T, a App, line string) App {
	t.Helper()
	a = typeText(t, a, ":")
	a = typeText(t, a, line)
	a, _ = run(t, a, press("enter"))
	return a
}
