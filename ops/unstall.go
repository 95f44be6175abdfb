package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// StalledRung is a rung unstall acts on, with its waiting count before.
type StalledRung struct {
	Queue  topology.Queue
	Before int64
}

// CheckUnstall refuses a ladder whose rungs cannot stall: only quorum
// rungs dead-letter at least once.
func CheckUnstall(l topology.Ladder) error {
	if l.QueueType != topology.Quorum {
		return fmt.Errorf("ladder %s has %s rungs: only quorum rungs dead-letter at least once and can stall; nothing was changed", l.Name, l.QueueType)
	}
	return nil
}

// NamedStalledRungs checks the rungs an operator named: each must be a
// rung of l, present in snap, with expired messages waiting.
func NamedStalledRungs(l topology.Ladder, snap topology.Snapshot, names []string) ([]StalledRung, error) {
	rungs := map[string]bool{}
	for _, r := range l.Rungs() {
		rungs[r.Queue] = true
	}
	var out []StalledRung
	for _, name := range names {
		q, present := snap.Queue(name)
		switch {
		case !rungs[name]:
			return nil, fmt.Errorf("%s is not a rung of ladder %s; nothing was changed", name, l.Name)
		case !present:
			return nil, fmt.Errorf("rung %s is missing on the broker; nothing was changed", name)
		case q.Stats.Expired == 0:
			return nil, fmt.Errorf("rung %s has no expired messages waiting to be dead-lettered; nothing was changed", name)
		}
		out = append(out, StalledRung{q, q.Stats.Expired})
	}
	return out, nil
}

// StalledRungs are the rungs of l that rep judged stalled. A scope
// watches ladders by name, so the report may hold another layout's ladder
// of that name: SameLadder picks l's.
func StalledRungs(rep health.Report, l topology.Ladder) []StalledRung {
	var out []StalledRung
	for _, lr := range rep.Ladders {
		if !SameLadder(lr.Found.Ladder, l) {
			continue
		}
		for _, r := range lr.Rows {
			if r.Stalled {
				q, _ := rep.Snapshot.Queue(r.Queue)
				out = append(out, StalledRung{q, q.Stats.Expired})
			}
		}
	}
	return out
}

// ChooseRemedy picks the remedy that needs no node access for every
// target on release v (zero when unread), by Version.StallRemedy. Where
// the remedy depends on a rung's members, members reads how many it has;
// a rung that no other member can take over is an error naming
// --rabbitmqctl.
func ChooseRemedy(v topology.Version, targets []StalledRung, members func(queue string) (int, error)) (topology.StallRemedy, error) {
	if v.PolicyNudgeRevivesDeadLettering() {
		return topology.RemedyPolicy, nil // whatever the members
	}
	for _, t := range targets {
		n, err := members(t.Queue.Name)
		if err != nil {
			return 0, fmt.Errorf("%w; nothing was changed", err)
		}
		if v.StallRemedy(n) != topology.RemedyLeaderMove {
			return 0, fmt.Errorf("on RabbitMQ %s a policy does not get a stalled rung's dead-letter worker going (measured on 4.3.6), "+
				"and %s has %s, so no other can take over: run unstall with --rabbitmqctl PREFIX to restart its Ra member; nothing was changed",
				v, t.Queue.Name, topology.Counted(int64(n), "member", "members"))
		}
	}
	return topology.RemedyLeaderMove, nil
}

// RemedyHow says what unstall will do to each rung, for its confirmation.
// ctl is the --rabbitmqctl prefix a Ra member restart runs.
func RemedyHow(r topology.StallRemedy, ctl string) string {
	switch r {
	case topology.RemedyPolicy:
		return "declare a no-op policy on each (deleted again afterwards)"
	case topology.RemedyLeaderMove:
		return "move each rung's leader to another member (remove the leading member, then add it back)"
	}
	return "restart each queue's Ra member with " + ctl
}

// UnstallHint is the command doctor names for the stalled rungs of l on
// release v, and what it does there (Version.StallRemedy). Doctor does not
// read the rungs' members, so where the remedy depends on them it names
// the cluster's and the single node's.
func UnstallHint(l topology.Ladder, queues []string, v topology.Version) string {
	cmd := "rungs unstall --ladder " + l.Name
	if l.Vhost != "" && l.Vhost != "/" {
		cmd += " --vhost " + l.Vhost
	}
	rungs := strings.Join(queues, ", ")
	cluster, single := v.StallRemedy(2), v.StallRemedy(1)
	if cluster == single {
		return fmt.Sprintf("%s (%s; nothing is purged)", cmd, remedyDoes(cluster, rungs))
	}
	return fmt.Sprintf("%s (on RabbitMQ %s a policy does not revive a stalled rung: in a cluster %s; on a single node %s; nothing is purged)",
		cmd, v, remedyDoes(cluster, rungs), remedyDoes(single, rungs))
}

