package ops

import (
	"context"

	"github.com/rungs-dev/rungs/topology"
)

// A destination whose queue was deleted takes its binding with it, so
// rungs' own ladder no longer names it anywhere the management API shows:
// only the routing keys of the messages that then landed in the ladder's
// unroutable queue do. The one-shot commands read them (status, doctor,
// unstall), from the head of the queue and only where reading changes
// nothing on the release (the read-only peek gate: a classic queue, or a
// quorum queue on a release that does not count the peek as a delivery),
// so that health can name the lost destination and count what is held for
// it. Elsewhere the queue says what it always said.

// UnroutedSample is how many messages ReadUnrouted reads of an unroutable
// queue: enough to name the destinations of what one retired endpoint
// left, a bounded cost whatever the queue holds.
const UnroutedSample = 200

// ReadUnrouted reads the destinations named by the routing keys at the
// head of each unroutable queue of the observer's ladders that holds
// messages, and hands them to the observer (Observer.WithUnrouted). v is
// the broker's release (unread: the zero Version, which the gate weighs
// as unknown). A queue the gate keeps closed, or a failed read, is left
// unread.
func ReadUnrouted(ctx context.Context, o Observer, facts PeekFacter, p KeyPeeker, v topology.Version) Observer {
	vhost := o.Snapshot().Vhost
	ladders := Ladders(o.Found())
	read := map[string]map[string]int64{}
	for _, h := range heldUnroutable(o) {
		q := h.queue
		req := PeekRequest{Queue: q, Ladders: ladders, ReadOnly: true, Version: v}
		f := ReadPeekFacts(ctx, facts, vhost, q, v)
		req.Version, req.Limit, req.LimitKnown, req.DelayedRetries = f.Version, f.Limit, f.LimitKnown, f.DelayedRetries
		if GatePeek(req).Verdict != PeekOK {
			continue
		}
		res, err := p.Peek(ctx, q.Name, min(UnroutedSample, int(q.Stats.Ready)))
		if err != nil {
			continue
		}
		dests := map[string]int64{}
		for _, m := range res.Messages {
			if _, dest, err := h.ladder.Decode(m.RoutingKey); err == nil && dest != "" {
				dests[dest]++
			}
		}
		read[q.Name] = dests
	}
	if len(read) == 0 {
		return o
	}
	return o.WithUnrouted(read)
}

// heldQueue is an unroutable queue holding messages, and its ladder.
type heldQueue struct {
	ladder topology.Ladder
	queue  topology.Queue
}

// heldUnroutable are the unroutable queues of the observer's ladders that
// hold ready messages: the only ones whose destinations a read can name.
func heldUnroutable(o Observer) []heldQueue {
	snap := o.Snapshot()
	var out []heldQueue
	for _, f := range o.Found() {
		for _, t := range f.Ladder.Terminals() {
			if q, ok := snap.Queue(t.Queue); ok && t.Role == topology.RoleUnroutable && q.Stats.Ready > 0 {
				out = append(out, heldQueue{f.Ladder, q})
			}
		}
	}
	return out
}

// HoldsUnrouted reports whether an unroutable queue of the observer's
// ladders holds messages: only then has ReadUnrouted anything to read,
// and a one-shot command a reason to open AMQP for it.
func (o Observer) HoldsUnrouted() bool { return len(heldUnroutable(o)) > 0 }

// UnroutedUnread reports whether an unroutable queue of the observer's
// ladders holds ready messages whose destinations were not read: none read
// for it, or fewer than it holds now (up to UnroutedSample). A watcher
// (the console) asks it at each refresh and calls ReadUnrouted only then:
// what was read stays with the observer across readings, so the lost
// destination stays named without a read per refresh.
func (o Observer) UnroutedUnread() bool {
	for _, h := range heldUnroutable(o) {
		read, ok := o.unrouted[h.queue.Name]
		if !ok {
			return true
		}
		var n int64
		for _, c := range read {
			n += c
		}
		if n < min(h.queue.Stats.Ready, UnroutedSample) {
			return true
		}
	}
	return false
}
