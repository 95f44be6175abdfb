package ops

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

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
// messages, and of a sample of the rungs of a ladder whose lost route
// nothing names (sampleRungs), and hands them to the observer
// (Observer.WithUnrouted). v is
// the broker's release (unread: the zero Version, which the gate weighs
// as unknown). A queue the gate keeps closed, or a failed read, is left
// unread.
func ReadUnrouted(ctx context.Context, o Observer, facts PeekFacter, p KeyPeeker, v topology.Version) Observer {
	vhost := o.Snapshot().Vhost
	ladders := Ladders(o.Found())
	read := map[string]map[string]int64{}
	for _, h := range heldUnroutable(o) {
		if dests, _, ok := peekDests(ctx, h.queue, h.ladder, ladders, vhost, facts, p, v, UnroutedSample); ok {
			read[h.queue.Name] = dests
		}
	}
	for _, l := range ladders {
		sampleRungs(ctx, read, o, l, ladders, facts, p, v)
	}
	if len(read) == 0 {
		return o
	}
	return o.WithUnrouted(read)
}

// A Celery or NServiceBus ladder whose delivery exchange binds nothing
// (an endpoint bound straight to it, then deleted) has no binding left to
// name the destination its held rung waits for. The messages still on
// their way do: the routing key of each ready message in its rungs ends
// in its destination. ReadUnrouted reads a small sample of them, lowest
// rungs first (the nearest to leaving, the likeliest to share the held
// messages' destinations), under the same read-only peek gate: never on a
// release that would count the read as a delivery. A rung the gate keeps
// closed is read as naming nothing, so that no watcher asks again.

// RungSample is how many ready messages ReadUnrouted reads of the rungs
// of one ladder whose lost route nothing names.
const RungSample = 50

// sampleRungs reads the destinations of a sample of l's ready messages
// into read, by rung, when l's lost route is unnamed (unnamedRungs).
func sampleRungs(ctx context.Context, read map[string]map[string]int64, o Observer, l topology.Ladder, ladders []topology.Ladder, facts PeekFacter, p KeyPeeker, v topology.Version) {
	snap := o.Snapshot()
	left := RungSample
	for _, q := range o.unnamedRungs(l) {
		dests := map[string]int64{}
		read[q.Name] = dests
		if left <= 0 {
			continue
		}
		if got, n, ok := peekDests(ctx, q, l, ladders, snap.Vhost, facts, p, v, left); ok {
			read[q.Name], left = got, left-n
		}
	}
}

// peekDests reads the destinations named by the routing keys of up to
// max messages at the head of q, one of l's queues, where the read-only
// peek gate lets it (reading changes nothing on the release): by
// destination, with how many messages were read. ok is false where the
// gate kept the queue closed or the read failed.
func peekDests(ctx context.Context, q topology.Queue, l topology.Ladder, ladders []topology.Ladder, vhost string, facts PeekFacter, p KeyPeeker, v topology.Version, max int) (dests map[string]int64, n int, ok bool) {
	req := PeekRequest{Queue: q, Ladders: ladders, ReadOnly: true, Version: v}
	f := ReadPeekFacts(ctx, facts, vhost, q, v)
	req.Version, req.Limit, req.LimitKnown, req.DelayedRetries = f.Version, f.Limit, f.LimitKnown, f.DelayedRetries
	if GatePeek(req).Verdict != PeekOK {
		return nil, 0, false
	}
	res, err := p.Peek(ctx, q.Name, min(max, int(q.Stats.Ready)))
	if err != nil {
		return nil, 0, false
	}
	dests = map[string]int64{}
	for _, m := range res.Messages {
		if _, dest, err := l.Decode(m.RoutingKey); err == nil && dest != "" {
			dests[dest]++
		}
	}
	return dests, len(res.Messages), true
}

// unnamedRungs are l's rungs holding ready messages, lowest TTL first,
// when a rung of l holds expired messages and its lost route binds no
// destination that anything the observer holds names; nil otherwise.
func (o Observer) unnamedRungs(l topology.Ladder) []topology.Queue {
	snap := o.Snapshot()
	held := false
	rungs := l.Rungs()
	slices.SortStableFunc(rungs, func(a, b topology.Rung) int { return cmp.Compare(a.TTL, b.TTL) })
	var ready []topology.Queue
	for _, r := range rungs {
		q, ok := snap.Queue(r.Queue)
		if !ok {
			continue
		}
		held = held || q.Stats.Expired > 0
		if q.Stats.Ready > 0 {
			ready = append(ready, q)
		}
	}
	if !held || len(ready) == 0 {
		return nil
	}
	unnamed := slices.ContainsFunc(l.LostRoutes(snap, o.bound[l.Name]...), func(r topology.LostRoute) bool { return r.Dest == "" })
	if !unnamed {
		return nil
	}
	return ready
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

// UnroutedUnread reports whether an unroutable queue of the observer's
// ladders holds ready messages whose destinations were not read: none read
// for it, or fewer than it holds now (up to UnroutedSample); or a rung of
// a ladder whose lost route nothing names holds ready messages it did not
// read (sampleRungs). A watcher
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
	// A rung read as naming nothing (the gate closed, or no key decoded)
	// is read: only a rung newly holding ready messages asks again.
	for _, f := range o.Found() {
		for _, q := range o.unnamedRungs(f.Ladder) {
			if _, ok := o.unrouted[q.Name]; !ok {
				return true
			}
		}
	}
	return false
}

// UnroutedDepths words the depths of the queues ReadUnrouted would read
// now (unroutable queues holding messages, the ready rungs of a ladder
// whose lost route nothing names), so that a watcher can tell a read of
// the same depths from one of changed depths.
func (o Observer) UnroutedDepths() string {
	var b strings.Builder
	for _, h := range heldUnroutable(o) {
		fmt.Fprintf(&b, "%s=%d;", h.queue.Name, h.queue.Stats.Ready)
	}
	for _, f := range o.Found() {
		for _, q := range o.unnamedRungs(f.Ladder) {
			fmt.Fprintf(&b, "%s=%d;", q.Name, q.Stats.Ready)
		}
	}
	return b.String()
}