// remedyDoes is what a remedy does to the named rungs, in doctor's words.
func remedyDoes(r topology.StallRemedy, rungs string) string {
	switch r {
	case topology.RemedyPolicy:
		return "restarts the dead-letter worker of " + rungs
	case topology.RemedyLeaderMove:
		return "it moves the leader of " + rungs + " to another member"
	}
	return "add --rabbitmqctl PREFIX, which restarts the Ra member through rabbitmqctl on the node"
}

// LadderLost is what rep judged of l's lost routes (health.LadderLost),
// nil when rep does not hold l or every route resolves.
func LadderLost(rep health.Report, l topology.Ladder) []health.LostDest {
	for _, lr := range rep.Ladders {
		if SameLadder(lr.Found.Ladder, l) {
			return lr.Lost
		}
	}
	return nil
}

// SnapLost is l's lost routes in snap with the held counts unknown: what
// unstall knows of rungs named on its command line, before any watch.
func SnapLost(l topology.Ladder, snap topology.Snapshot) []health.LostDest {
	var out []health.LostDest
	for _, r := range l.LostRoutes(snap) {
		out = append(out, health.LostDest{LostRoute: r, Held: -1})
	}
	return out
}

// RefuseLostRoute refuses to unstall a ladder whose held messages are
// held by a lost route: unstall restarts a dead-letter worker, which
// cannot route a message to a queue that does not exist. It names the
// remedy that does. nil when no route is lost.
func RefuseLostRoute(l topology.Ladder, lost []health.LostDest) error {
	if len(lost) == 0 {
		return nil
	}
	held, gone := make([]string, len(lost)), make([]string, len(lost))
	for i, d := range lost {
		name := topology.LostNames([]topology.LostRoute{d.LostRoute})
		held[i], gone[i] = "messages for "+name, d.Evidence()
		if d.Held >= 0 {
			held[i] = topology.Counted(d.Held, "message", "messages") + " for " + name
		}
	}
	return fmt.Errorf("ladder %s holds %s, whose route is lost (%s): unstall restarts a dead-letter worker and cannot route a message to a queue that does not exist; %s; nothing was changed",
		l.Name, strings.Join(held, ", "), strings.Join(gone, "; "), health.LostRemedy(lost))
}

// HoldsExpired reports whether a rung of l holds expired messages in snap.
func HoldsExpired(l topology.Ladder, snap topology.Snapshot) bool {
	for _, r := range l.Rungs() {
		if q, ok := snap.Queue(r.Queue); ok && q.Stats.Expired > 0 {
			return true
		}
	}
	return false
}

// UnstallRequest is an unstall as a front end asks for it, with what it
// reads on the way: Snap holds the ladders Ladder may name (ReadLadder);
// Rungs names the rungs to unstall ("" all: the stalled ones Observe
// finds); Ctl is a rabbitmqctl command to cure through ("" the
// management API's remedy, chosen by Version and Members).
type UnstallRequest struct {
	Vhost  string
	Ladder LadderQuery
	Snap   topology.Snapshot
	Rungs  []string
	Ctl    string
	// Observe watches ladder l for stalls and reports it; called when no
	// rung is named.
	Observe func(l topology.Ladder) (health.Report, error)
	// Version is the broker's release (zero: unread, the policy remedy
	// as before 4.3); Members counts a quorum queue's members.
	Version func() topology.Version
	Members func(queue string) (int, error)
}

// UnstallPlan is a decided unstall: the ladder's stalled rungs, the
// remedy and how it is applied. No Targets: nothing is stalled.
type UnstallPlan struct {
	Vhost   string
	Ladder  topology.Ladder
	Targets []StalledRung
	Remedy  topology.StallRemedy
	How     string
}

