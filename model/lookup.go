package model

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// The console's snapshot holds only what it shows: the ladders' objects
// on the list, the open ladder's with a ladder open. An operation on what
// it holds plans from it at once: a queue in the snapshot, a ladder the
// observer's scope watches (ops.Scope.Watches). Any other (a peek, replay
// or purge of a queue named on the command line, a purge of a ladder not
// on screen) reads what the CLI's same operation reads, through the same
// ops.Read* functions, in a command, rather than the whole vhost on every
// refresh.

// lookupTimeout bounds reading queues by name.
const lookupTimeout = 15 * time.Second

// queueWant says what queues looked up by name are for.
type queueWant int

const (
	wantPeek queueWant = iota
	wantReplay
	wantPurge
	wantPurgeLadder
)

// queueLookup is what the App asks to read, and why.
type queueLookup struct {
	name   string           // the queue
	want   queueWant        // what for
	n      int              // how many to peek
	ladder *topology.Ladder // the ladder to purge, or to replay into
}

// queueLookedUpMsg answers a lookup the App asked for with what ops read
// for it, or why it could not.
type queueLookedUpMsg struct {
	queueLookup
	peek  ops.PeekRequest   // wantPeek: ops.ReadPeek's request
	view  *ops.BrokerView   // wantReplay: ops.ReadReplay's view
	snap  topology.Snapshot // wantPurge and wantPurgeLadder: ops.ReadPurge's
	found []topology.Found
	err   error
}

// readFor reads, off the UI goroutine, what the CLI's same operation
// reads.
func readFor(insp ops.ScopedInspector, pf ops.PeekFacter, vhost string, lu queueLookup) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
		defer cancel()
		m := queueLookedUpMsg{queueLookup: lu}
		switch lu.want {
		case wantPeek:
			m.peek, m.err = ops.ReadPeek(ctx, insp, pf, vhost, lu.name)
		case wantReplay:
			into := ""
			if lu.ladder != nil {
				into = lu.ladder.Name
			}
			m.view, m.err = ops.ReadReplay(ctx, insp, vhost, ops.ReplayRequest{Source: lu.name}, into)
		case wantPurge:
			m.snap, m.found, m.err = ops.ReadPurge(ctx, insp, vhost, lu.name, "")
		case wantPurgeLadder:
			m.snap, m.found, m.err = ops.ReadPurge(ctx, insp, vhost, "", lu.ladder.Name)
		}
		return m
	}
}

// withQueue does what want asks of the named queue: at once when the
// snapshot holds it, else once ops has read it.
func (a App) withQueue(name string, want queueWant, n int) (App, tea.Cmd) {
	if q, ok := a.merged().Queue(name); ok {
		return a.onQueue(q, want, n)
	}
	lu := queueLookup{name: name, want: want, n: n}
	if want == wantReplay {
		if f, ok := a.replayLadder(name); ok {
			lu.ladder = &f.Ladder
		}
	}
	return a.lookUp(lu)
}

// purgeLadder plans a purge of a ladder from the snapshot when the
// observer watches it, else once ops has read its objects: with another
// ladder open, the snapshot holds that one's alone.
func (a App) purgeLadder(l topology.Ladder) (App, tea.Cmd) {
	if a.loop.obs.Scope().Watches(l) {
		return a.openPurge(ops.PurgeRequest{Ladder: l})
	}
	return a.lookUp(queueLookup{name: l.Name, want: wantPurgeLadder, ladder: &l})
}

// lookUp reads what the lookup asks for, saying so meanwhile.
func (a App) lookUp(lu queueLookup) (App, tea.Cmd) {
	a.busy = "looking up queue " + lu.name
	if lu.want == wantPurgeLadder {
		a.busy = "reading the queues of ladder " + lu.name
	}
	return a, readFor(a.insp, a.limits, a.vhost, lu)
}

// queueLookedUp carries on with what the lookup was for, or says in one
// line why it cannot. An answer that comes while a dialog is open is
// dropped: the operator has moved on.
func (a App) queueLookedUp(msg queueLookedUpMsg) (App, tea.Cmd) {
	a.busy = ""
	switch {
	case a.dialog != nil:
		return a, nil
	case msg.err != nil:
		return a.fail(msg.err.Error())
	case msg.want == wantPeek:
		return a.gatePeek(msg.peek, msg.n)
	case msg.want == wantPurgeLadder:
		return a.openPurgeIn(msg.snap, msg.found, ops.PurgeRequest{Ladder: *msg.ladder})
	case msg.want == wantReplay:
		if q, ok := msg.view.Snap.Queue(msg.name); ok {
			return a.replayQueue(q, msg.view)
		}
	default:
		if q, ok := msg.snap.Queue(msg.name); ok {
			return a.openPurgeIn(ops.WithQueues(a.merged(), q), a.found, ops.PurgeRequest{Queue: q.Name})
		}
		return a.fail(fmt.Sprintf("no queue or ladder %q in vhost %s", msg.name, a.vhost))
	}
	return a.fail((&ops.NoQueueError{Queue: msg.name, Vhost: a.vhost}).Error())
}

func (a App) onQueue(q topology.Queue, want queueWant, n int) (App, tea.Cmd) {
	switch want {
	case wantPeek:
		return a.peekQueue(q, n)
	case wantReplay:
		return a.replayQueue(q, nil)
	case wantPurge:
		return a.openPurgeIn(ops.WithQueues(a.merged(), q), a.found, ops.PurgeRequest{Queue: q.Name})
	}
	return a.fail(fmt.Sprintf("nothing to do with queue %s", q.Name))
}

// destLookedUpMsg answers the replay form's lookup of its destination.
type destLookedUpMsg struct {
	name  string
	q     topology.Queue
	found bool
	err   error
}

// destLookup is the replay form's way to read a destination queue the
// snapshot does not hold: by name, as ops.ReadReplay reads one.
func (a App) destLookup() func(name string) tea.Cmd {
	insp, vhost := a.insp, a.vhost
	return func(name string) tea.Cmd {
		return func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
			defer cancel()
			qs, err := ops.LookupQueues(ctx, insp, vhost, []string{name})
			m := destLookedUpMsg{name: name, err: err, found: len(qs) > 0}
			if m.found {
				m.q = qs[0]
			}
			return m
		}
	}
}
