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

// poll arms the next tick of the current loop.
func (a App) poll() tea.Cmd {
	gen := a.pollGen
	return tea.Tick(a.interval, func(time.Time) tea.Msg { return pollMsg{gen} })
}

// fetch builds the command for a refresh. It captures everything it needs
// up front: the closure runs off the UI goroutine and must not touch the model.
func fetch(insp broker.Inspector, read ops.Read, seq int, timeout time.Duration, now func() time.Time) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		return readMsg{seq: seq, r: read.Do(ctx, insp, now)}
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

// startFetch records a new request for read and returns its command.
func (a *App) startFetch(read ops.Read) tea.Cmd {
	a.seq++
	a.pending = &request{read: read, seq: a.seq, started: a.now()}
	return fetch(a.insp, read, a.seq, a.timeout, a.now)
}

// nextFetch starts the refresh the observer calls for, unless one is in flight.
func (a *App) nextFetch() tea.Cmd {
	if a.pending != nil {
		return nil
	}
	return a.startFetch(a.obs.Next())
}

// updateRefresh handles the refresh loop's messages.
func (a App) updateRefresh(msg tea.Msg) (App, tea.Cmd) {
	switch msg := msg.(type) {
	case pollMsg:
		if msg.gen != a.pollGen {
			return a, nil // an older loop; let it die
		}
		if p := a.pending; p != nil && a.now().Sub(p.started) > 2*a.timeout {
			// Twice its timeout and still no answer, not even the
			// context's error: the client ignores its context. Give up
			// on the request, say so, and let the next one start.
			a.pending = nil
			if p.read.Snapshot {
				a.obs = a.obs.Resnap()
			}
			a.fetchErr = &fetchFailure{op: p.read.Op(), err: fmt.Errorf("no answer after %s", topology.FormatAge(a.now().Sub(p.started))), at: a.now()}
		}
		return a, tea.Batch(a.poll(), a.nextFetch(), a.ensureClock())
	case readMsg:
		if !a.current(msg.seq) {
			return a, nil
		}
		a.pending = nil
		obs, again := a.obs.Observe(msg.r)
		a.obs = obs
		if err := msg.r.Err; err != nil {
			a.fetchErr = &fetchFailure{op: msg.r.Read.Op(), err: err, at: msg.r.At}
			return a, a.ensureClock()
		}
		a.fetchErr = nil
		first := !a.loaded
		a.loaded, a.refreshed = obs.Loaded(), obs.At()
		a.rebuild()
		if first && a.loaded {
			a.openInitial()
		}
		if again {
			// A queue came or went: the structure changed, so discovery
			// and drift must be recomputed from a full snapshot now.
			return a, a.startFetch(a.obs.Resnap().Next())
		}
		return a, nil
	case overviewMsg:
		a.overview = msg.ov
		a.obs = a.obs.WithIntervals(a.interval, msg.ov.StatsInterval)
		if a.followBroker && msg.ov.StatsInterval > 0 && msg.ov.StatsInterval != a.interval {
			// Refreshing faster than the broker updates its statistics
			// shows the same numbers twice; follow its interval.
			a.interval = msg.ov.StatsInterval
			a.obs = a.obs.WithIntervals(a.interval, msg.ov.StatsInterval)
			a.pollGen++
			return a, a.poll()
		}
		return a, nil
	}
	return a, nil
}

// newObserver watches the vhost in use, every ladder in it, for the
// ladder list: it reads the objects any ladder may own, never the whole
// vhost, so that a refresh costs what the ladders hold beside however many
// other queues. An operation on another queue reads it by name (see
// lookup.go).
func (a App) newObserver() ops.Observer {
	return ops.NewObserver(a.scope()).WithIntervals(a.interval, 0)
}

// scope is what the screen in front shows: the ladder open (and a peek
// from it), else every ladder of the vhost, for the list.
func (a App) scope() ops.Scope {
	if a.screen == screenLadder || a.screen == screenScheduled || a.screen == screenPeek && a.peek.Back() == screenLadder {
		return ops.ScopeOf(a.vhost, a.ladder.Found().Ladder)
	}
	return ops.Scope{Vhost: a.vhost}
}

// followScreen points the observer at what the screen now shows and reads
// it at once: opening a ladder narrows the refreshes to its objects,
// leaving it widens them to every ladder's again. The request in flight,
// if any, was for the old scope; its answer is dropped.
func (a *App) followScreen() tea.Cmd {
	s := a.scope()
	if !a.loaded || a.obs.Scope().Same(s) {
		return nil
	}
	a.obs = a.obs.WithScope(s)
	a.pending = nil
	return a.startFetch(a.obs.Next())
}

// watchesAll reports whether the observer watches every ladder of the
// vhost, as the list shows them.
func (a App) watchesAll() bool { return len(a.obs.Scope().Ladders) == 0 }

// current reports whether an answer belongs to the request in flight.
func (a App) current(seq int) bool { return a.pending != nil && a.pending.seq == seq }

// fetchFailure is the last refresh error, kept until a refresh succeeds.
type fetchFailure struct {
	op  string
	err error
	at  time.Time
}

// refreshNow restarts the loop with a full snapshot (the `r` key).
func (a *App) refreshNow() tea.Cmd {
	a.pollGen++
	a.obs = a.obs.Resnap()
	return tea.Batch(a.nextFetch(), a.poll())
}

// setInterval changes the refresh interval and restarts the loop.
func (a *App) setInterval(d time.Duration) tea.Cmd {
	a.interval = d
	a.obs = a.obs.WithIntervals(d, a.overview.StatsInterval)
	a.followBroker = false
	a.pollGen++
	return a.poll()
}

// merged is the last snapshot with the freshest statistics laid over it.
func (a App) merged() topology.Snapshot { return a.obs.Snapshot() }