// PlanUnstall decides an unstall: finds the ladder, refuses one that
// cannot stall or whose held messages wait on a lost route (restarting a
// worker routes nothing), finds the stalled rungs and chooses the remedy.
// A query matching several ladders is an *InputError.
func PlanUnstall(req UnstallRequest) (UnstallPlan, error) {
	p := UnstallPlan{Vhost: req.Vhost, Remedy: topology.RemedyRaRestart}
	f, err := FindLadder(topology.Discover(req.Snap), req.Ladder)
	switch {
	case errors.Is(err, ErrNoLadder):
		return p, fmt.Errorf("no ladder %q in vhost %s; nothing was changed", req.Ladder.Name, req.Vhost)
	case err != nil:
		return p, badInput("%v: add --layout; nothing was changed", err)
	}
	l := f.Ladder
	p.Ladder = l
	if err := CheckUnstall(l); err != nil {
		return p, err
	}
	if HoldsExpired(l, req.Snap) {
		if err := RefuseLostRoute(l, SnapLost(l, req.Snap)); err != nil {
			return p, err
		}
	}
	if len(req.Rungs) > 0 {
		if p.Targets, err = NamedStalledRungs(l, req.Snap, req.Rungs); err != nil {
			return p, err
		}
	} else {
		rep, err := req.Observe(l)
		if err != nil {
			return p, err
		}
		if err := RefuseLostRoute(l, LadderLost(rep, l)); err != nil {
			return p, err
		}
		if p.Targets = StalledRungs(rep, l); len(p.Targets) == 0 {
			return p, nil
		}
	}
	if req.Ctl == "" {
		if p.Remedy, err = ChooseRemedy(req.Version(), p.Targets, req.Members); err != nil {
			return p, err
		}
	}
	p.How = RemedyHow(p.Remedy, req.Ctl)
	return p, nil
}

// Question is what a front end asks before the unstall: the rungs (the
// first four named), the expired messages waiting, and how.
func (p UnstallPlan) Question() string {
	var names []string
	var total int64
	for _, t := range p.Targets {
		names = append(names, t.Queue.Name)
		total += t.Before
	}
	return fmt.Sprintf("unstall %s in vhost %s (%s waiting to be dead-lettered): %s",
		strings.Join(FirstNames(names, 4), ", "), p.Vhost, topology.Counted(total, "expired message", "expired messages"), p.How)
}

// UnstallVerify is how long an unstall waits for a rung's waiting count
// to fall after the remedy: three statistics intervals, because the count
// the management API reports is up to one interval stale and the worker
// needs a moment to start.
const UnstallVerify = 3 * health.DefaultInterval

// StalledNames are the rungs' queue names.
func StalledNames(ts []StalledRung) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Queue.Name)
	}
	return out
}

// Drained is a rung whose waiting count fell since the remedy: Now is its
// queue as read then.
type Drained struct {
	StalledRung
	Now topology.Queue
}

// Draining splits the rungs by what their queues qs (read since the
// remedy) show: a rung whose waiting count fell below what it was is
// draining; the others are still stalled.
func Draining(rungs []StalledRung, qs []topology.Queue) (draining []Drained, still []StalledRung) {
	now := topology.Snapshot{Queues: qs}
	for _, t := range rungs {
		if q, _ := now.Queue(t.Queue.Name); q.Stats.Expired < t.Before {
			draining = append(draining, Drained{t, q})
			continue
		}
		still = append(still, t)
	}
	return draining, still
}

// DrainWatch is how WatchDrain watches: until when, each read bounded by
// Timeout, on the clock Now with Sleep waiting (or returning the
// context's error).
type DrainWatch struct {
	Vhost   string
	Until   time.Time
	Timeout time.Duration
	Now     func() time.Time
	Sleep   func(context.Context, time.Duration) error
}

// WatchDrain re-reads the rungs by name through qr, every
// StallSampleEvery, until each one's waiting count has fallen below what
// it was (Draining), or until w.Until; drained hears of each rung as it
// starts draining. It returns the rungs that did not.
func (w DrainWatch) WatchDrain(ctx context.Context, qr QueueReader, rungs []StalledRung, drained func(Drained)) ([]StalledRung, error) {
	pending := append([]StalledRung(nil), rungs...)
	for len(pending) > 0 && w.Now().Before(w.Until) {
		if err := w.Sleep(ctx, StallSampleEvery); err != nil {
			return pending, err
		}
		cctx, cancel := context.WithTimeout(ctx, w.Timeout)
		qs, err := LookupQueues(cctx, qr, w.Vhost, StalledNames(pending))
		cancel()
		if err != nil {
			return pending, err
		}
		var draining []Drained
		draining, pending = Draining(pending, qs)
		for _, d := range draining {
			drained(d)
		}
	}
	return pending, nil
}
