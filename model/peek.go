package model

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// peekCount is how many messages the console peeks at unless told
// (`:peek QUEUE N`).
const peekCount = 20

// peekTimeout bounds one peek, and reading a queue's delivery limit.
const peekTimeout = 15 * time.Second

// forceWord is what the operator types to peek where peeking can push
// messages along a quorum ladder early.
const forceWord = "force"

// Peeker reads the first messages of a queue without removing them
// (broker.Conn does).
type Peeker interface {
	Peek(ctx context.Context, queue string, n int) (broker.PeekResult, error)
}

// PeekFacter reads what the peek rules weigh about a quorum queue
// (broker.Management does).
type PeekFacter = ops.PeekFacter

// peekFactsMsg carries a quorum queue's peek facts, read before peeking.
type peekFactsMsg struct {
	q     topology.Queue
	n     int
	facts broker.PeekFacts
}

// fetchPeekFacts reads a quorum queue's peek facts off the UI goroutine,
// as rungs peek does (ops.ReadPeekFacts).
func fetchPeekFacts(pf PeekFacter, vhost string, q topology.Queue, n int) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), peekTimeout)
		defer cancel()
		return peekFactsMsg{q: q, n: n, facts: ops.ReadPeekFacts(ctx, pf, vhost, q, topology.Version{})}
	}
}

// peekedMsg reports a peek.
type peekedMsg struct {
	queue  string
	n      int
	risk   broker.PeekRisk
	forced bool
	res    broker.PeekResult
	err    error
	at     time.Time
}

// peek reads up to n messages from the head of queue and hands them back.
func peek(p Peeker, queue string, n int, risk broker.PeekRisk, forced bool, now func() time.Time) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), peekTimeout)
		defer cancel()
		res, err := p.Peek(ctx, queue, n)
		res = res.WithQueueType(risk.Type)
		return peekedMsg{queue: queue, n: n, risk: risk, forced: forced, res: res, err: err, at: now()}
	}
}

// peekResult words a peek for the header and the command log.
func peekResult(m peekedMsg) ui.Result {
	if m.err != nil {
		return ui.Result{Kind: ui.ResultError, Text: fmt.Sprintf("peek %s failed: %v", m.queue, m.err)}
	}
	n := len(m.res.Messages)
	return ui.Result{Kind: ui.ResultOK, Text: fmt.Sprintf("peeked %d of %d in %s", n, m.res.Ready, m.queue)}
}

// ladders are the vhost's ladders, for naming queues in a timeline.
func (a App) ladders() []topology.Ladder { return ops.Ladders(a.found) }

// openPeek starts peeking at queue. Peeking a quorum queue can dead-letter
// messages early, so the queue's delivery limit is read first and the
// risk weighed before anything is taken off it.
func (a App) openPeek(queue string, n int) (App, tea.Cmd) {
	if a.peeker == nil {
		return a.fail("peeking needs an AMQP connection, and this console has none")
	}
	return a.withQueue(queue, wantPeek, n)
}

// peekQueue weighs the risk of peeking q, which the snapshot holds, and
// peeks.
func (a App) peekQueue(q topology.Queue, n int) (App, tea.Cmd) {
	if ops.PeekReadsFacts(q) && a.limits != nil {
		a.busy = "reading the delivery limit of " + q.Name
		return a, fetchPeekFacts(a.limits, a.vhost, q, n)
	}
	// A quorum queue's facts are unknown without a management client to
	// read them; the release is the header's.
	v, _ := topology.ParseVersion(a.overview.RabbitMQVersion)
	return a.gatePeek(peekRequest(q, a.ladders(), ops.ReadPeekFacts(context.Background(), nil, a.vhost, q, v)), n)
}

// peekRequest is the gate's request to peek q, one of ladders' queues or
// none's, with its facts f.
func peekRequest(q topology.Queue, ladders []topology.Ladder, f broker.PeekFacts) ops.PeekRequest {
	return ops.PeekRequest{Queue: q, Ladders: ladders, Version: f.Version, Limit: f.Limit, LimitKnown: f.LimitKnown, DelayedRetries: f.DelayedRetries}
}

