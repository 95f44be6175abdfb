package health

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rungs-dev/rungs/topology"
)

// Why a rung's held messages are not leaving is judged once, here, from
// evidence, and every view prints the judgement: none re-derives a cause
// or attaches a remedy of its own. Two causes look alike in the broker's
// figures, expired messages counted in messages_dlx that never fall:
//
//   - a lost route: a destination of the ladder has no queue, binding or
//     exchange left, so a quorum rung's at-least-once dead-letter worker
//     retries a route that does not exist. Restarting the worker (rungs
//     unstall) cannot route a message to a queue that does not exist;
//     restoring the route, or parking the destination, does;
//   - the broker's stall (rabbitmq-server #12625): the worker stopped
//     while every route resolves; rungs unstall restarts it.
//
// A ladder with any lost route has its held rungs judged lost: every
// rung's route ends in the same exchanges, and a held count that never
// falls while the route to some destination is gone is the lost route's
// signature. Only where every route resolves is it the broker's stall.

// Cause names why held messages are not leaving, machine-readable (the
// exporter's label, status --json).
type Cause string

// Causes.
const (
	CauseLostRoute   Cause = "lost_route"
	CauseBrokerStall Cause = "broker_stall"
	CauseBacklog     Cause = "backlog"
)

// Judgement is one verdict on a row: what is wrong, why (Cause), the
// evidence that chose the cause and the remedy that cures it. The zero
// Judgement judges nothing.
type Judgement struct {
	Cause Cause
	// Held counts the messages that are not leaving.
	Held     int64
	Evidence string
	Remedy   string
	// Lost are the destinations whose route is gone (CauseLostRoute).
	Lost []LostDest
}

// LostDest is a lost route with the messages held for it: Held is -1
// when the messages held are shared among several lost destinations
// and their split is unknown (see LadderLost).
type LostDest struct {
	topology.LostRoute
	Held int64
}

// lostRoutes are the ladder's lost routes in snap, the destinations that
// evidence beyond the snapshot names included: the keys read from its
// unroutable queue's messages and from a sample of its rungs' ready
// messages, and what an earlier snapshot saw bound (Watch.Bound).
func lostRoutes(l topology.Ladder, snap topology.Snapshot, w Watch) []topology.LostRoute {
	if !holds(l, snap) {
		// Nothing held, nothing to explain: a refresh of a quiet ladder
		// walks no routes.
		return nil
	}
	queues := make([]string, 0, len(l.Rungs())+1)
	for _, t := range l.Terminals() {
		if t.Role == topology.RoleUnroutable {
			queues = append(queues, t.Queue)
		}
	}
	if len(w.Unrouted) > 0 {
		for _, r := range l.Rungs() {
			queues = append(queues, r.Queue)
		}
	}
	dests := append([]string(nil), w.Bound[l.Name]...)
	for _, q := range queues {
		for d := range w.Unrouted[q] {
			dests = append(dests, d)
		}
	}
	sort.Strings(dests)
	return l.LostRoutes(snap, dests...)
}

// holds reports whether any rung of the ladder has expired messages
// waiting or its unroutable queue has messages.
func holds(l topology.Ladder, snap topology.Snapshot) bool {
	for _, r := range l.Rungs() {
		if q, ok := snap.Queue(r.Queue); ok && q.Stats.Expired > 0 {
			return true
		}
	}
	for _, t := range l.Terminals() {
		if q, ok := snap.Queue(t.Queue); ok && t.Role == topology.RoleUnroutable && q.Stats.Messages() > 0 {
			return true
		}
	}
	return false
}

// HeldRetry is what moves a quorum rung's held messages once their route
// is back, or parks them (rungs reroute): the broker itself retries a held
// message only every dead_letter_worker_publisher_confirm_timeout.
func HeldRetry(l topology.Ladder) string {
	cmd := "rungs reroute --ladder " + l.Name
	if l.Vhost != "" && l.Vhost != "/" {
		cmd += " --vhost " + l.Vhost
	}
	return fmt.Sprintf("then %s sends the held messages on at once (the broker retries them only every 180s by default); or park them until the destination is back: %s --park", cmd, cmd)
}

// StallRemedy is the remedy of the broker's stall.
const StallRemedy = "rungs unstall"

// lostJudgement is the verdict on a rung holding held expired messages
// while routes are lost.
func lostJudgement(held int64, lost []topology.LostRoute) Judgement {
	j := Judgement{Cause: CauseLostRoute, Held: held}
	for _, r := range lost {
		j.Lost = append(j.Lost, LostDest{LostRoute: r, Held: -1})
	}
	if len(lost) == 1 {
		j.Lost[0].Held = held
	}
	j.Evidence = LostEvidence(j.Lost)
	j.Remedy = LostRemedy(j.Lost)
	return j
}

