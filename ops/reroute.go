package ops

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// A quorum rung's dead-letter worker keeps a message whose route is lost
// and tries it again only every dead_letter_worker_publisher_confirm_timeout
// (180s by default), or when the queue's policy changes (it then looks up
// its dead-letter topology and retries at once; rabbit_fifo_dlx_worker).
// So restoring a lost route moves the held messages minutes later; rungs
// reroute moves them now, with the no-op policy unstall declares. With
// --park it first routes each lost destination to a parking queue,
// DEST.parked (where the retry library parks too), so that the rung drains
// and the messages wait there to be replayed once the destination is back.

// RerouteRetryNote is what a lost route's remedy says of held messages
// once the route is back.
const RerouteRetryNote = "the broker retries held messages within its dead-letter confirm timeout (180s by default)"

// RerouteRequest is what reroute will do to one ladder.
type RerouteRequest struct {
	Ladder topology.Ladder
	// Park declares the parking queues and their bindings (empty
	// without --park).
	Park topology.Plan
	// Parked names the destinations parked, Held the rungs to nudge.
	Parked []string
	Held   []StalledRung
}

// Describe is the request for its confirmation.
func (r RerouteRequest) Describe(vhost string) string {
	var parts []string
	for i, d := range r.Parked {
		parts = append(parts, fmt.Sprintf("route %s to parking queue %s", d, r.Park.Queues[i].Name))
	}
	names := make([]string, len(r.Held))
	var n int64
	for i, h := range r.Held {
		names[i], n = h.Queue.Name, n+h.Before
	}
	parts = append(parts, fmt.Sprintf("retry the %s held in %s now (a no-op policy on each, deleted again afterwards)",
		topology.Counted(n, "expired message", "expired messages"), strings.Join(names, ", ")))
	return fmt.Sprintf("reroute ladder %s in vhost %s: %s", r.Ladder.Name, vhost, strings.Join(parts, "; "))
}

// PlanReroute decides what reroute does to l as rep judged it: refuse
// while a route is lost (unless park), or when nothing is held.
func PlanReroute(rep health.Report, l topology.Ladder, park bool) (RerouteRequest, error) {
	req := RerouteRequest{Ladder: l}
	var lr *health.LadderReport
	for i := range rep.Ladders {
		if SameLadder(rep.Ladders[i].Found.Ladder, l) {
			lr = &rep.Ladders[i]
		}
	}
	if lr == nil {
		return req, fmt.Errorf("no ladder %q in vhost %s; nothing was changed", l.Name, rep.Vhost)
	}
	lost := l.LostRoutes(rep.Snapshot)
	hasUnroutable := false
	for _, t := range l.Terminals() {
		hasUnroutable = hasUnroutable || t.Role == topology.RoleUnroutable
	}
	switch {
	case len(lost) > 0 && hasUnroutable:
		return req, fmt.Errorf("ladder %s keeps what no route takes in its unroutable queue, parked already: restore the route (%s), then rungs replay --from %s.unroutable --to-origin; nothing was changed",
			l.Name, lost[0].Restore, l.Name)
	case len(lost) > 0 && !park:
		ds := make([]health.LostDest, len(lost))
		for i, r := range lost {
			ds[i] = health.LostDest{LostRoute: r, Held: -1}
		}
		return req, fmt.Errorf("the route to %s is still lost (%s): %s; or park it with --park; nothing was changed",
			topology.LostNames(lost), ds[0].Evidence(), health.LostRemedy(ds))
	}
	for _, r := range lost {
		if r.Dest == "" {
			return req, fmt.Errorf("%s: no destination is named, so none can be parked: %s; nothing was changed", r.Evidence(), r.Restore)
		}
		q := r.Dest + ".parked"
		key := "#." + r.Dest
		if x, ok := rep.Snapshot.Exchange(r.Exchange); ok && x.Type == "fanout" {
			key = ""
		}
		req.Parked = append(req.Parked, r.Dest)
		pq := topology.Queue{Name: q, Durable: true}
		if l.QueueType == topology.Quorum {
			pq.Args = topology.Args{"x-queue-type": string(topology.Quorum)}
		}
		req.Park.Queues = append(req.Park.Queues, pq)
		req.Park.Bindings = append(req.Park.Bindings, topology.Binding{Source: r.Exchange, Destination: q, DestinationType: topology.ToQueue, RoutingKey: key})
	}
	for _, r := range lr.Rows {
		if r.Kind != health.RungRow || r.Stats.Expired <= 0 {
			continue
		}
		q, ok := rep.Snapshot.Queue(r.Queue)
		if ok && q.QueueType() == topology.Quorum {
			req.Held = append(req.Held, StalledRung{q, q.Stats.Expired})
		}
	}
	if len(req.Held) == 0 {
		return req, fmt.Errorf("no rung of ladder %s holds expired messages; nothing was changed", l.Name)
	}
	return req, nil
}

// RerouteLadder is the ladder q names among those snap holds, the one
// reroute acts on: a name no ladder has, or several layouts share, is
// refused before anything changes (the latter as bad input: --layout
// picks one). name is the --ladder the refusal quotes.
func RerouteLadder(snap topology.Snapshot, q LadderQuery, name, vhost string) (topology.Ladder, error) {
	f, err := FindLadder(topology.Discover(snap), q)
	switch {
	case errors.Is(err, ErrNoLadder):
		return topology.Ladder{}, fmt.Errorf("no ladder %q in vhost %s; nothing was changed", name, vhost)
	case err != nil:
		return topology.Ladder{}, badInput("%v: add --layout; nothing was changed", err)
	}
	return f.Ladder, nil
}