// gatePeek refuses, asks for force, or peeks, as ops.GatePeek says. A
// release the facts did not say is the header's.
func (a App) gatePeek(req ops.PeekRequest, n int) (App, tea.Cmd) {
	if req.Version == (topology.Version{}) {
		req.Version, _ = topology.ParseVersion(a.overview.RabbitMQVersion)
	}
	req.ReadOnly = a.readOnly
	g := ops.GatePeek(req)
	switch g.Verdict {
	case ops.PeekReadOnly, ops.PeekNeedsForce:
		c := newPeekForce(g.Risk, n, g.Verdict == ops.PeekReadOnly, a.styles)
		return a, a.open(c, c.Init())
	}
	return a.runPeek(req.Queue.Name, n, g.Risk, false)
}

// runPeek peeks, logging it: a peek changes what consumers see (the
// redelivered flag, quorum delivery counts).
func (a App) runPeek(queue string, n int, risk broker.PeekRisk, forced bool) (App, tea.Cmd) {
	a.busy = fmt.Sprintf("peeking at %d from %s", n, queue)
	sent := []string{"queue=" + queue, fmt.Sprintf("count=%d", n), "basic.get no-ack=false", "then basic.nack requeue=true"}
	if forced {
		sent = append(sent, "(forced: "+risk.Why+")")
	}
	id := a.log.Add(a.now(), "peek", sent...)
	return a, logged(id, peek(a.peeker, queue, n, risk, forced, a.now))
}

// updatePeekReply handles the replies of a peek's commands: the delivery
// limit read first, then the peek itself.
func (a App) updatePeekReply(msg tea.Msg) (App, tea.Cmd) {
	a.busy = ""
	switch msg := msg.(type) {
	case peekFactsMsg:
		return a.gatePeek(peekRequest(msg.q, a.ladders(), msg.facts), msg.n)
	case peekedMsg:
		a.showPeek(msg)
	}
	return a, nil
}

// showPeek opens the peek view on a peek's messages.
func (a *App) showPeek(m peekedMsg) {
	a.result = peekResult(m)
	if m.err != nil {
		return
	}
	back := a.screen
	if back == screenPeek {
		back = a.peek.Back()
	}
	v, _ := topology.ParseVersion(a.overview.RabbitMQVersion)
	a.peek = newPeekView(m, a.ladders(), v, a.styles, a.keys.peek, back)
	a.screen = screenPeek
	a.resize()
}

// peekEffect says in one line what the peek did to the messages on
// release v: which count a quorum queue raised depends on it.
func peekEffect(risk broker.PeekRisk, forced bool, v topology.Version) (string, bool) {
	text := "peeking left them in the queue, in order, marked redelivered"
	if risk.Type == topology.Quorum {
		text = "peeking left them in order, marked redelivered, and " + v.QuorumPeekCounts()
	}
	if forced {
		return "forced: " + text, true
	}
	return text, false
}

// peekView shows a peek: the messages taken from the head of a queue and
// handed back, the selected one in full.
type peekView struct {
	keys    peekKeys
	st      ui.Styles
	queue   string
	qtype   string
	ready   int
	n       int
	msgs    []broker.PeekedMessage
	stories []topology.Story // one per message, read once
	risk    broker.PeekRisk
	forced  bool
	version topology.Version // the broker's, for what a peek counted
	at      time.Time
	stale   string
	// back is the screen esc returns to.
	back                screen
	sel, offset, scroll int
	w, h                int
}

func newPeekView(m peekedMsg, ladders []topology.Ladder, ver topology.Version, st ui.Styles, keys peekKeys, back screen) peekView {
	v := peekView{
		keys: keys, st: st, queue: m.queue, qtype: string(m.risk.Type), ready: m.res.Ready, n: m.n,
		risk: m.risk, forced: m.forced, at: m.at, back: back, version: ver,
		stories: ops.PeekStories(m.res, ladders),
	}
	for _, pm := range m.res.Messages {
		v.msgs = append(v.msgs, pm)
	}
	return v
}

