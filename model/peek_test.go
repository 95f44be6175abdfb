package model

import (
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// parkedFake is the busy fixture whose parking queue holds Parked's
// messages.
func parkedFake() *fakeBroker {
	fb := newFake(fixture.Busy())
	fb.peekRes = map[string]broker.PeekResult{"orders.work.parked": fixture.Parked()}
	return fb
}

func TestPeekOpensOnTheSelectedQueue(t *testing.T) {
	fb := parkedFake()
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 120, 40)
	a = keys(t, load(t, a, fb), "G")
	a, _ = run(t, a, press("v"))
	if a.screen != screenPeek || a.peek.queue != "orders.work.parked" || len(a.peek.msgs) != 3 {
		t.Fatalf("v on the parking queue: screen %v queue %q, %d messages; result %+v", a.screen, a.peek.queue, len(a.peek.msgs), a.result)
	}
	// Loading read the keys in orders.unroutable, to name a lost route
	// (ReadUnrouted); v peeked the parking queue alone.
	if len(fb.peeked) != 2 || fb.peeked[0] != "orders.unroutable" || fb.peeked[1] != "orders.work.parked" {
		t.Fatalf("peeked %v", fb.peeked)
	}
	s := plainView(t, a)
	for _, want := range []string{
		"peeking left them in the queue, in order, marked redelivered",
		"order-1042", "rejected from orders.work ×3",
		"●  +0s     orders.rung.06", "rung 6 (1m4s)", "✗  +1m35s  orders.work", "◆  now     orders.work.parked",
		`"customer": "acme"`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the peek view lacks %q:\n%s", want, s)
		}
	}
	if n := len(a.log.entries); n != 1 || a.log.entries[0].Op != "peek" || a.log.entries[0].Result == "" {
		t.Errorf("the peek is not in the command log: %+v", a.log.entries)
	}

	// The retry history of a parked job, and a binary body in hex.
	a = keys(t, a, "j")
	if s := plainView(t, a); !strings.Contains(s, "attempt 3") || !strings.Contains(s, "never dead-lettered") {
		t.Errorf("the job's retry history is not shown:\n%s", s)
	}
	a = keys(t, a, "j")
	if s := plainView(t, a); !strings.Contains(s, "binary, hex") || !strings.Contains(s, "|..order-5") {
		t.Errorf("the binary body is not shown in hex:\n%s", s)
	}

	a = keys(t, a, "esc")
	if a.screen != screenLadder {
		t.Fatalf("esc from the peek: screen %v", a.screen)
	}
}

func TestPeekScrollsTheDetail(t *testing.T) {
	fb := parkedFake()
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 80, 24)
	a = keys(t, load(t, a, fb), "G")
	a, _ = run(t, a, press("v"))
	a = keys(t, a, "space")
	if a.peek.scroll == 0 {
		t.Fatal("space did not scroll the detail")
	}
	a = keys(t, a, "G", "G", "g")
	if a.peek.sel != 0 || a.peek.scroll != 0 {
		t.Errorf("g: message %d, scroll %d", a.peek.sel, a.peek.scroll)
	}
}

func TestPeekRefusesAQuorumRungUntilForced(t *testing.T) {
	fb := newFake(fixture.Busy())
	fb.limit, fb.limitKnown = 20, true
	a, _ := newApp(t, fb, Options{Ladder: "retry4"}, 120, 40)
	a = load(t, a, fb)
	a, _ = a.runCommand("peek retry4.rung.02.3")
	a, _ = run(t, a, peekFactsMsg{q: queueOf(t, a, "retry4.rung.02.3"), n: peekCount, facts: broker.PeekFacts{Limit: 20, LimitKnown: true}})
	if !isOpen[peekForce](a) || !dialogOf[peekForce](t, a).risk.NeedsForce {
		t.Fatalf("a quorum rung must be refused: dialog %T risk %+v", a.dialog, dialogOf[peekForce](t, a).risk)
	}
	if s := plainView(t, a); !strings.Contains(s, "rung of quorum ladder retry4") || !strings.Contains(s, "limit is 20") || !strings.Contains(s, "Type force") {
		t.Errorf("the refusal does not give the reason:\n%s", s)
	}
	a = keys(t, a, "esc")
	if a.dialog != nil || len(fb.peeked) != 0 || a.result.Kind != ui.ResultWarn {
		t.Fatalf("esc: dialog %T, peeked %v, result %+v", a.dialog, fb.peeked, a.result)
	}

	// A wrong word does not force it; "force" does.
	a, _ = a.runCommand("peek retry4.rung.02.3 5")
	a, _ = run(t, a, peekFactsMsg{q: queueOf(t, a, "retry4.rung.02.3"), n: 5, facts: broker.PeekFacts{Limit: 20, LimitKnown: true}})
	a = typeText(t, a, "yes")
	a = keys(t, a, "enter")
	if !isOpen[peekForce](a) || !strings.Contains(dialogOf[peekForce](t, a).err, "type force") || len(fb.peeked) != 0 {
		t.Fatalf("yes is not force: dialog %T err %q peeked %v", a.dialog, dialogOf[peekForce](t, a).err, fb.peeked)
	}
	for range "yes" {
		a = keys(t, a, "backspace")
	}
	a = typeText(t, a, "force")
	a, _ = run(t, a, press("enter"))
	if len(fb.peeked) != 1 || a.screen != screenPeek || !a.peek.forced || a.peek.n != 5 {
		t.Fatalf("forced: peeked %v screen %v forced %v n %d", fb.peeked, a.screen, a.peek.forced, a.peek.n)
	}
	if s := plainView(t, a); !strings.Contains(s, "forced: peeking") || !strings.Contains(s, "x-delivery-count") {
		t.Errorf("a forced peek does not say so:\n%s", s)
	}
	if e := a.log.entries[len(a.log.entries)-1]; !strings.Contains(strings.Join(e.Sent, " "), "forced") {
		t.Errorf("the log does not record the force: %+v", e)
	}
}

