package topology

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bases of a delay queue message's estimate, beside BasisDeath and
// BasisNone.
const (
	// BasisExpiration: the message carries its own expiration and a
	// timestamp, which the publisher sets together as it sends it into the
	// queue (goqueue's retry tiers do), and nothing later is recorded.
	BasisExpiration Basis = "timestamp+expiration"
)

// DelayMove moves the messages waiting in delay queues outside ladders
// (an Inventory's groups) into a ladder, each with the delay it has left,
// to the queue its dead-lettering would have taken it to.
type DelayMove struct {
	To Ladder
	// Margin is added to the uncertainty of recorded times, as in
	// Ladder.EstimateRemaining.
	Margin time.Duration
}

// DelayMessage is a message taken from a delay queue.
type DelayMessage struct {
	Queue      DelayQueue
	Key        string // its routing key
	Headers    map[string]any
	Timestamp  time.Time // zero if unset
	Expiration string    // the expiration property, in ms; "" if unset
}

// EstimateDelay works out how long a message in a delay queue still has to
// wait, never less than the truth (as long as Margin holds), so that it is
// never delivered early. Its TTL there is the queue's x-message-ttl, or its
// own expiration where that is shorter or the queue has none. The time it
// has spent in the queue is a lower bound, from the recorded time of the
// event that put it there:
//
//   - BasisDeath: x-death's latest entry is the message's first death out
//     of another queue (count 1), whose dead-lettering routes into this
//     one (route says where a queue's dead-lettering leads), and nothing
//     later is recorded. x-death keeps the first time of repeated deaths,
//     so a count above 1 says nothing about this entry.
//   - BasisExpiration: the message has an expiration and a timestamp, set
//     together by the publisher as it sent it here, and nothing later is
//     recorded.
//
// Otherwise (a message published straight into a queue TTL, whose
// timestamp, if any, a library may have copied from an older message)
// it is taken to have just entered: it can be late by up to its TTL, never
// early.
func EstimateDelay(m DelayMessage, now time.Time, margin time.Duration, route func(exchange, key string) []string) (Estimate, error) {
	ttl, per := m.Queue.TTL, m.Queue.PerMessage
	if m.Expiration != "" {
		ms, err := strconv.ParseInt(m.Expiration, 10, 64)
		if err != nil || ms < 0 {
			return Estimate{}, fmt.Errorf("expiration %q is not a number of ms", m.Expiration)
		}
		if exp := time.Duration(ms) * time.Millisecond; per || exp < ttl {
			ttl, per = exp, false
		}
	}
	if per {
		return Estimate{}, fmt.Errorf("no TTL: queue %s has none and the message no expiration", m.Queue.Name)
	}
	e := Estimate{Rung: Rung{Queue: m.Queue.Name, TTL: ttl}, Total: ttl, OnPath: true, Basis: BasisNone}
	e.Anchor, e.Basis, e.Why = delayAnchor(m, route)
	if e.Basis != BasisNone {
		e.Spent = now.Sub(e.Anchor.Add(time.Second + max(margin, 0)))
	}
	e.Spent = min(max(e.Spent, 0), ttl)
	e.Remaining = ttl - e.Spent
	return e, nil
}