// SetStyles restyles the view.
func (v *peekView) SetStyles(st ui.Styles) { v.st = st }

// Queue is the queue peeked; "" before the first peek.
func (v peekView) Queue() string { return v.queue }

// Count is how many messages the peek asked for.
func (v peekView) Count() int { return v.n }

// Back is the screen esc returns to.
func (v peekView) Back() screen { return v.back }

// MarkReplayed notes that n messages were replayed away from queue since
// the peek, if it is the queue peeked: what is shown may be gone.
func (v *peekView) MarkReplayed(queue string, n int) {
	if v.queue == queue {
		v.stale = fmt.Sprintf("%d replayed away since this peek; v peeks again", n)
	}
}

// SetSize gives the view its body size.
func (v *peekView) SetSize(w, h int) {
	v.w, v.h = w, h
	v.clamp()
}

// Selected returns the message under the cursor and its story.
func (v peekView) Selected() (broker.PeekedMessage, topology.Story, bool) {
	if v.sel < 0 || v.sel >= len(v.msgs) {
		return broker.PeekedMessage{}, topology.Story{}, false
	}
	return v.msgs[v.sel], v.stories[v.sel], true
}

func (v peekView) state(now time.Time) ui.PeekState {
	effect, warn := peekEffect(v.risk, v.forced, v.version)
	return ui.PeekState{
		Queue: v.queue, QueueType: v.qtype, Ready: v.ready, Messages: v.msgs, Stories: v.stories,
		Selected: v.sel, Offset: v.offset, Scroll: v.scroll,
		Effect: effect, Warn: warn, Stale: v.stale, At: v.at, Now: now, MaxBody: ui.DefaultMaxBody,
	}
}

func (v *peekView) clamp() {
	v.sel = max(0, min(v.sel, len(v.msgs)-1))
	s := v.state(time.Time{})
	v.offset = ui.Scroll(v.sel, v.offset, s.ListHeight(v.h), len(v.msgs))
	v.scroll = max(0, min(v.scroll, s.DetailLen(v.w)-s.DetailHeight(v.h)))
}

// Update moves between messages and scrolls the detail pane.
func (v peekView) Update(msg tea.Msg) (peekView, tea.Cmd) {
	page := max(1, v.state(time.Time{}).DetailHeight(v.h)-1)
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k := v.keys
		switch {
		case key.Matches(msg, k.Up):
			v.sel, v.scroll = v.sel-1, 0
		case key.Matches(msg, k.Down):
			v.sel, v.scroll = v.sel+1, 0
		case key.Matches(msg, k.Top):
			v.sel, v.scroll = 0, 0
		case key.Matches(msg, k.Bottom):
			v.sel, v.scroll = len(v.msgs)-1, 0
		case key.Matches(msg, k.ScrollUp):
			v.scroll -= page
		case key.Matches(msg, k.ScrollDown):
			v.scroll += page
		}
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			v.scroll -= 3
		case tea.MouseWheelDown:
			v.scroll += 3
		}
	}
	v.clamp()
	return v, nil
}

// View renders the peek view.
func (v peekView) View(now time.Time) string {
	return ui.PeekView(v.state(now), v.st, v.w, v.h)
}

// updatePeek handles a key or wheel event on the peek view.
func (a App) updatePeek(msg tea.Msg) (tea.Model, tea.Cmd) {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		k := a.keys.peek
		switch {
		case key.Matches(km, k.Trace):
			return a.traceMessage()
		case key.Matches(km, k.Again):
			return a.openPeek(a.peek.Queue(), a.peek.Count())
		case km.String() == "R":
			return a.openReplay(a.peek.Queue())
		}
	}
	var cmd tea.Cmd
	a.peek, cmd = a.peek.Update(msg)
	return a, cmd
}

