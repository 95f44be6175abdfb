package model

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// The console refreshes through one ops.Observer, the exporter's and the
// one-shot commands': it decides between a snapshot and statistics and
// keeps the history the stuck and stalled rules need. The App only runs
// the loop: one request in flight, ticks, timeouts and errors.

// defaultTimeout bounds one management request. A request that takes
// longer is abandoned, shown as a failure, and retried on the next poll.
const defaultTimeout = 15 * time.Second

// request is the refresh in flight. There is at most one, so a slow broker
// is never sent a pile of requests, and seq tells its answer from the
// answer to an abandoned one.
type request struct {
	read    ops.Read
	seq     int
	started time.Time
	// why marks a read of the unroutable queues' keys (readWhy), not
	// read, at the queues' depths.
	why    bool
	depths string
}

// whyOp is the operation a failed read of the unroutable queues' keys
// names.
const whyOp = "read the keys of unroutable messages"

// op names the request's operation, for a failure.
func (r request) op() string {
	if r.why {
		return whyOp
	}
	return r.read.Op()
}

// pollMsg is one tick of the refresh loop. gen identifies the loop: each
// restart (r, :refresh 10s) bumps the generation, so ticks of the old loop
// die instead of doubling the refresh rate.
type pollMsg struct{ gen int }

// readMsg carries what a refresh read, or its error.
type readMsg struct {
	seq int
	r   ops.Reading
}

// overviewMsg describes the broker, for the header and the refresh rate.
type overviewMsg struct{ ov broker.Overview }

// fetch builds the command for a refresh. It captures everything it needs
// up front: the closure runs off the UI goroutine and must not touch the model.
func fetch(insp broker.Inspector, read ops.Read, seq int, timeout time.Duration, now func() time.Time) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return readMsg{seq: seq, r: read.Do(ctx, insp, now)}
	}
}

// keyReader is what reading the keys of the unroutable queues' messages
// takes (ops.ReadUnrouted): the AMQP connection's peeker (nil: none, or
// not connected), the management client's peek facts and the release.
type keyReader struct {
	peeker  ops.KeyPeeker
	facts   ops.PeekFacter
	version topology.Version
}

// unroutedMsg carries the observer ReadUnrouted returned, and the first
// peek that failed.
type unroutedMsg struct {
	seq int
	obs ops.Observer
	err error
	at  time.Time
}

// firstFailure passes peeks on and keeps the first error: ReadUnrouted
// leaves a queue it could not read unread, silently, and the console
// shows such a read as a refresh failure.
type firstFailure struct {
	p   ops.KeyPeeker
	err error
}

func (f *firstFailure) Peek(ctx context.Context, queue string, n int) (broker.PeekResult, error) {
	res, err := f.p.Peek(ctx, queue, n)
	if err != nil && f.err == nil {
		f.err = err
	}
	return res, err
}

// fetchUnrouted builds the command that reads the keys at the heads of
// o's unroutable queues, off the UI goroutine; o is the loop's observer as
// the command was built, which it does not touch.
func fetchUnrouted(o ops.Observer, kr keyReader, seq int, timeout time.Duration, now func() time.Time) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		p := &firstFailure{p: kr.peeker}
		read := ops.ReadUnrouted(ctx, o, kr.facts, p, kr.version)
		return unroutedMsg{seq: seq, obs: read, err: p.err, at: now()}
	}
}

// fetchOverview reads the broker's overview once; a failure only means the
// header goes without a version.
func fetchOverview(insp broker.Inspector, timeout time.Duration) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		ov, err := insp.Overview(ctx)
		if err != nil {
			return nil
		}
		return overviewMsg{ov}
	}
}

// refreshLoop is the refresh loop: the observer, the one request in
// flight, the ticks of the current loop and the last error.
type refreshLoop struct {
	insp broker.Inspector
	now  func() time.Time
	obs  ops.Observer
	// interval is the refresh interval; followBroker while it follows the
	// broker's statistics interval rather than one asked for.
	interval     time.Duration
	followBroker bool
	timeout      time.Duration
	// gen is the loop's generation (see pollMsg), seq numbers requests.
	gen     int
	seq     int
	pending *request
	err     *fetchFailure
	// whyTried is the unroutable queues' depths at the last read of their
	// keys answered: a read that named nothing more (the gate kept a queue
	// closed, keys of no destination) is not repeated until they change.
	whyTried string
}