func delayAnchor(m DelayMessage, route func(exchange, key string) []string) (time.Time, Basis, string) {
	deaths, err := ParseDeaths(m.Headers)
	if err != nil {
		return time.Time{}, BasisNone, err.Error()
	}
	var latest time.Time
	later := func(t time.Time, ok bool) {
		if ok && t.After(latest) {
			latest = t
		}
	}
	later(HeaderTime(m.Headers[HeaderReplayedAt]))
	later(HeaderTime(m.Headers[HeaderParkedAt]))
	for _, d := range deaths {
		later(d.Time, !d.Time.IsZero())
	}
	ts := m.Timestamp.UTC().Truncate(time.Second)
	later(ts, !m.Timestamp.IsZero())
	fresh := func(t time.Time) bool { return !t.IsZero() && !latest.After(t) }

	if len(deaths) > 0 {
		d := deaths[0]
		switch {
		case d.Queue == m.Queue.Name:
			// It expired from here before and came back: when is not recorded.
		case d.Count != 1:
			return time.Time{}, BasisNone, fmt.Sprintf("x-death: %s, whose time is its first", d)
		case !fresh(d.Time):
			return time.Time{}, BasisNone, "handled again after its last death"
		default:
			if leadsHere(d, m.Queue.Name, route) {
				return d.Time, BasisDeath, ""
			}
			return time.Time{}, BasisNone, "x-death's latest queue " + d.Queue + " does not dead-letter here"
		}
	}
	if m.Expiration != "" && !m.Timestamp.IsZero() {
		if fresh(ts) {
			return ts, BasisExpiration, ""
		}
		return time.Time{}, BasisNone, "handled again after it was published"
	}
	return time.Time{}, BasisNone, "nothing records when it entered the queue"
}

// leadsHere reports whether a death out of d.Queue is routed into queue.
func leadsHere(d Death, queue string, route func(exchange, key string) []string) bool {
	if route == nil {
		return false
	}
	for _, q := range route("\x00"+d.Queue, strings.Join(d.RoutingKeys, "\x00")) {
		if q == queue {
			return true
		}
	}
	return false
}

// DeadLetterRoute is the route function EstimateDelay and PlaceDelay use
// over a snapshot: for a queue ("\x00" + name, with the message's keys
// joined by "\x00"), where its dead-lettering leads; for an exchange and a
// key, where a publish leads.
func DeadLetterRoute(s Snapshot) func(exchange, key string) []string {
	g := NewGraph(s)
	return func(ex, key string) []string {
		if name, ok := strings.CutPrefix(ex, "\x00"); ok {
			q, found := s.Queue(name)
			dlx, dl := q.DeadLetterExchange()
			if !found || !dl {
				return nil
			}
			keys := strings.Split(key, "\x00")
			if k, ok := q.Args["x-dead-letter-routing-key"].(string); ok {
				keys = []string{k}
			}
			qs, _, _ := g.Route(dlx, keys[0], keys[1:]...)
			return qs
		}
		qs, _, _ := g.Route(ex, key)
		return qs
	}
}

// PlaceDelay works out where one message of a delay queue goes in the
// ladder: the queue its dead-lettering leads to (which must be a target of
// the ladder), with its remaining delay rounded up to the ladder's unit.
// A message it cannot place has Park set, worded to group alike ones.
func (g DelayMove) PlaceDelay(m DelayMessage, now time.Time, route func(exchange, key string) []string) Placement {
	est, err := EstimateDelay(m, now, g.Margin, route)
	p := Placement{Estimate: est}
	if err != nil {
		p.Park = err.Error()
		return p
	}
	key := m.Queue.DeadLetterKey
	if m.Queue.KeepsKey {
		key = m.Key
	}
	dests := route(m.Queue.DeadLetterExchange, key)
	switch len(dests) {
	case 0:
		p.Park = fmt.Sprintf("its dead-letter route (%s) reaches no queue", m.Queue.DeadLetterTo())
		return p
	case 1:
	default:
		p.Park = fmt.Sprintf("its dead-letter route reaches %d queues (%s); a ladder delivers to one", len(dests), strings.Join(dests, ", "))
		return p
	}
	p.Dest = dests[0]
	p.Estimate.Dest = p.Dest
	tr, err := g.To.Place(est.Remaining, p.Dest)
	switch {
	case err == nil:
		p.Trace = tr
	case errors.Is(err, ErrNotBound):
		p.Park = fmt.Sprintf("destination %s is not bound to ladder %s (apply it with that target)", p.Dest, g.To.Name)
	default:
		p.Park = fmt.Sprintf("ladder %s cannot take it: %v", g.To.Name, err)
	}
	return p
}
