package ops

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// What each operation reads. An operation names its objects (a ladder, a
// queue), so it reads them by name through the ScopedInspector it is
// handed (each is a ReachScoped read, and says so in its type):
// beside 10,000 other queues a listing, filtered or not, makes the broker
// walk every one of them, where a read by name costs what it costs alone.
// The front ends gather flags or a form and call these; neither decides
// what to read. Only discover and doctor list a vhost.

// ReadLadders reads scope once through an observer and, when that read
// had to look for the named ladders among every name a ladder may own,
// once more for their objects alone: their targets and the queues those
// dead-letter to are read only then.
func ReadLadders(ctx context.Context, insp ScopedInspector, scope Scope) (Observer, error) {
	o, _, err := NewObserver(scope).Refresh(ctx, insp, time.Now)
	// A first read can ask for another snapshot at once: to narrow to the
	// named ladders, or to list what their names own when a read by name
	// found drift (then narrow). Two more at most.
	for i := 0; err == nil && i < 2 && o.Next().Snapshot; i++ {
		o, _, err = o.Refresh(ctx, insp, time.Now)
	}
	return o, err
}

// ReadLadder is the snapshot of what the ladders called names own, read by
// name (every ladder of the vhost without names): what plan, export,
// publish, apply, teardown, worker, trace, migrate and unstall check
// their request against.
func ReadLadder(ctx context.Context, insp ScopedInspector, vhost string, names ...string) (topology.Snapshot, error) {
	o, err := ReadLadders(ctx, insp, Scope{Vhost: vhost, Ladders: names})
	return o.Snapshot(), err
}

// ReadCheck is the snapshot a drift check of the ladders called names
// reads (plan, apply's verification): what the names own, listed with
// filters, and every binding into their queues, so that a left-over rung
// or a stray binding shows as drift. A read by name sees neither.
func ReadCheck(ctx context.Context, insp ScopedInspector, vhost string, names ...string) (topology.Snapshot, error) {
	o, err := ReadLadders(ctx, insp, Scope{Vhost: vhost, Ladders: names, Inbound: true})
	return o.Snapshot(), err
}

// ReadQueues reads the named queues and, by name, the ladders that may own
// them (topology.LadderNamesOwning): a peek or a purge of one queue
// learns whether it is a rung, and of which ladder, without
// discovering every ladder of the vhost. A queue the vhost does not have
// is left out; ladders are also read by the names in ladders.
func ReadQueues(ctx context.Context, insp ScopedInspector, vhost string, queues []string, ladders ...string) (topology.Snapshot, error) {
	snap := topology.Snapshot{Vhost: vhost}
	names := append(topology.LadderNamesOwning(queues...), ladders...)
	if len(names) > 0 {
		o, err := ReadLadders(ctx, insp, Scope{Vhost: vhost, Ladders: uniq(names)})
		if err != nil {
			return snap, err
		}
		snap = o.Snapshot()
	}
	if len(queues) == 0 {
		return snap, nil
	}
	qs, err := LookupQueues(ctx, insp, vhost, queues)
	if err != nil {
		return snap, err
	}
	return WithQueues(snap, qs...), nil
}

func uniq(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}

// ReadPurge reads what a purge of one queue, or with queue "" of the
// ladder called ladder, plans from (see PlanPurge): the queue alone, one
// request, or the ladder's objects. found are the ladders read: none for
// a queue, whose role in a ladder only the console shows, from the
// ladders it watches.
func ReadPurge(ctx context.Context, insp ScopedInspector, vhost, queue, ladder string) (topology.Snapshot, []topology.Found, error) {
	if queue != "" {
		qs, err := LookupQueues(ctx, insp, vhost, []string{queue})
		return topology.Snapshot{Vhost: vhost, Queues: qs}, nil, err
	}
	snap, err := ReadLadder(ctx, insp, vhost, ladder)
	return snap, topology.Discover(snap), err
}

// PeekFacter reads what the peek rules weigh about a quorum queue: the
// release, its delivery limit and its delayed retry
// (broker.Management.PeekFacts).
type PeekFacter interface {
	PeekFacts(ctx context.Context, vhost string, q topology.Queue) (broker.PeekFacts, error)
}

// PeekReadsFacts reports whether a peek of q reads its facts first: a
// quorum queue's delivery limit and delayed retry decide whether peeking
// may dead-letter its messages early. Another queue has none.
func PeekReadsFacts(q topology.Queue) bool { return q.QueueType() == topology.Quorum }

// PeekFactsOf is the one read of q's peek facts: through pf when
// PeekReadsFacts says to (zero facts otherwise), an error when pf cannot
// read them or there is no pf. Each caller says what a failure means:
// ReadPeekFacts an unknown limit, PlanScan an unchecked rung.
func PeekFactsOf(ctx context.Context, pf PeekFacter, vhost string, q topology.Queue) (broker.PeekFacts, error) {
	if !PeekReadsFacts(q) {
		return broker.PeekFacts{}, nil
	}
	if pf == nil {
		return broker.PeekFacts{}, errors.New("no management API")
	}
	return pf.PeekFacts(ctx, vhost, q)
}

