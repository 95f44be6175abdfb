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

// The console's snapshot holds only what it shows: the ladders' objects
// on the list, the open ladder's with a ladder open. An operation on any
// other queue (peek, replay or purge of a queue named on the command
// line, a purge of a ladder not on screen, a replay's destination) reads
// those queues by name when it is asked for, in a command, rather than
// the whole vhost on every refresh.

// lookupTimeout bounds reading queues by name.
const lookupTimeout = 15 * time.Second

// lookupQueues reads queues by name off the UI goroutine; answer words
// the result as the message its asker expects.
func lookupQueues(insp broker.Inspector, vhost string, names []string, answer func(qs []topology.Queue, err error) tea.Msg) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
		defer cancel()
		return answer(ops.LookupQueues(ctx, insp, vhost, names))
	}
}

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
	names  []string
	want   queueWant
	n      int              // how many to peek
	ladder *topology.Ladder // the ladder to purge
}

// queueLookedUpMsg answers a lookup the App asked for: the queues the
// vhost has of those names, or why they could not be read.
type queueLookedUpMsg struct {
	queueLookup
	qs  []topology.Queue
	err error
}

// withQueue does what want asks of the named queue: at once when the
// snapshot holds it, else once it has been read by name.
func (a App) withQueue(name string, want queueWant, n int) (App, tea.Cmd) {
	if q, ok := a.merged().Queue(name); ok {
		return a.onQueue(q, want, n)
	}
	return a.lookUp(queueLookup{names: []string{name}, want: want, n: n})
}

// purgeLadder plans a purge of a ladder from the snapshot when the
// observer reads it, else once its queues have been read by name: with
// another ladder open, the snapshot holds that one's alone.
func (a App) purgeLadder(l topology.Ladder) (App, tea.Cmd) {
	if a.watchesAll() || a.screen == screenLadder && ops.SameLadder(a.ladder.Found().Ladder, l) {
		return a.openPurge(ops.PurgeRequest{Ladder: l})
	}
	req := ops.PurgeRequest{Ladder: l}
	return a.lookUp(queueLookup{names: req.Queues(), want: wantPurgeLadder, ladder: &l})
}

// lookUp reads the queues the lookup names, saying so meanwhile.
func (a App) lookUp(lu queueLookup) (App, tea.Cmd) {
	a.busy = "looking up queue " + lu.names[0]
	if lu.ladder != nil {
		a.busy = "reading the queues of ladder " + lu.ladder.Name
	}
	return a, lookupQueues(a.insp, a.vhost, lu.names, func(qs []topology.Queue, err error) tea.Msg {
		return queueLookedUpMsg{queueLookup: lu, qs: qs, err: err}
	})
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
	case msg.want == wantPurgeLadder:
		return a.openPurgeIn(ops.WithQueues(a.merged(), msg.qs...), ops.PurgeRequest{Ladder: *msg.ladder})
	case len(msg.qs) == 0 && msg.want == wantPurge:
		return a.fail(fmt.Sprintf("no queue or ladder %q in vhost %s", msg.names[0], a.vhost))
	case len(msg.qs) == 0:
		return a.fail((&ops.NoQueueError{Queue: msg.names[0], Vhost: a.vhost}).Error())
	}
	return a.onQueue(msg.qs[0], msg.want, msg.n)
}

func (a App) onQueue(q topology.Queue, want queueWant, n int) (App, tea.Cmd) {
	switch want {
	case wantPeek:
		return a.peekQueue(q, n)
	case wantReplay:
		return a.replayQueue(q)
	case wantPurge:
		return a.openPurgeIn(ops.WithQueues(a.merged(), q), ops.PurgeRequest{Queue: q.Name})
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
// snapshot does not hold.
func (a App) destLookup() func(name string) tea.Cmd {
	insp, vhost := a.insp, a.vhost
	return func(name string) tea.Cmd {
		return lookupQueues(insp, vhost, []string{name}, func(qs []topology.Queue, err error) tea.Msg {
			m := destLookedUpMsg{name: name, err: err, found: len(qs) > 0}
			if m.found {
				m.q = qs[0]
			}
			return m
		})
	}
}
