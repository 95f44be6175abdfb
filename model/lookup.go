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
// line, a replay's destination) reads that queue by name when it is
// asked for, in a command, rather than the whole vhost on every refresh.

// lookupTimeout bounds reading one queue by name.
const lookupTimeout = 15 * time.Second

// lookupQueue reads one queue by name off the UI goroutine; answer words
// the result as the message its asker expects.
func lookupQueue(insp broker.Inspector, vhost, name string, answer func(q topology.Queue, found bool, err error) tea.Msg) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
		defer cancel()
		return answer(ops.LookupQueue(ctx, insp, vhost, name))
	}
}

// queueWant says what a queue looked up by name is for.
type queueWant int

const (
	wantPeek queueWant = iota
	wantReplay
	wantPurge
)

// queueLookedUpMsg answers a lookup the App asked for: the queue, or that
// the vhost has none of that name, or why it could not be read.
type queueLookedUpMsg struct {
	name  string
	want  queueWant
	n     int // how many to peek
	q     topology.Queue
	found bool
	err   error
}

// withQueue does what want asks of the named queue: at once when the
// snapshot holds it, else once it has been read by name.
func (a App) withQueue(name string, want queueWant, n int) (App, tea.Cmd) {
	if q, ok := a.merged().Queue(name); ok {
		return a.onQueue(q, want, n)
	}
	a.busy = "looking up queue " + name
	return a, lookupQueue(a.insp, a.vhost, name, func(q topology.Queue, found bool, err error) tea.Msg {
		return queueLookedUpMsg{name: name, want: want, n: n, q: q, found: found, err: err}
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
	case !msg.found && msg.want == wantPurge:
		return a.fail(fmt.Sprintf("no queue or ladder %q in vhost %s", msg.name, a.vhost))
	case !msg.found:
		return a.fail((&ops.NoQueueError{Queue: msg.name, Vhost: a.vhost}).Error())
	}
	return a.onQueue(msg.q, msg.want, msg.n)
}

func (a App) onQueue(q topology.Queue, want queueWant, n int) (App, tea.Cmd) {
	switch want {
	case wantPeek:
		return a.peekQueue(q, n)
	case wantReplay:
		return a.replayQueue(q)
	case wantPurge:
		return a.openPurgeIn(ops.WithQueue(a.merged(), q), ops.PurgeRequest{Queue: q.Name})
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
		return lookupQueue(insp, vhost, name, func(q topology.Queue, found bool, err error) tea.Msg {
			return destLookedUpMsg{name: name, q: q, found: found, err: err}
		})
	}
}
