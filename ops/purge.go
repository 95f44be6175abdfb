package ops

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

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

// Queues names every queue PlanPurge reads for the request: the queue, or
// the ladder's rungs and terminals, which it empties, and its targets,
// which it names as left alone.
func (r PurgeRequest) Queues() []string {
	if r.Queue != "" {
		return []string{r.Queue}
	}
	var names []string
	for _, q := range ladderQueues(r.Ladder) {
		names = append(names, q.name)
	}
	return append(names, r.Ladder.Targets...)
}

type roleQueue struct{ name, role string }

// ladderQueues are the queues a ladder's purge empties, with their roles.
func ladderQueues(l topology.Ladder) []roleQueue {
	var qs []roleQueue
	for _, r := range l.Rungs() {
		qs = append(qs, roleQueue{r.Queue, topology.RoleRung})
	}
	for _, t := range l.Terminals() {
		qs = append(qs, roleQueue{t.Queue, t.Role})
	}
	return qs
}

// PurgeQueue is one queue a purge empties and what it will lose.
type PurgeQueue struct {
	Queue string
	// Role is the queue's role in a discovered ladder (topology.RoleRung,
	// RoleDone, RoleUnroutable, RoleTarget), "" for any other queue.
	Role    string
	Ready   int64
	Unacked int64 // not purged: a purge removes ready messages only
	// Expired and Delayed count messages waiting to be dead-lettered and
	// messages a delayed retry holds back that the purge deletes too (see
	// purgedBeyondReady); 0 where the release's purge leaves them.
	Expired int64
	Delayed int64
}

// Lost is how many messages purging the queue deletes.
func (q PurgeQueue) Lost() int64 { return q.Ready + q.Expired + q.Delayed }

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

// Total sums the plan's queues into one PurgeQueue (no name, no role).
func (p PurgePlan) Total() PurgeQueue {
	var t PurgeQueue
	for _, q := range p.Queues {
		t.Ready += q.Ready
		t.Unacked += q.Unacked
		t.Expired += q.Expired
		t.Delayed += q.Delayed
	}
	return t
}

// Describe says what purging q deletes: "12 messages (5 ready, 4 expired
// waiting to be dead-lettered, 3 held by delayed retry)", or "5 ready
// messages" when only ready ones go, as on releases before 4.3.
func (q PurgeQueue) Describe() string {
	if q.Expired == 0 && q.Delayed == 0 {
		return topology.Counted(q.Ready, "ready message", "ready messages")
	}
	parts := []string{topology.FormatCount(q.Ready) + " ready"}
	if q.Expired > 0 {
		parts = append(parts, topology.FormatCount(q.Expired)+" expired waiting to be dead-lettered")
	}
	if q.Delayed > 0 {
		parts = append(parts, topology.FormatCount(q.Delayed)+" held by delayed retry")
	}
	return topology.Counted(q.Lost(), "message", "messages") + " (" + strings.Join(parts, ", ") + ")"
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
	for _, lq := range ladderQueues(l) {
		if q, ok := snap.Queue(lq.name); ok {
			p.Queues = append(p.Queues, purgeQueue(q, lq.role, v))
		}
	}
	for _, t := range l.Targets {
		if _, ok := snap.Queue(t); ok {
			p.Untouched = append(p.Untouched, t)
		}
	}
	return p, nil
}

func purgeQueue(q topology.Queue, role string, v topology.Version) PurgeQueue {
	p := PurgeQueue{Queue: q.Name, Role: role, Ready: q.Stats.Ready, Unacked: q.Stats.Unacked}
	p.Expired, p.Delayed = purgedBeyondReady(v, q)
	return p
}

// purgedBeyondReady is how many of a quorum queue's messages outside Ready
// a purge deletes with the ready ones: the expired messages waiting to be
// dead-lettered (QueueStats.Expired, messages_dlx) and those a delayed
// retry holds (QueueStats.Delayed, messages_delayed). Measured: 4.3.6's
// purge deleted and reported both (3 expired; 2 ready plus 3 delayed
// reported as 5); 3.10.8's and 4.0.5's left the expired ones and had no
// delayed retry. Unacknowledged messages are never purged.
func purgedBeyondReady(v topology.Version, q topology.Queue) (expired, delayed int64) {
	if q.QueueType() != topology.Quorum || !v.QuorumPurgeTakesExpired() {
		return 0, 0
	}
	return q.Stats.Expired, q.Stats.Delayed
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

// PurgeAsk is a purge as a front end asks for it: one Queue by name or,
// with Queue "", the ladder Ladder names. Version is the broker's release,
// for what its purge deletes besides ready messages (zero: unknown, only
// ready messages are counted, the 3.x and 4.0 rule).
type PurgeAsk struct {
	Vhost   string
	Queue   string
	Ladder  LadderQuery
	Version topology.Version
}

// Purge is a purge's one entry point: it reads what the purge of ask
// needs (the queue alone, or the ladder's objects by name), finds the
// ladder and plans what will be lost. The front end asks the operator
// with the plan's Question and Word, then runs the plan (PurgePlan.Run).
// Every error says nothing was purged; a ladder query that matches
// several ladders is an *InputError.
func Purge(ctx context.Context, insp ScopedInspector, ask PurgeAsk) (PurgePlan, error) {
	snap, found, err := ReadPurge(ctx, insp, ask.Vhost, ask.Queue, ask.Ladder.Name)
	if err != nil {
		return PurgePlan{Vhost: ask.Vhost}, err
	}
	req := PurgeRequest{Queue: ask.Queue}
	if ask.Queue == "" {
		f, err := FindLadder(found, ask.Ladder)
		switch {
		case errors.Is(err, ErrNoLadder):
			return PurgePlan{Vhost: ask.Vhost}, fmt.Errorf("no ladder %q in vhost %s; nothing was purged", ask.Ladder.Name, ask.Vhost)
		case err != nil:
			return PurgePlan{Vhost: ask.Vhost}, badInput("%v; nothing was purged", err)
		}
		req.Ladder = f.Ladder
	}
	plan, err := PlanPurge(snap, found, ask.Version, req)
	if err != nil {
		return plan, fmt.Errorf("%w; nothing was purged", err)
	}
	return plan, nil
}

// Word is what a typed confirmation of the plan asks for: the queue's
// name, or the ladder's.
func (p PurgePlan) Word() string {
	if p.Ladder != nil {
		return p.Ladder.Name
	}
	if len(p.Queues) == 1 {
		return p.Queues[0].Queue
	}
	return ""
}

// Question is what a front end asks before it runs the plan: the queues
// (the first four named) and about how many messages will be lost.
func (p PurgePlan) Question() string {
	return fmt.Sprintf("purge %s in vhost %s: about %s will be lost", strings.Join(FirstNames(p.Names(), 4), ", "), p.Vhost, p.Total().Describe())
}

// FirstNames are the first n of names and, past them, "and N more": how a
// question names what it acts on.
func FirstNames(names []string, n int) []string {
	if len(names) <= n {
		return names
	}
	return append(append([]string(nil), names[:n]...), fmt.Sprintf("and %d more", len(names)-n))
}