func TestPeekReadsTheDeliveryLimitFirst(t *testing.T) {
	fb := newFake(fixture.Busy())
	fb.limitKnown = true
	a, _ := newApp(t, fb, Options{Ladder: "retry4"}, 80, 24)
	a = load(t, a, fb)
	// The unroutable queue is quorum but no rung: without a limit it is
	// peeked, and the view says the delivery counts rose.
	a, _ = a.runCommand("peek retry4.unroutable")
	a, _ = run(t, a, peekFactsMsg{q: queueOf(t, a, "retry4.unroutable"), n: peekCount, facts: broker.PeekFacts{LimitKnown: true}})
	if a.screen != screenPeek || !strings.Contains(plainView(t, a), "raised x-delivery-count by 1") {
		t.Fatalf("quorum queue without a limit: screen %v\n%s", a.screen, plainView(t, a))
	}
	// The limit comes from the management client, before the peek.
	a, msgs := run(t, a, press("v"))
	if len(msgs) == 0 {
		t.Fatal("v peeked again without reading the limit")
	}
	if _, ok := msgs[0].(peekFactsMsg); !ok {
		t.Errorf("first message %T, want the delivery limit", msgs[0])
	}
}

func TestPeekReadOnly(t *testing.T) {
	fb := parkedFake()
	a, _ := newApp(t, fb, Options{Backends: Backends{ReadOnly: true}, Ladder: "orders"}, 80, 24)
	a = keys(t, load(t, a, fb), "G")
	a, _ = run(t, a, press("v"))
	if a.screen != screenPeek {
		t.Fatalf("read-only must allow peeking a classic queue: %+v", a.result)
	}

	fb = newFake(fixture.Busy())
	fb.limitKnown = true
	a, _ = newApp(t, fb, Options{Backends: Backends{ReadOnly: true}, Ladder: "retry4"}, 80, 24)
	a = load(t, a, fb)
	a, _ = a.runCommand("peek retry4.unroutable")
	a, _ = run(t, a, peekFactsMsg{q: queueOf(t, a, "retry4.unroutable"), n: peekCount, facts: broker.PeekFacts{LimitKnown: true}})
	if !isOpen[peekForce](a) || !dialogOf[peekForce](t, a).readOnly {
		t.Fatalf("read-only must refuse a quorum queue: dialog %T", a.dialog)
	}
	if s := plainView(t, a); !strings.Contains(s, "--read-only refuses it") || strings.Contains(s, "Type force") {
		t.Errorf("read-only refusal:\n%s", s)
	}
	a = keys(t, a, "enter")
	if a.dialog != nil || len(fb.peeked) != 0 || !strings.Contains(a.result.Text, "read-only") {
		t.Fatalf("enter: dialog %T peeked %v result %+v", a.dialog, fb.peeked, a.result)
	}
}