// poll arms the next tick of the current loop.
func (l refreshLoop) poll() tea.Cmd {
	gen := l.gen
	return tea.Tick(l.interval, func(time.Time) tea.Msg { return pollMsg{gen} })
}

// start records a new request for read and returns its command.
func (l *refreshLoop) start(read ops.Read) tea.Cmd {
	l.seq++
	l.pending = &request{read: read, seq: l.seq, started: l.now()}
	return fetch(l.insp, read, l.seq, l.timeout, l.now)
}

// next starts the refresh the observer calls for, unless one is in flight.
func (l *refreshLoop) next() tea.Cmd {
	if l.pending != nil {
		return nil
	}
	return l.start(l.obs.Next())
}

// tick is one tick of the loop: a request that ignores its context is
// given up on, and the next refresh starts.
func (l *refreshLoop) tick() tea.Cmd {
	if p := l.pending; p != nil && l.now().Sub(p.started) > 2*l.timeout {
		// Twice its timeout and still no answer, not even the context's
		// error: the client ignores its context. Give up on the request,
		// say so, and let the next one start.
		l.pending = nil
		if p.read.Snapshot {
			l.obs = l.obs.Resnap()
		}
		l.err = &fetchFailure{op: p.op(), err: fmt.Errorf("no answer after %s", topology.FormatAge(l.now().Sub(p.started))), at: l.now()}
	}
	return tea.Batch(l.poll(), l.next())
}

// current reports whether an answer belongs to the request in flight.
func (l refreshLoop) current(seq int) bool { return l.pending != nil && l.pending.seq == seq }

// observe takes the reading that answers the request in flight; again
// when the structure changed and a full snapshot must follow at once.
func (l *refreshLoop) observe(m readMsg) (again bool, err error) {
	l.pending = nil
	l.obs, again = l.obs.Observe(m.r)
	if err := m.r.Err; err != nil {
		l.err = &fetchFailure{op: m.r.Read.Op(), err: err, at: m.r.At}
		return false, err
	}
	l.err = nil
	return again, nil
}

// readWhy starts reading the keys of the messages in the ladders'
// unroutable queues, when the last reading left some unread
// (ops.Observer.UnroutedUnread) and kr has a peeker: status names a lost
// target from them, and so does the console. It is the request in flight,
// so that no reading is observed while it runs; nil when there is nothing
// to read.
func (l *refreshLoop) readWhy(kr keyReader) tea.Cmd {
	if l.pending != nil || kr.peeker == nil || !l.obs.UnroutedUnread() {
		return nil
	}
	depths := l.obs.UnroutedDepths()
	if depths == l.whyTried {
		return nil
	}
	l.seq++
	l.pending = &request{seq: l.seq, started: l.now(), why: true, depths: depths}
	return fetchUnrouted(l.obs, kr, l.seq, l.timeout, l.now)
}

// tookWhy takes what a read of the unroutable queues' keys answered onto
// the observer; a failed peek is a refresh failure, and the next reading
// tries again.
func (l *refreshLoop) tookWhy(m unroutedMsg) error {
	depths := l.pending.depths
	l.pending = nil
	l.obs = l.obs.WithUnrouted(m.obs.Unrouted())
	if m.err != nil {
		l.err = &fetchFailure{op: whyOp, err: m.err, at: m.at}
		return m.err
	}
	l.whyTried = depths
	return nil
}

// follow points the observer at scope s and reads it at once; the request
// in flight, for the old scope, is dropped.
func (l *refreshLoop) follow(s ops.Scope) tea.Cmd {
	if l.obs.Scope().Same(s) {
		return nil
	}
	l.obs = l.obs.WithScope(s)
	l.pending = nil
	return l.start(l.obs.Next())
}

// brokerInterval follows the broker's statistics interval, unless an
// interval was asked for: refreshing faster than the broker updates its
// statistics shows the same numbers twice.
func (l *refreshLoop) brokerInterval(stats time.Duration) tea.Cmd {
	l.obs = l.obs.WithIntervals(l.interval, stats)
	if !l.followBroker || stats <= 0 || stats == l.interval {
		return nil
	}
	l.interval = stats
	l.obs = l.obs.WithIntervals(l.interval, stats)
	l.gen++
	return l.poll()
}

// now restarts the loop with a full snapshot (the `r` key).
func (l *refreshLoop) restart() tea.Cmd {
	l.gen++
	l.obs = l.obs.Resnap()
	l.whyTried = ""
	return tea.Batch(l.next(), l.poll())
}

