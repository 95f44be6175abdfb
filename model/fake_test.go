package model

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// fakeBroker is a hand-written stand-in for every broker interface the
// console uses. It records what it was asked and can fail or hang.
type fakeBroker struct {
	mu        sync.Mutex
	snap      topology.Snapshot
	err       error // returned by every read when set
	hang      bool  // reads block until their context ends
	calls     map[string]int
	published []broker.Message
	pubResult *broker.PublishResult
	pubErr    error
	purged    []string
	purgeErr  error
	ov        broker.Overview

	// Peeking: canned results by queue, the queues peeked, and the
	// delivery limit DeliveryLimit reports.
	peekRes    map[string]broker.PeekResult
	peeked     []string
	peekErr    error
	limit      int
	limitKnown bool
	// factsVersion is the release PeekFacts reports, as the management
	// client reads it for a quorum queue; zero: unknown.
	factsVersion topology.Version
	// Moving: the moves asked for; each moves moveN messages, reporting
	// each one, and with moveBlock then waits for its context.
	moves     []broker.MoveOptions
	moveN     int
	moveErr   error
	moveBlock bool
}

func newFake(snap topology.Snapshot) *fakeBroker {
	return &fakeBroker{snap: snap, calls: map[string]int{}, ov: broker.Overview{RabbitMQVersion: "4.1.0"}}
}

func (f *fakeBroker) read(ctx context.Context, op string) error {
	f.mu.Lock()
	f.calls[op]++
	hang, err := f.hang, f.err
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return err
}