// ReadPeekFacts reads q's peek facts when PeekReadsFacts says to (and pf
// can); otherwise the facts are the release v alone. A failure leaves the
// limit unknown, which the gate weighs.
func ReadPeekFacts(ctx context.Context, pf PeekFacter, vhost string, q topology.Queue, v topology.Version) broker.PeekFacts {
	if pf == nil || !PeekReadsFacts(q) {
		return broker.PeekFacts{Version: v}
	}
	f, err := PeekFactsOf(ctx, pf, vhost, q)
	if err != nil {
		f.LimitKnown = false
	}
	return f
}

// ReadPeek reads what the gate weighs before a peek of queue, by name: the
// queue, the ladders that may own it and, for a quorum queue, its facts.
// A queue the vhost does not have is a *NoQueueError; when the management
// API does not answer, the request says why in Unchecked and the gate
// asks for force.
func ReadPeek(ctx context.Context, insp ScopedInspector, pf PeekFacter, vhost, queue string) (PeekRequest, error) {
	snap, err := ReadQueues(ctx, insp, vhost, []string{queue})
	if err != nil {
		return PeekRequest{Queue: topology.Queue{Name: queue}, Unchecked: err}, nil
	}
	return PeekIn(ctx, pf, snap, queue)
}

// PeekIn is the request to peek queue as snap holds it, with the ladders
// snap holds and, for a quorum queue, its facts read through pf: a
// replay's dry run, which read its source already, peeks so.
func PeekIn(ctx context.Context, pf PeekFacter, snap topology.Snapshot, queue string) (PeekRequest, error) {
	req := PeekRequest{Queue: topology.Queue{Name: queue}}
	q, ok := snap.Queue(queue)
	if !ok {
		return req, &NoQueueError{queue, snap.Vhost}
	}
	req.Queue, req.Ladders = q, Ladders(topology.Discover(snap))
	f := ReadPeekFacts(ctx, pf, snap.Vhost, q, topology.Version{})
	req.Version, req.Limit, req.LimitKnown, req.DelayedRetries = f.Version, f.Limit, f.LimitKnown, f.DelayedRetries
	return req, nil
}

// StoryNames are the queues and exchanges the peeked messages' stories
// name (where each was routed from, its x-death and saved x-death): the
// ladders that may own them tell each story (see PeekStories).
func StoryNames(res broker.PeekResult) []string {
	var names []string
	for _, m := range res.Messages {
		names = append(names, m.Exchange)
		for _, h := range []string{topology.HeaderDeath, topology.HeaderSavedDeath} {
			ds, _ := topology.ParseDeaths(map[string]any{topology.HeaderDeath: m.Headers[h]})
			for _, d := range ds {
				names = append(names, d.Queue, d.Exchange)
			}
		}
	}
	return uniq(names)
}

// ReadStoryLadders reads, by name, the ladders the peeked messages'
// stories name that are not among have, and returns them with have.
// A failed read leaves the stories with the ladders known.
func ReadStoryLadders(ctx context.Context, insp ScopedInspector, vhost string, res broker.PeekResult, have []topology.Ladder) []topology.Ladder {
	var missing []string
	for _, n := range topology.LadderNamesOwning(StoryNames(res)...) {
		if !slices.ContainsFunc(have, func(l topology.Ladder) bool { return l.Name == n }) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return have
	}
	o, err := ReadLadders(ctx, insp, Scope{Vhost: vhost, Ladders: missing})
	if err != nil {
		return have
	}
	return append(slices.Clone(have), Ladders(o.Found())...)
}

// ReadReplay reads what a replay checks its request against (Plan), by
// name: its source and destination queues, the ladders that may own them
// and ladder, the one it replays into ("" for none). A replay back to
// each message's origin may enter any ladder of the vhost, direct ones
// needing their keys rebuilt, so it reads every ladder (filtered
// listings, not the other queues).
func ReadReplay(ctx context.Context, insp ScopedInspector, vhost string, req ReplayRequest, ladder string) (*BrokerView, error) {
	queues := []string{req.Source}
	if req.To.Queue != "" {
		queues = append(queues, req.To.Queue)
	}
	if req.To.Dest != "" {
		queues = append(queues, req.To.Dest)
	}
	if !req.To.Origin {
		snap, err := ReadQueues(ctx, insp, vhost, queues, nonEmpty(ladder)...)
		if err != nil {
			return nil, err
		}
		return NewBrokerView(snap), nil
	}
	o, err := ReadLadders(ctx, insp, Scope{Vhost: vhost})
	if err != nil {
		return nil, err
	}
	qs, err := LookupQueues(ctx, insp, vhost, queues)
	if err != nil {
		return nil, err
	}
	return NewBrokerView(WithQueues(o.Snapshot(), qs...)), nil
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