// setInterval changes the refresh interval, against the broker's
// statistics interval stats, and restarts the loop.
func (l *refreshLoop) setInterval(d, stats time.Duration) tea.Cmd {
	l.interval = d
	l.obs = l.obs.WithIntervals(d, stats)
	l.followBroker = false
	l.gen++
	return l.poll()
}

// watchesAll reports whether the observer watches every ladder of the
// vhost, as the list shows them.
func (l refreshLoop) watchesAll() bool { return len(l.obs.Scope().Ladders) == 0 }

// slow reports whether the request in flight has taken longer than a
// refresh interval.
func (l refreshLoop) slow(now time.Time) bool {
	return l.pending != nil && now.Sub(l.pending.started) > l.interval
}

// updateRefresh handles the refresh loop's messages.
func (a App) updateRefresh(msg tea.Msg) (App, tea.Cmd) {
	switch msg := msg.(type) {
	case pollMsg:
		if msg.gen != a.loop.gen {
			return a, nil // an older loop; let it die
		}
		tick := a.loop.tick()
		clock := a.amqp.ensureClock(a.loop.slow(a.now()))
		return a, tea.Batch(tick, clock)
	case readMsg:
		if !a.loop.current(msg.seq) {
			return a, nil
		}
		again, err := a.loop.observe(msg)
		if err != nil {
			cmd := a.amqp.ensureClock(a.loop.slow(a.now()))
			return a, cmd
		}
		first := !a.loaded
		a.loaded, a.refreshed = a.loop.obs.Loaded(), a.loop.obs.At()
		a.rebuild()
		if first && a.loaded {
			a.openInitial()
		}
		if again {
			// A queue came or went: the structure changed, so discovery
			// and drift must be recomputed from a full snapshot now.
			cmd := a.loop.start(a.loop.obs.Resnap().Next())
			return a, cmd
		}
		if !a.loop.obs.Scope().Same(a.scope()) {
			return a, nil // the screen moved on: its own reading comes first
		}
		kr := keyReader{peeker: a.peeker, facts: a.limits}
		kr.version, _ = topology.ParseVersion(a.overview.RabbitMQVersion)
		if a.peeker == nil || a.amqp.conn != nil && a.amqp.state.Status != broker.Connected {
			kr.peeker = nil // no AMQP to read with: the queue says what it always said
		}
		return a, a.loop.readWhy(kr)
	case unroutedMsg:
		if !a.loop.current(msg.seq) {
			return a, nil
		}
		err := a.loop.tookWhy(msg)
		a.rebuild()
		if err != nil {
			return a, a.amqp.ensureClock(a.loop.slow(a.now()))
		}
		return a, nil
	case overviewMsg:
		a.overview = msg.ov
		cmd := a.loop.brokerInterval(msg.ov.StatsInterval)
		return a, cmd
	}
	return a, nil
}

// newObserver watches the vhost in use, every ladder in it, for the
// ladder list: it reads the objects any ladder may own, never the whole
// vhost, so that a refresh costs what the ladders hold beside however many
// other queues. An operation on another queue reads it by name (see
// lookup.go).
func newObserver(vhost string, reach ops.Reach, interval time.Duration) ops.Observer {
	return ops.NewObserver(ops.Scope{Vhost: vhost, Reach: reach}).WithIntervals(interval, 0)
}

// scope is what the screen in front shows: the ladder open (and a peek
// from it), else every ladder of the vhost, for the list.
func (a App) scope() ops.Scope {
	if a.screen == screenLadder || a.screen == screenScheduled || a.screen == screenPeek && a.peek.Back() == screenLadder {
		s := ops.ScopeOf(a.vhost, a.ladder.Found().Ladder)
		s.Reach = a.reach
		return s
	}
	return ops.Scope{Vhost: a.vhost, Reach: a.reach}
}

// followScreen points the observer at what the screen now shows and reads
// it at once: opening a ladder narrows the refreshes to its objects,
// leaving it widens them to every ladder's again.
func (a *App) followScreen() tea.Cmd {
	if !a.loaded {
		return nil
	}
	return a.loop.follow(a.scope())
}

// fetchFailure is the last refresh error, kept until a refresh succeeds.
type fetchFailure struct {
	op  string
	err error
	at  time.Time
}

// merged is the last snapshot with the freshest statistics laid over it.
func (a App) merged() topology.Snapshot { return a.loop.obs.Snapshot() }