func (f *fakeBroker) Snapshot(ctx context.Context, vhost string) (topology.Snapshot, error) {
	if err := f.read(ctx, "snapshot"); err != nil {
		return topology.Snapshot{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snap, nil
}

// BridgeStats is the bridges' listing a scoped read asks for: the
// snapshot's queues, read (and counted) as the snapshot.
func (f *fakeBroker) BridgeStats(ctx context.Context, vhost string) ([]topology.Queue, error) {
	snap, err := f.Snapshot(ctx, vhost)
	return snap.Queues, err
}

func (f *fakeBroker) Stats(ctx context.Context, vhost string) ([]topology.Queue, error) {
	if err := f.read(ctx, "stats"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return fixture.Queues(f.snap), nil
}

// LadderSnapshot, LadderStats and QueueStats are the reads by name a
// lookup makes (ops.ScopedInspector). The objects a scope names are the
// whole snapshot's here, a superset the observer narrows itself; the
// console's refreshes ask the fake for the whole vhost (newApp).
func (f *fakeBroker) LadderSnapshot(ctx context.Context, sc topology.Scope) (topology.Snapshot, error) {
	if err := f.read(ctx, "ladder-snapshot"); err != nil {
		return topology.Snapshot{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snap, nil
}

func (f *fakeBroker) LadderStats(ctx context.Context, sc topology.Scope) ([]topology.Queue, error) {
	if err := f.read(ctx, "ladder-stats"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return fixture.Queues(f.snap), nil
}

func (f *fakeBroker) QueueStats(ctx context.Context, vhost string, names []string) ([]topology.Queue, error) {
	if err := f.read(ctx, "queue-stats"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []topology.Queue
	for _, q := range fixture.Queues(f.snap) {
		if slices.Contains(names, q.Name) {
			out = append(out, q)
		}
	}
	return out, nil
}

func (f *fakeBroker) Overview(ctx context.Context) (broker.Overview, error) {
	if err := f.read(ctx, "overview"); err != nil {
		return broker.Overview{}, err
	}
	return f.ov, nil
}

func (f *fakeBroker) Vhosts(ctx context.Context) ([]string, error) {
	if err := f.read(ctx, "vhosts"); err != nil {
		return nil, err
	}
	return []string{"/"}, nil
}

func (f *fakeBroker) Publish(ctx context.Context, msgs []broker.Message) (broker.PublishResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.published = append(f.published, msgs...)
	if f.pubResult != nil {
		return *f.pubResult, f.pubErr
	}
	return broker.PublishResult{Confirmed: len(msgs)}, f.pubErr
}

func (f *fakeBroker) Purge(ctx context.Context, queue string) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.purgeErr != nil {
		return 0, f.purgeErr
	}
	f.purged = append(f.purged, queue)
	q, _ := f.snap.Queue(queue)
	return int(q.Stats.Ready), nil
}

func (f *fakeBroker) Peek(ctx context.Context, queue string, n int) (broker.PeekResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.peeked = append(f.peeked, queue)
	if f.peekErr != nil {
		return broker.PeekResult{Queue: queue}, f.peekErr
	}
	if r, ok := f.peekRes[queue]; ok {
		if len(r.Messages) > n {
			r.Messages = r.Messages[:n]
		}
		return r, nil
	}
	q, _ := f.snap.Queue(queue)
	return broker.PeekResult{Queue: queue, Ready: int(q.Stats.Ready)}, nil
}

func (f *fakeBroker) PeekFacts(ctx context.Context, vhost string, q topology.Queue) (broker.PeekFacts, error) {
	if err := f.read(ctx, "limit"); err != nil {
		return broker.PeekFacts{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return broker.PeekFacts{Version: f.factsVersion, Limit: f.limit, LimitKnown: f.limitKnown}, nil
}

func (f *fakeBroker) Move(ctx context.Context, o broker.MoveOptions) (broker.MoveProgress, error) {
	f.mu.Lock()
	f.moves = append(f.moves, o)
	n, block, err := f.moveN, f.moveBlock, f.moveErr
	f.mu.Unlock()
	p := broker.MoveProgress{SourceReady: -1, Reasons: map[string]int{}}
	report := func() {
		if o.Progress != nil {
			o.Progress(p)
		}
	}
	for i := 0; i < n; i++ {
		p.Moved++
		p.Elapsed += 100 * time.Millisecond
		report()
	}
	p.Done = true
	if block {
		<-ctx.Done()
		p.Stopped = broker.StopCancelled
		report()
		return p, ctx.Err()
	}
	p.Stopped, p.SourceReady = broker.StopEmpty, 0
	report()
	return p, err
}

// fakeConn is a StateWatcher whose state the test sets.
type fakeConn struct {
	state broker.ConnState
	ch    chan broker.ConnState
}

func (c *fakeConn) State() broker.ConnState          { return c.state }
func (c *fakeConn) Changes() <-chan broker.ConnState { return c.ch }

var errRefused = errors.New("dial tcp 127.0.0.1:15672: connect: connection refused")

// clock is 2025-03-14 09:26:53 UTC, moved by tests.
type clock struct{ t time.Time }

func newClock() *clock                   { return &clock{time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)} }
func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

// newApp builds a console on a fake broker at a fixed time and size.
func newApp(t *testing.T, fb *fakeBroker, opts Options, w, h int) (App, *clock) {
	t.Helper()
	c := newClock()
	opts.Inspector, opts.Publisher, opts.Purger = fb, fb, fb
	opts.Reach = ops.ReachVhost // the fake's reads by name are not the broker's
	opts.Peeker, opts.Mover, opts.Limits = fb, fb, fb
	if opts.BrokerLabel == "" {
		opts.BrokerLabel = "guest@127.0.0.1:5672"
	}
	opts.Now = c.now
	a := New(opts)
	a = update(t, a, tea.WindowSizeMsg{Width: w, Height: h})
	return a, c
}

// update sends one message and returns the new App.
func update(t *testing.T, a App, msg tea.Msg) App {
	t.Helper()
	m, _ := a.Update(msg)
	return m.(App)
}

// load answers the first snapshot request, as the program would, and the
// snapshot of the ladder it opened (Options.Ladder) if it opened one.
func load(t *testing.T, a App, fb *fakeBroker) App {
	t.Helper()
	for i := 0; i < 2 && a.loop.pending != nil; i++ {
		var cmd tea.Cmd
		a, cmd = updateCmd(t, a, readMsg{seq: a.loop.pending.seq, r: a.loop.pending.read.Do(context.Background(), fb, a.now)})
		if a.loop.pending != nil && a.loop.pending.why {
			// The reading left an unroutable queue's keys unread: the
			// read of them is in flight; answer it too.
			a = update(t, a, cmd())
		}
	}
	return a
}

// updateCmd sends one message and returns the new App and its command.
func updateCmd(t *testing.T, a App, msg tea.Msg) (App, tea.Cmd) {
	t.Helper()
	m, cmd := a.Update(msg)
	return m.(App), cmd
}

// run sends a message, then runs the commands it returns (and those they
// return) against the fakes, feeding every message back through Update.
// Commands that do not finish quickly (ticks, cursor blinks, a hanging
// broker) are dropped, so the test sees exactly what the I/O produced.
func run(t *testing.T, a App, msg tea.Msg) (App, []tea.Msg) {
	t.Helper()
	m, cmd := a.Update(msg)
	a = m.(App)
	var seen []tea.Msg
	queue := []tea.Cmd{cmd}
	for steps := 0; len(queue) > 0 && steps < 100; steps++ {
		c := queue[0]
		queue = queue[1:]
		msg := settle(c)
		if msg == nil {
			continue
		}
		if b, ok := msg.(tea.BatchMsg); ok {
			queue = append(queue, b...)
			continue
		}
		seen = append(seen, msg)
		m, next := a.Update(msg)
		a = m.(App)
		queue = append(queue, next)
	}
	return a, seen
}

// settle runs a command and returns its message, or nil for a command that
// waits on something only time or the test could bring: a tick, a cursor
// blink, a broker told to hang, a connection that never changes. It tells
// the two apart by what the process is doing, not by the clock: it gives
// up only once no goroutine can run (see idle), so a loaded machine makes
// it slower, never wrong. A command that neither ends nor blocks within
// settleCap is dropped too, which only a busy loop in a command could cause.
func settle(c tea.Cmd) tea.Msg {
	if c == nil {
		return nil
	}
	out := make(chan tea.Msg, 1)
	go func() { out <- c() }()
	giveUp := time.Now().Add(settleCap)
	for {
		select {
		case m := <-out:
			return m
		case <-time.After(time.Millisecond):
		}
		if idle() || time.Now().After(giveUp) {
			select {
			case m := <-out:
				return m
			default:
				return nil
			}
		}
	}
}

const settleCap = 10 * time.Second

// waiting are the goroutine states of a goroutine that cannot move on by
// itself.
var waiting = map[string]bool{
	"chan receive": true, "chan send": true, "select": true, "sleep": true,
	"chan receive (nil chan)": true, "chan send (nil chan)": true, "select (no cases)": true,
	"sync.Cond.Wait": true, "sync.WaitGroup.Wait": true,
}

// idle reports whether every goroutine but the caller is blocked on a
// channel, a select or a timer: then nothing but time or the test can move
// a command on. A goroutine that is runnable, waits for a lock another
// holds, or waits for a broker's answer can still finish on its own. Model
// tests do not run in parallel, so every goroutine in the dump belongs to
// this test or to the runtime's idle helpers.
func idle() bool {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 {
			continue // the dump starts with the caller, always running
		}
		head, frames, _ := strings.Cut(g, "\n")
		frames, _, _ = strings.Cut(frames, "created by ") // where it started is not where it is
		a, b := strings.IndexByte(head, '['), strings.IndexByte(head, ']')
		if a < 0 || b < a {
			return false
		}
		state, _, _ := strings.Cut(head[a+1:b], ",")
		switch {
		case onTheWire(frames):
			return false
		case waiting[state]:
		case state == "syscall" && strings.HasPrefix(frames, "os/signal.signal_recv"):
			// the signal watcher a program started waits for a signal
		case state == "IO wait" && connectionReader(frames):
		default:
			return false
		}
	}
	return true
}

// onTheWire reports whether a goroutine waits for a broker's answer to a
// request (the broker-backed tests' real I/O): it blocks in a select, but
// the answer will come by itself.
func onTheWire(frames string) bool {
	for _, f := range []string{
		"net/http.(*persistConn).roundTrip", "net/http.(*Transport).getConn", "net/http.(*Transport).dialConn",
		"amqp091-go.(*Channel).call", "amqp091-go.(*Connection).call", "amqp091-go.DialConfig",
	} {
		if strings.Contains(frames, f) {
			return true
		}
	}
	return false
}

// connectionReader reports whether a goroutine waits on the network for
// as long as a connection or listener lives, request or not: an HTTP
// keep-alive connection's reader, AMQP's, and a test server's accept loop
// and idle connections. A request in flight shows in its caller (see
// onTheWire).
func connectionReader(frames string) bool {
	for _, f := range []string{
		"net/http.(*persistConn).readLoop", "amqp091-go.(*Connection).reader",
		"net.(*TCPListener).Accept", "net/http.(*conn).serve", "net/http.(*connReader).backgroundRead",
	} {
		if strings.Contains(frames, f) {
			return true
		}
	}
	return false
}

// keys turns "j", "enter", "esc", "tab" or literal text into key presses.
func press(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+u":
		return tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

// keys sends key presses, running their commands.
func keys(t *testing.T, a App, ks ...string) App {
	t.Helper()
	for _, k := range ks {
		a, _ = run(t, a, press(k))
	}
	return a
}

// typeText types literal text, one key press per rune.
func typeText(t *testing.T, a App, s string) App {
	t.Helper()
	for _, r := range s {
		a = update(t, a, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return a
}

// isOpen reports whether the dialog open is a T.
func isOpen[T dialog](a App) bool {
	_, ok := a.dialog.(T)
	return ok
}

// dialogOf is the open dialog, which must be a T.
func dialogOf[T dialog](t *testing.T, a App) T {
	t.Helper()
	d, ok := a.dialog.(T)
	if !ok {
		t.Fatalf("the dialog open is %T, not %T", a.dialog, d)
	}
	return d
}

// runCommand runs a command line and the commands it returns.
func runCommand(t *testing.T, a App, line string) App {
	t.Helper()
	a, cmd := a.runCommand(line)
	if cmd == nil {
		return a
	}
	a, _ = run(t, a, settle(cmd))
	return a
}
