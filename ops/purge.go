package ops

import (
	"context"
	"fmt"
	"sort"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// NoQueueError says a queue an operation names is not in the vhost.
type NoQueueError struct{ Queue, Vhost string }

func (e *NoQueueError) Error() string {
	return fmt.Sprintf("no queue %q in vhost %s", e.Queue, e.Vhost)
}

// PurgeRequest asks to purge one Queue or, with Queue "", every queue
// Ladder owns: its rungs, its done queue and its unroutable queue.
// Destination queues belong to the applications and are left alone.
type PurgeRequest struct {
	Queue  string
	Ladder topology.Ladder
}

// PurgeQueue is one queue a purge empties and what it will lose.
type PurgeQueue struct {
	Queue string
	// Role is the queue's role in a discovered ladder (topology.RoleRung,
	// RoleDone, RoleUnroutable, RoleTarget), "" for any other queue.
	Role    string
	Ready   int64
	Unacked int64 // not purged: a purge removes ready messages only
	// Expired counts messages waiting to be dead-lettered that the purge
	// deletes too (see purgedExpired).
	Expired int64
}

// Lost is how many messages purging the queue deletes.
func (q PurgeQueue) Lost() int64 { return q.Ready + q.Expired }

// PurgePlan is what a purge will delete, in the order it purges: what
// the confirmation shows, and all that Run needs.
type PurgePlan struct {
	Vhost string
	// Ladder is set for a purge of a whole ladder.
	Ladder *topology.Ladder
	Queues []PurgeQueue
	// Untouched are the ladder's destination queues, which a ladder purge
	// leaves alone.
	Untouched []string
}

// Lost is how many messages the purge deletes, as the broker counted them
// in the snapshot the plan was made from.
func (p PurgePlan) Lost() int64 {
	var n int64
	for _, q := range p.Queues {
		n += q.Lost()
	}
	return n
}

// Names are the queues the plan purges, in order.
func (p PurgePlan) Names() []string {
	out := make([]string, len(p.Queues))
	for i, q := range p.Queues {
		out[i] = q.Queue
	}
	return out
}

// Deepest are the plan's queues that lose messages, most first, at most n.
func (p PurgePlan) Deepest(n int) []PurgeQueue {
	var out []PurgeQueue
	for _, q := range p.Queues {
		if q.Lost() > 0 {
			out = append(out, q)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Lost() > out[j].Lost() })
	return out[:min(n, len(out))]
}

// PlanPurge decides what a purge deletes, from the vhost's snapshot: which
// queues (those of the ladder that exist; a missing one has nothing to
// lose) and how many messages each holds. found names the role of a
// single queue; v is the broker's version, for what its purge deletes
// besides ready messages.
func PlanPurge(snap topology.Snapshot, found []topology.Found, v topology.Version, req PurgeRequest) (PurgePlan, error) {
	p := PurgePlan{Vhost: snap.Vhost}
	if req.Queue != "" {
		q, ok := snap.Queue(req.Queue)
		if !ok {
			return p, &NoQueueError{req.Queue, snap.Vhost}
		}
		role := ""
		for _, f := range found {
			if r, _, ok := f.Ladder.QueueRole(q.Name); ok {
				role = r
				break
			}
		}
		p.Queues = []PurgeQueue{purgeQueue(q, role, v)}
		return p, nil
	}
	l := req.Ladder
	p.Ladder = &l
	add := func(name, role string) {
		if q, ok := snap.Queue(name); ok {
			p.Queues = append(p.Queues, purgeQueue(q, role, v))
		}
	}
	for _, r := range l.Rungs() {
		add(r.Queue, topology.RoleRung)
	}
	for _, t := range l.Terminals() {
		add(t.Queue, t.Role)
	}
	for _, t := range l.Targets {
		if _, ok := snap.Queue(t); ok {
			p.Untouched = append(p.Untouched, t)
		}
	}
	return p, nil
}

func purgeQueue(q topology.Queue, role string, v topology.Version) PurgeQueue {
	return PurgeQueue{Queue: q.Name, Role: role, Ready: q.Stats.Ready, Unacked: q.Stats.Unacked, Expired: purgedExpired(v, q.Stats)}
}

// purgedExpired is how many of a queue's expired messages that wait to be
// dead-lettered (QueueStats.Expired, the management API's messages_dlx) a
// purge deletes along with the ready ones. On every release rungs has
// rules for, a purge leaves them (they are in neither Ready nor Unacked),
// so it is 0; a release whose quorum purge deletes them too adds its rule
// here, from v, and every confirmation counts them.
func purgedExpired(v topology.Version, s topology.QueueStats) int64 {
	_, _ = v, s
	return 0
}

// PurgeProgress reports a purge as it goes: Done of Of queues purged,
// Purged messages deleted so far, Queue the one just purged.
type PurgeProgress struct {
	Queue    string
	Done, Of int
	Purged   int
}

// PurgeResult is what a purge did. On failure Queues holds the queues
// purged before Failed, so the report says exactly what was and was not.
type PurgeResult struct {
	Queues []string
	Purged int
	Failed string
}

// Run empties the plan's queues one after the other, stopping at the
// first failure; progress (nil: none) hears of each queue purged. It
// decides nothing: the queues are the plan's.
func (p PurgePlan) Run(ctx context.Context, q broker.Purger, progress func(PurgeProgress)) (PurgeResult, error) {
	var res PurgeResult
	for _, pq := range p.Queues {
		n, err := q.Purge(ctx, pq.Queue)
		if err != nil {
			res.Failed = pq.Queue
			return res, err
		}
		res.Queues = append(res.Queues, pq.Queue)
		res.Purged += n
		if progress != nil {
			progress(PurgeProgress{Queue: pq.Queue, Done: len(res.Queues), Of: len(p.Queues), Purged: res.Purged})
		}
	}
	return res, nil
}
