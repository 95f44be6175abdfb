package model

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// snapshotEvery is how many polls pass between full snapshots. Stats (one
// request) keep depths live; bindings change rarely, and a change of the
// queue set triggers a snapshot at once anyway.
const snapshotEvery = 6

// defaultTimeout bounds one management request. A request that takes
// longer is abandoned, shown as a failure, and retried on the next poll.
const defaultTimeout = 15 * time.Second

// fetchKind is what a refresh asks the management API for.
type fetchKind int

const (
	fetchStats    fetchKind = iota // one request: queues with statistics
	fetchSnapshot                  // structure and statistics
)

// String names the request in error messages.
func (k fetchKind) String() string {
	if k == fetchSnapshot {
		return "snapshot"
	}
	return "stats"
}

// request is the refresh in flight. There is at most one, so a slow broker
// is never sent a pile of requests, and seq tells its answer from the
// answer to an abandoned one.
type request struct {
	kind    fetchKind
	seq     int
	started time.Time
}

// pollMsg is one tick of the refresh loop. gen identifies the loop: each
// restart (r, :refresh 10s) bumps the generation, so ticks of the old loop
// die instead of doubling the refresh rate.
type pollMsg struct{ gen int }

// snapshotMsg carries a full snapshot of the vhost.
type snapshotMsg struct {
	seq  int
	snap topology.Snapshot
	at   time.Time
}

// statsMsg carries the vhost's queues with fresh statistics.
type statsMsg struct {
	seq    int
	queues []topology.Queue
	at     time.Time
}

// fetchErrMsg reports a failed refresh.
type fetchErrMsg struct {
	seq int
	op  string
	err error
	at  time.Time
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
func fetch(insp broker.Inspector, vhost string, kind fetchKind, seq int, timeout time.Duration, now func() time.Time) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if kind == fetchSnapshot {
			snap, err := insp.Snapshot(ctx, vhost)
			if err != nil {
				return fetchErrMsg{seq: seq, op: "read vhost " + vhost, err: err, at: now()}
			}
			return snapshotMsg{seq: seq, snap: snap, at: now()}
		}
		qs, err := insp.Stats(ctx, vhost)
		if err != nil {
			return fetchErrMsg{seq: seq, op: "read queue statistics", err: err, at: now()}
		}
		return statsMsg{seq: seq, queues: qs, at: now()}
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

// startFetch records a new request and returns its command.
func (a *App) startFetch(kind fetchKind) tea.Cmd {
	a.seq++
	a.pending = &request{kind: kind, seq: a.seq, started: a.now()}
	if kind == fetchSnapshot {
		a.snapDue = false
	}
	return fetch(a.insp, a.vhost, kind, a.seq, a.timeout, a.now)
}

// nextFetch starts the refresh this moment calls for, unless one is in flight.
func (a *App) nextFetch() tea.Cmd {
	if a.pending != nil {
		return nil
	}
	if a.snapDue || !a.loaded || a.ticks%snapshotEvery == 0 {
		return a.startFetch(fetchSnapshot)
	}
	return a.startFetch(fetchStats)
}

// updateRefresh handles the refresh loop's messages.
func (a App) updateRefresh(msg tea.Msg) (App, tea.Cmd) {
	switch msg := msg.(type) {
	case pollMsg:
		if msg.gen != a.pollGen {
			return a, nil // an older loop; let it die
		}
		a.ticks++
		if p := a.pending; p != nil && a.now().Sub(p.started) > 2*a.timeout {
			// Twice its timeout and still no answer, not even the
			// context's error: the client ignores its context. Give up
			// on the request, say so, and let the next one start.
			a.pending = nil
			a.snapDue = a.snapDue || p.kind == fetchSnapshot
			a.fetchErr = &fetchFailure{op: "read " + p.kind.String(), err: fmt.Errorf("no answer after %s", topology.FormatAge(a.now().Sub(p.started))), at: a.now()}
		}
		return a, tea.Batch(a.poll(), a.nextFetch(), a.ensureClock())
	case snapshotMsg:
		if !a.current(msg.seq) {
			return a, nil
		}
		a.pending, a.fetchErr = nil, nil
		a.snap = msg.snap
		a.found = topology.Discover(msg.snap)
		a.live = topology.StatsByName(msg.snap.Queues)
		a.moves = a.moves.Observe(msg.snap.Queues, msg.at)
		a.waits = a.waits.Observe(msg.snap.Queues, msg.at)
		a.refreshed = msg.at
		first := !a.loaded
		a.loaded = true
		a.rebuild()
		if first {
			a.openInitial()
		}
		return a, nil
	case statsMsg:
		if !a.current(msg.seq) {
			return a, nil
		}
		a.pending, a.fetchErr = nil, nil
		a.live = topology.StatsByName(msg.queues)
		a.moves = a.moves.Observe(msg.queues, msg.at)
		a.waits = a.waits.Observe(msg.queues, msg.at)
		a.refreshed = msg.at
		a.rebuild()
		if !topology.SameQueueNames(msg.queues, a.snap.Queues) {
			// A queue came or went: the structure changed, so discovery
			// and drift must be recomputed from a full snapshot now.
			return a, a.startFetch(fetchSnapshot)
		}
		return a, nil
	case fetchErrMsg:
		if !a.current(msg.seq) {
			return a, nil
		}
		if a.pending != nil && a.pending.kind == fetchSnapshot {
			a.snapDue = true
		}
		a.pending = nil
		a.fetchErr = &fetchFailure{op: msg.op, err: msg.err, at: msg.at}
		return a, a.ensureClock()
	case overviewMsg:
		a.overview = msg.ov
		if a.followBroker && msg.ov.StatsInterval > 0 && msg.ov.StatsInterval != a.interval {
			// Refreshing faster than the broker updates its statistics
			// shows the same numbers twice; follow its interval.
			a.interval = msg.ov.StatsInterval
			a.pollGen++
			return a, a.poll()
		}
		return a, nil
	}
	return a, nil
}

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
	a.snapDue = true
	return tea.Batch(a.nextFetch(), a.poll())
}

// setInterval changes the refresh interval and restarts the loop.
func (a *App) setInterval(d time.Duration) tea.Cmd {
	a.interval = d
	a.followBroker = false
	a.pollGen++
	return a.poll()
}

// merged is the last snapshot with the freshest statistics laid over it.
func (a App) merged() topology.Snapshot { return a.snap.WithStats(a.live) }