// traceMessage traces the selected message on its ladder: its routing key
// (or one its x-death recorded) decodes to a delay and a destination, the
// ladder view traces them, and the queues x-death says the message has
// left are marked.
func (a App) traceMessage() (App, tea.Cmd) {
	m, story, ok := a.peek.Selected()
	if !ok {
		return a.fail("no message to trace: the queue was empty")
	}
	hops := story.Hops
	var prefer topology.Ladder
	if a.peek.Back() == screenLadder {
		prefer = a.ladder.Found().Ladder
	}
	f, d, dest, rk, ok := decodeMessage(m, hops, a.found, prefer)
	label := fmt.Sprintf("#%d", m.Position+1)
	if m.MessageID != "" {
		label += " " + m.MessageID
	}
	if !ok {
		return a.fail(fmt.Sprintf("message %s: its routing key %q is not a key of any ladder in vhost %s, and neither is any in its x-death", label, m.RoutingKey, a.vhost))
	}
	if !ops.SameLadder(a.ladder.Found().Ladder, f.Ladder) || a.peek.Back() != screenLadder {
		a.openLadder(f)
	}
	a.screen = screenLadder
	input := topology.FormatSpan(d)
	if dest != "" {
		input += " " + dest
	}
	a.ladder.SetTrace(input)
	a.ladder.TraceMessage(&ui.MessageTrace{Label: label, Hops: hops, Now: a.peek.Queue()}, a.peek.Queue())
	a.result = ui.Result{Kind: ui.ResultInfo, Text: fmt.Sprintf("traced %s: %s → %s (key %s) · esc: back to the peek", label, topology.FormatSpan(d), orDone(dest), rk)}
	return a, nil
}

func orDone(dest string) string {
	if dest == "" {
		return "the ladder's done queue"
	}
	return dest
}

// decodeMessage finds the ladder a message's routing key belongs to. Keys
// are tried in order: the key the message has now, then those x-death
// recorded, oldest first (a message dead-lettered with a new key still
// carries its ladder key there). Ladders are tried in order too: those
// whose queues the message has been through, then prefer, then the rest.
func decodeMessage(m broker.PeekedMessage, hops []topology.DeathHop, found []topology.Found, prefer topology.Ladder) (f topology.Found, d time.Duration, dest, rk string, ok bool) {
	keys := []string{m.RoutingKey}
	for _, h := range hops {
		keys = append(keys, h.RoutingKeys...)
	}
	rank := func(f topology.Found) int {
		for _, h := range hops {
			if h.Ladder == f.Ladder.Name {
				return 0
			}
		}
		if ops.SameLadder(f.Ladder, prefer) {
			return 1
		}
		return 2
	}
	for _, k := range keys {
		if strings.TrimSpace(k) == "" {
			continue
		}
		for r := 0; r <= 2; r++ {
			for _, c := range found {
				if rank(c) != r {
					continue
				}
				if d, dest, err := c.Ladder.Decode(k); err == nil {
					return c, d, dest, k, true
				}
			}
		}
	}
	return topology.Found{}, 0, "", "", false
}

// peekForce is the refusal to peek where AssessPeek says peeking could
// push messages along a quorum ladder early: it gives the reason and, out
// of read-only mode, lets the operator insist by typing "force".
type peekForce struct {
	typedConfirm
	risk     broker.PeekRisk
	n        int
	readOnly bool
}

func newPeekForce(risk broker.PeekRisk, n int, readOnly bool, st ui.Styles) peekForce {
	if readOnly {
		// Nothing to confirm: the dialog only says why.
		keys := confirmKeys{
			Yes: key.NewBinding(key.WithKeys("enter")),
			No:  key.NewBinding(key.WithKeys("esc", "q", "enter"), key.WithHelp("esc", "close")),
		}
		keys.Yes.SetEnabled(false)
		return peekForce{typedConfirm: newTypedConfirm(keys, st, "", "", ""), risk: risk, n: n, readOnly: true}
	}
	keys := confirmKeys{
		Yes: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "peek anyway")),
		No:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
	return peekForce{
		typedConfirm: newTypedConfirm(keys, st, forceWord, fmt.Sprintf("Type %s to peek at %d anyway:", forceWord, n), "type "+forceWord+" to peek anyway, or esc"),
		risk:         risk, n: n,
	}
}

