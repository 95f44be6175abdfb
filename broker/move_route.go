package broker

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// Where a Move sends each message: the routers rungs replay and migrate
// choose from.

// Route is where one message goes.
type Route struct {
	Exchange   string
	RoutingKey string
	// SaveDeath moves the message's x-death into x-rungs-x-death (and drops
	// the broker's other headers) before republishing. Set it for routes
	// into a ladder: RabbitMQ drops a message that expires into a rung its
	// x-death already names (dead-letter cycle detection).
	SaveDeath bool
	// BCC is the BCC header the copy gets: the keys a ladder that routes
	// by BCC (the direct layout) needs; nil for every other route.
	BCC []string
	// Park, if set, sends the message to the parking queue with this
	// reason instead (without a parking queue it stays on the source).
	Park string
	// Drop acknowledges the message without a copy: it is gone. Only for an
	// operator's explicit discard.
	Drop bool
}

// String reads as "exchange E key K" ("default exchange" for "").
func (r Route) String() string {
	ex := strconv.Quote(r.Exchange)
	if r.Exchange == "" {
		ex = "the default exchange"
	}
	return fmt.Sprintf("%s key %q", ex, r.RoutingKey)
}

// Router picks each message's route. An error keeps the message on the
// source and becomes its reason.
type Router func(d Delivery) (Route, error)

// ToQueue routes every message straight to a queue, through the default
// exchange.
func ToQueue(queue string) Router {
	return func(Delivery) (Route, error) { return Route{RoutingKey: queue}, nil }
}

// ToLadder routes every message into a ladder with the given delay, to
// dest (a destination of the ladder, or "" for its done queue). x-death is
// saved aside (see Route.SaveDeath).
func ToLadder(l topology.Ladder, delay time.Duration, dest string) (Router, error) {
	tr, err := l.Trace(delay, dest)
	if err != nil {
		return nil, err
	}
	r := Route{Exchange: tr.Exchange, RoutingKey: tr.Key, SaveDeath: true, BCC: tr.BCC}
	return func(Delivery) (Route, error) { return r, nil }, nil
}

// ErrNoOrigin is the reason a message without x-death (and not parked by
// the retry library) has no origin to go back to.
var ErrNoOrigin = errors.New("no origin: the message has no x-death (it was not dead-lettered) and no x-rungs-queue")

// ToOrigin routes each message back where it came from:
//
//   - A message parked by rungs (x-rungs-queue, x-rungs-parked-at: the
//     retry library, or Move's parking queue) and not dead-lettered since
//     goes back to the queue it was parked from, through the default
//     exchange.
//   - Otherwise the most recent x-death entry says which exchange and
//     routing key the message had when it entered the queue it was
//     dead-lettered from, and it is published there again. From a work
//     queue, that is the exchange and key its producer (or the ladder)
//     used, so every queue bound to them gets it again, not only the one
//     that dead-lettered it. From a ladder's done queue or a destination,
//     the exchange is the last rung's dead-letter exchange: the digits
//     left are all zeros, so it is delivered at once, not delayed again.
//     From a rung (delivery limit, overflow), it re-enters that rung and
//     waits its full TTL again: late, never early.
//
// intoLadder reports whether an exchange belongs to a ladder; routes into
// one save x-death aside (see Route.SaveDeath). It may be nil. Use
// ToOriginIn when the ladders are known: a direct ladder's exchanges route
// only with the BCC keys it rebuilds.
func ToOrigin(intoLadder func(exchange string) bool) Router {
	return toOrigin(func(x string) (*topology.Ladder, bool) {
		// In a ladder of unknown shape: no BCC keys can be rebuilt.
		return nil, intoLadder != nil && intoLadder(x)
	})
}

// ToOriginIn is ToOrigin for a vhost whose ladders are known: a route into
// one of their exchanges saves x-death aside and, into a ladder that
// routes by BCC, carries the BCC header its routing key spells (the
// broker stripped the original at publish).
func ToOriginIn(ladders []topology.Ladder) Router {
	owner := map[string]topology.Ladder{}
	for _, l := range ladders {
		for _, x := range l.Plan().Exchanges {
			owner[x.Name] = l
		}
	}
	return toOrigin(func(x string) (*topology.Ladder, bool) {
		l, ok := owner[x]
		return &l, ok
	})
}

// toOrigin routes by the last x-death entry; ladderOf reports whether an
// exchange is a ladder's and, when its shape is known, which ladder.
func toOrigin(ladderOf func(exchange string) (*topology.Ladder, bool)) Router {
	return func(d Delivery) (Route, error) {
		deaths, err := topology.ParseDeaths(d.Headers)
		if err != nil {
			return Route{}, err
		}
		// Parked by rungs, and not dead-lettered since: back to the queue it
		// was parked from.
		if q, ok := d.Headers[topology.HeaderQueue].(string); ok && q != "" {
			at, stamped := topology.HeaderTime(d.Headers[topology.HeaderParkedAt])
			if len(deaths) == 0 || stamped && !deaths[0].Time.After(at) {
				return Route{RoutingKey: q}, nil
			}
		}
		var r Route
		switch {
		case len(deaths) > 0:
			last := deaths[0]
			r = Route{Exchange: last.Exchange, RoutingKey: last.Queue}
			if len(last.RoutingKeys) > 0 {
				r.RoutingKey = last.RoutingKeys[0]
			}
		case d.Exchange != "":
			// Never dead-lettered, yet it came through a ladder's exchange:
			// that exchange's alternate (the ladder's unroutable queue) took
			// it because nothing was bound for its key then, as when a
			// publish or a rung's dead-lettering beats a restarting node's
			// bindings. Its exchange and key are where it came from; sent
			// there again it waits out the delay its key spells from that
			// point: late, never early.
			if _, ok := ladderOf(d.Exchange); !ok {
				return Route{}, ErrNoOrigin
			}
			r = Route{Exchange: d.Exchange, RoutingKey: d.RoutingKey}
		default:
			return Route{}, ErrNoOrigin
		}
		if r.Exchange == "" {
			return r, nil
		}
		key := r.RoutingKey
		l, ok := ladderOf(r.Exchange)
		r.SaveDeath = ok
		if ok && l != nil && l.RoutesByBCC() {
			if r.BCC, err = l.KeyBCC(key); err != nil {
				return Route{}, fmt.Errorf("back into ladder %s: %w", l.Name, err)
			}
		}
		return r, nil
	}
}