// DeadLetterPrefetch is how many expired messages a quorum rung's
// dead-letter worker takes at a time (dead_letter_worker_consumer_prefetch,
// 32 by default). Those it cannot route it keeps and retries, and it takes
// no more while it holds that many: a rung holding more is held behind
// them, whatever the destination of the rest. Measured on 3.10.8, 4.0.5
// and 4.3.6: 200 tasks for a deleted queue published before 50 for a live
// one, and none of the 50 left; the 50 first, and all of them did;
// interleaved, only the 7 (4.0.5: 16) ahead of the 32nd lost one. The
// management API does not give the prefetch, and an operator may have
// raised it (doctor advises 512 for big drains), so the 32 is a floor:
// "at least", never "exactly".
const DeadLetterPrefetch = 32

// lostRungJudgement is lostJudgement for a quorum rung holding n expired:
// past DeadLetterPrefetch only the worker's own are known to be for a lost
// destination, so the split is unknown and the evidence says why.
func lostRungJudgement(n int64, lost []topology.LostRoute) Judgement {
	j := lostJudgement(n, lost)
	if behind(n, lost) {
		for i := range j.Lost {
			j.Lost[i].Held = -1
		}
		j.Evidence += fmt.Sprintf("; the rung's dead-letter worker retries at least %d of them (RabbitMQ's default prefetch) and takes no more while they fail, so the other %s may wait behind them, whatever their destination",
			DeadLetterPrefetch, topology.FormatCount(n-DeadLetterPrefetch))
	}
	return j
}

// behind reports whether a rung holding n for lost has messages held
// behind the worker's: a destination nothing names ("every destination")
// has no split to speak of.
func behind(n int64, lost []topology.LostRoute) bool {
	for _, r := range lost {
		if r.Dest == "" {
			return false
		}
	}
	return n > DeadLetterPrefetch
}

// lostRungStatus is lostRouteStatus for a quorum rung: past
// DeadLetterPrefetch it says how many are held behind the lost ones.
func lostRungStatus(n int64, lost []topology.LostRoute) string {
	if !behind(n, lost) {
		return lostRouteStatus(n, lost)
	}
	what := make([]string, len(lost))
	for i, r := range lost {
		what[i] = r.Evidence()
	}
	return fmt.Sprintf("lost route: %s expired held (%s): at least %d for %s, %s may wait behind them for any destination",
		topology.FormatCount(n), strings.Join(what, "; "), DeadLetterPrefetch, topology.LostNames(lost), topology.FormatCount(n-DeadLetterPrefetch))
}

// LostEvidence says which routes are gone.
func LostEvidence(lost []LostDest) string {
	parts := make([]string, len(lost))
	for i, d := range lost {
		parts[i] = "the route to " + topology.LostNames([]topology.LostRoute{d.LostRoute}) + " is lost: " + d.Evidence()
	}
	return strings.Join(parts, "; ")
}

// LostRemedy says what restores each lost route, or parks it.
func LostRemedy(lost []LostDest) string {
	parts := make([]string, len(lost))
	for i, d := range lost {
		parts[i] = "restore " + topology.LostNames([]topology.LostRoute{d.LostRoute}) + ": " + d.Restore
	}
	return strings.Join(parts, "; ")
}

// lostRouteStatus is a held rung's status line: short enough for the
// console's detail line, the remedy at length in the judgement.
func lostRouteStatus(n int64, lost []topology.LostRoute) string {
	what := make([]string, len(lost))
	for i, r := range lost {
		what[i] = r.Evidence()
	}
	return fmt.Sprintf("lost route: %s expired held for %s (%s)",
		topology.FormatCount(n), topology.LostNames(lost), strings.Join(what, "; "))
}

// LadderLost is the ladder's lost routes with the messages held for
// each: what its held rungs hold (Celery, NServiceBus: a quorum rung
// keeps them expired) and what its unroutable queue holds for them
// (rungs' own ladders), by the destinations read from that queue's
// messages where known, else all to a sole lost destination.
func LadderLost(rows []Row) []LostDest {
	var lost []LostDest
	byDest := map[string]int{}
	for _, r := range rows {
		for _, d := range r.Why.Lost {
			i, ok := byDest[d.Dest]
			if !ok {
				byDest[d.Dest] = len(lost)
				lost = append(lost, LostDest{LostRoute: d.LostRoute})
				i = len(lost) - 1
			}
			switch {
			case lost[i].Held < 0:
			case d.Held < 0:
				lost[i].Held = -1
			default:
				lost[i].Held += d.Held
			}
		}
	}
	sort.Slice(lost, func(i, j int) bool { return lost[i].Dest < lost[j].Dest })
	return lost
}

// LostRemedies are the remedies of the rows' lost-route judgements, each
// once, in the rows' order: what rungs status prints under a ladder held
// by a lost route, and the console under its table.
func LostRemedies(rows []Row) []string {
	var out []string
	said := map[string]bool{}
	for _, r := range rows {
		if r.Why.Cause == CauseLostRoute && !said[r.Why.Remedy] {
			said[r.Why.Remedy] = true
			out = append(out, r.Why.Remedy)
		}
	}
	return out
}