func TestTraceAPeekedMessage(t *testing.T) {
	fb := parkedFake()
	a, _ := newApp(t, fb, Options{Ladder: "orders"}, 120, 40)
	a = keys(t, load(t, a, fb), "G")
	a, _ = run(t, a, press("v"))
	a = keys(t, a, "t")
	tr, ok := a.ladder.Trace()
	if a.screen != screenLadder || !ok {
		t.Fatalf("t: screen %v, trace %+v, result %+v", a.screen, a.ladder.trace, a.result)
	}
	if tr.Requested.String() != "1m30s" || tr.Target != "orders.work" {
		t.Errorf("traced %s to %s, want 1m30s to orders.work", tr.Requested, tr.Target)
	}
	var been, ahead []string
	for _, r := range a.ladder.shown() {
		if r.Visited {
			been = append(been, r.Queue)
		} else if r.Hop != nil {
			ahead = append(ahead, r.Queue)
		}
	}
	if got := strings.Join(been, " "); got != "orders.rung.06 orders.rung.04 orders.rung.03 orders.rung.01 orders.work" {
		t.Errorf("marked as left: %s", got)
	}
	if len(ahead) != 0 {
		t.Errorf("hops not yet taken: %v", ahead)
	}
	s := plainView(t, a)
	for _, want := range []string{"msg   #1 order-1042", "✓ L06", "✗ orders.work rejected", "now orders.work.parked", "✓     orders.work"} {
		if !strings.Contains(s, want) {
			t.Errorf("the traced message lacks %q:\n%s", want, s)
		}
	}
	// A refresh keeps the message's marks.
	a.rebuild()
	if a.ladder.traced == nil {
		t.Error("a refresh dropped the traced message")
	}
	// esc goes back to the peek the message was picked from.
	a = keys(t, a, "esc")
	if a.screen != screenPeek || a.ladder.trace != nil {
		t.Fatalf("esc: screen %v, trace %v", a.screen, a.ladder.trace)
	}

	// A job parked by the retry library has no ladder key.
	a = keys(t, a, "j", "t")
	if a.screen != screenPeek || a.result.Kind != ui.ResultError || !strings.Contains(a.result.Text, "not a key of any ladder") {
		t.Errorf("tracing a message without a ladder key: screen %v, result %+v", a.screen, a.result)
	}
}

func TestDecodeMessagePrefersItsLadder(t *testing.T) {
	found := topology.Discover(fixture.Busy())
	key := "0.0.0.1.0.1.1.0.1.0.orders.work"
	m := broker.PeekedMessage{Delivery: broker.Delivery{RoutingKey: "orders.work.parked", Headers: map[string]any{}}}
	hops := []topology.DeathHop{{Death: topology.Death{Queue: "orders.work", RoutingKeys: []string{key}}, Ladder: "orders"}}
	f, d, dest, rk, ok := decodeMessage(m, hops, found, topology.Ladder{})
	if !ok || f.Ladder.Name != "orders" || d.String() != "1m30s" || dest != "orders.work" || rk != key {
		t.Errorf("decode: %s %s %q %q %v", f.Ladder.Name, d, dest, rk, ok)
	}
	if _, _, _, _, ok := decodeMessage(m, nil, found, found[0].Ladder); ok {
		t.Error("a queue name decoded as a ladder key")
	}
}

func TestPeekCommand(t *testing.T) {
	fb := parkedFake()
	a, _ := newApp(t, fb, Options{}, 80, 24)
	a = load(t, a, fb)
	a, _ = a.runCommand("peek")
	if a.result.Kind != ui.ResultError || !strings.Contains(a.result.Text, "no queue to peek") {
		t.Errorf(":peek on the list: %+v", a.result)
	}
	a = runCommand(t, a, "peek nope")
	if !strings.Contains(a.result.Text, `no queue "nope"`) {
		t.Errorf(":peek nope: %+v", a.result)
	}
	a, _ = a.runCommand("peek orders.work.parked 0")
	if !strings.Contains(a.result.Text, "not between 1 and") {
		t.Errorf(":peek Q 0: %+v", a.result)
	}
	m, cmd := a.runCommand("peek orders.work.parked 2")
	a, _ = run(t, m, settle(cmd))
	if a.screen != screenPeek || len(a.peek.msgs) != 2 || a.peek.back != screenList {
		t.Fatalf(":peek Q 2 from the list: screen %v, %d messages", a.screen, len(a.peek.msgs))
	}
	if h := plainView(t, a); !strings.Contains(h, "ladders › peek orders.work.parked") {
		t.Errorf("breadcrumb:\n%s", h)
	}
	a = keys(t, a, "esc")
	if a.screen != screenList {
		t.Errorf("esc: screen %v, want the list", a.screen)
	}
}

// queueOf is the named queue as the console's snapshot holds it.
func queueOf(t *testing.T, a App, name string) topology.Queue {
	t.Helper()
	q, ok := a.merged().Queue(name)
	if !ok {
		t.Fatalf("no queue %s in the console's snapshot", name)
	}
	return q
}
