package model

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// lostFake is fixture.WorkLost with classic queues (read-only peeks on
// every release): w's target jobs.q was deleted, and its unroutable queue
// holds 5 messages whose keys name jobs.q.
func lostFake(t *testing.T) *fakeBroker {
	t.Helper()
	l := fixture.Work()
	l.QueueType, l.Targets = topology.Classic, nil
	l, err := l.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	snap := fixture.WithStats(l.Plan().Snapshot(), map[string]topology.QueueStats{
		"w.unroutable": {Ready: 5, Type: "classic", State: "running"},
	})
	key, err := l.Key(2*time.Second, "jobs.q")
	if err != nil {
		t.Fatal(err)
	}
	res := broker.PeekResult{Queue: "w.unroutable", Ready: 5}
	for range 5 {
		res.Messages = append(res.Messages, broker.PeekedMessage{Delivery: broker.Delivery{RoutingKey: key}})
	}
	fb := newFake(snap)
	fb.peekRes = map[string]broker.PeekResult{"w.unroutable": res}
	return fb
}

// A failed read of the unroutable queue's keys is a refresh failure,
// shown the usual way; the next reading reads them again, names the lost
// target with its count, and a reading after that, of the same depths,
// reads nothing more.
func TestUnroutedReadFailsThenNames(t *testing.T) {
	fb := lostFake(t)
	fb.peekErr = errors.New("channel closed")
	conn := &fakeConn{state: broker.ConnState{Status: broker.Connected}, ch: make(chan broker.ConnState)}
	a, c := newApp(t, fb, Options{Ladder: "w", Backends: Backends{Conn: conn}}, 120, 40)
	a = load(t, a, fb)
	if a.loop.err == nil || a.loop.err.op != whyOp {
		t.Fatalf("a failed peek: the loop's error is %+v, want %q", a.loop.err, whyOp)
	}
	if s := plainView(t, a); !strings.Contains(s, whyOp+" failed: channel closed") || strings.Contains(s, "lost route to jobs.q") {
		t.Errorf("after a failed read of the keys:\n%s", s)
	}

	fb.mu.Lock()
	fb.peekErr = nil
	fb.mu.Unlock()
	c.advance(5 * time.Second)
	a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	if a.loop.err != nil {
		t.Fatalf("%s: %v", a.loop.err.op, a.loop.err.err)
	}
	a = keys(t, a, "G")
	flat := strings.Join(strings.Fields(plainView(t, a)), " ")
	// The remedy is the one rungs status prints, under the table.
	remedy := "remedy: restore jobs.q: rungs apply --ladder w --target jobs.q (declares the queue and binds it); once restored, rungs replay --from w.unroutable --to-origin sends them on"
	for _, want := range []string{"lost route to jobs.q", "5 of 5 unroutable messages meant for jobs.q (queue jobs.q is gone)", remedy} {
		if !strings.Contains(flat, want) {
			t.Errorf("the ladder view lacks %q:\n%s", want, plainView(t, a))
		}
	}
	// A filter that hides the unroutable queue does not restore the
	// route: the remedy stays.
	a = keys(t, a, "/")
	a = typeText(t, a, "rung")
	a = keys(t, a, "enter")
	if a.ladder.Filter() != "rung" {
		t.Fatalf("the ladder's filter is %q, want rung", a.ladder.Filter())
	}
	if flat := strings.Join(strings.Fields(plainView(t, a)), " "); strings.Contains(flat, "w.unroutable ·") || !strings.Contains(flat, remedy) {
		t.Errorf("filtered to the rungs, the ladder view:\n%s", plainView(t, a))
	}
	a = keys(t, a, "esc")
	if len(fb.peeked) != 2 {
		t.Errorf("peeked %v, want w.unroutable twice (failed, then read)", fb.peeked)
	}

	c.advance(5 * time.Second)
	a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	if len(fb.peeked) != 2 {
		t.Errorf("a reading of the same depths peeked again: %v", fb.peeked)
	}
	if !strings.Contains(plainView(t, a), "lost route to jobs.q") {
		t.Errorf("after a later reading, jobs.q is no longer named:\n%s", plainView(t, a))
	}
}

// Without a connected AMQP connection the keys are not read, and the
// queue says what it always said, without an error.
func TestUnroutedNotReadWithoutAMQP(t *testing.T) {
	fb := lostFake(t)
	conn := &fakeConn{state: broker.ConnState{Status: broker.Reconnecting}, ch: make(chan broker.ConnState)}
	a, _ := newApp(t, fb, Options{Ladder: "w", Backends: Backends{Conn: conn}}, 120, 40)
	a = load(t, a, fb)
	if len(fb.peeked) != 0 || a.loop.err != nil || a.loop.pending != nil {
		t.Errorf("reconnecting: peeked %v, error %+v, pending %+v", fb.peeked, a.loop.err, a.loop.pending)
	}
	if s := plainView(t, a); strings.Contains(s, "lost route to jobs.q") || !strings.Contains(s, "5 unroutable") {
		t.Errorf("unread, the ladder view:\n%s", s)
	}
}

// An NServiceBus endpoint bound straight to the delivery exchange was
// deleted before the console opened, on 4.3: no binding names it, and 3
// expired messages are held in the lowest rung. The console reads the keys
// of the ready messages still on their way in a higher rung, as status
// does, and names sales with the 3 held; once read, it reads them no more.
func TestConsoleNamesAnUnboundEndpointFromReadyKeys(t *testing.T) {
	l, err := topology.Ladder{Name: "nsb.v2", Layout: "nsb", Unit: time.Second, Levels: 28, Radix: 2, QueueType: topology.Quorum}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	snap := fixture.WithStats(l.Plan().Snapshot(), map[string]topology.QueueStats{
		"nsb.v2.delay-level-00": {Expired: 3, Type: "quorum", State: "running"},
		"nsb.v2.delay-level-11": {Ready: 2, Type: "quorum", State: "running"},
	})
	key, err := l.Key(time.Hour, "sales")
	if err != nil {
		t.Fatal(err)
	}
	fb := newFake(snap)
	v, _ := topology.ParseVersion("4.3.6")
	fb.ov.RabbitMQVersion, fb.factsVersion, fb.limitKnown = v.String(), v, true
	fb.peekRes = map[string]broker.PeekResult{"nsb.v2.delay-level-11": {Queue: "nsb.v2.delay-level-11", Ready: 2,
		Messages: []broker.PeekedMessage{{Delivery: broker.Delivery{RoutingKey: key}}, {Delivery: broker.Delivery{RoutingKey: key}}}}}
	conn := &fakeConn{state: broker.ConnState{Status: broker.Connected}, ch: make(chan broker.ConnState)}
	a, c := newApp(t, fb, Options{Ladder: "nsb.v2", Backends: Backends{Conn: conn}}, 120, 40)
	a = load(t, a, fb)
	for range 12 {
		c.advance(5 * time.Second)
		a, _ = run(t, a, pollMsg{gen: a.loop.gen})
	}
	if a.loop.err != nil {
		t.Fatalf("%s: %v", a.loop.err.op, a.loop.err.err)
	}
	flat := strings.Join(strings.Fields(plainView(t, a)), " ")
	for _, want := range []string{"✗ lost route to sales", "declare binding source=nsb.v2.delay-delivery destination=sales routing_key='#.sales'"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the ladder view lacks %q:\n%s", want, plainView(t, a))
		}
	}
	if len(fb.peeked) != 1 || fb.peeked[0] != "nsb.v2.delay-level-11" {
		t.Errorf("peeked %v, want nsb.v2.delay-level-11 once", fb.peeked)
	}
}