// forceAnswered is the forced-peek refusal's outcome: peek anyway if
// forced, else nothing but a word in the header.
type forceAnswered struct {
	forced   bool
	risk     broker.PeekRisk
	n        int
	readOnly bool
}

// Update answers the dialog.
func (c peekForce) Update(msg tea.Msg) (dialog, tea.Cmd, outcome) {
	cmd, ans := c.answer(msg)
	if ans == unanswered {
		return c, cmd, nil
	}
	return c, nil, forceAnswered{forced: ans == answeredYes, risk: c.risk, n: c.n, readOnly: c.readOnly}
}

// WithFrame sizes and styles the dialog.
func (c peekForce) WithFrame(f frame) dialog {
	c.frame = f
	return c
}

// View renders the dialog; its text is built here so that it follows a
// change of background colour.
func (c peekForce) View() string {
	title := "Not peeking " + c.risk.Queue
	lines := []string{c.risk.Why + "."}
	if c.readOnly {
		title = "Read-only: not peeking " + c.risk.Queue
		lines = append(lines, c.st.Warn.Render("--read-only refuses it: a quorum queue counts a peek as a delivery, which changes what its consumers and policies see."))
	}
	lines = append(lines, "", c.st.Muted.Render("Peeking:"))
	for _, e := range c.risk.Effects {
		lines = append(lines, c.st.Muted.Render("· "+e))
	}
	return c.view(title, lines, 76)
}

// forceAnswered does what the operator answered to the refusal.
func (a App) forceAnswered(o forceAnswered) (App, tea.Cmd) {
	r := o.risk
	if !o.forced {
		kind, text := ui.ResultWarn, "not peeked: "+r.Queue+" is a quorum queue where peeking can move messages early"
		if o.readOnly {
			text = "read-only: peeking quorum queue " + r.Queue + " is refused: " + r.Why
		}
		a.result = ui.Result{Kind: kind, Text: text}
		return a, nil
	}
	return a.runPeek(r.Queue, o.n, r, true)
}

// peekCommand is `:peek [QUEUE] [N]`: the queue under the cursor (or the
// one being peeked) unless named.
func (a App) peekCommand(args []string) (App, tea.Cmd) {
	queue, n := a.currentQueue(), peekCount
	if a.screen == screenPeek && len(args) == 0 {
		n = a.peek.Count()
	}
	switch len(args) {
	case 0:
	case 1, 2:
		if c, err := parseCount(args[0]); err == nil && len(args) == 1 {
			n = c
		} else {
			queue = args[0]
		}
		if len(args) == 2 {
			c, err := parseCount(args[1])
			if err != nil {
				return a.fail(err.Error())
			}
			n = c
		}
	default:
		return a.fail("usage: :peek [QUEUE] [N]")
	}
	if queue == "" {
		return a.fail("no queue to peek at: select one in a ladder, or :peek QUEUE")
	}
	return a.openPeek(queue, n)
}

// parseCount reads a peek count.
func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("count %q is not a number", s)
	}
	if n < 1 || n > broker.MaxPeek {
		return 0, fmt.Errorf("count %d is not between 1 and %d", n, broker.MaxPeek)
	}
	return n, nil
}

// currentQueue is the queue a command applies to when none is named: the
// one being peeked, or the row under the cursor of the ladder view.
func (a App) currentQueue() string {
	switch a.screen {
	case screenPeek:
		return a.peek.Queue()
	case screenLadder:
		if r, ok := a.ladder.Selected(); ok && !r.Missing {
			return r.Queue
		}
	}
	return ""
}
