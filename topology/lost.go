package topology

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// A lost route is a destination a ladder's messages are addressed to whose
// route, from where the ladder lets a due message go, reaches no queue:
// its queue, its binding or the exchange between was deleted (an endpoint
// retired, a worker's queue removed). A quorum rung with at-least-once
// dead-lettering then keeps such a message expired for ever, retrying a
// route that does not exist, which looks exactly like the broker's stall
// bug (rabbitmq-server #12625) to anyone reading messages_dlx; rungs' own
// ladders keep it in their unroutable queue instead. Either way no restart
// moves it: only a route, or a parking queue, does.
//
// Which destinations a ladder serves comes from what the broker still
// holds of them: Celery's and NServiceBus' endpoint exchanges bound to the
// delivery exchange outlive the endpoint's queue, and the targets bound to
// rungs' own ladders. The routing keys of what sits in an unroutable queue
// add the destinations whose every trace is gone (LostRoutes' dests).

// LostRoute is one destination of a ladder whose route reaches no queue.
type LostRoute struct {
	Dest string
	// Queue is the queue a message for Dest should end in.
	Queue string
	// Gone is what went missing: "queue" (the destination's queue does not
	// exist) or "binding" (it exists, nothing routes to it).
	Gone string
	// Exchange is the exchange a message for Dest leaves the ladder by
	// (the delivery exchange, or the endpoint's exchange when it remains).
	Exchange string
	// Restore says what puts the route back, for the ladder's family.
	Restore string
}

// Evidence says what is gone in a few words.
func (r LostRoute) Evidence() string {
	if r.Dest == "" {
		return r.Exchange + " binds no destination"
	}
	if r.Gone == "queue" {
		return "queue " + r.Queue + " is gone"
	}
	return "queue " + r.Queue + " has no binding from " + r.Exchange
}

// LostRoutes lists the destinations of the ladder, its targets and dests
// (destinations read from messages), whose route from the ladder's exit
// reaches no queue in snap, sorted by destination. A message for a
// destination routes with no delay left: every rung's route to it ends in
// the same exchanges, so a destination lost for one rung is lost for all.
func (l Ladder) LostRoutes(snap Snapshot, dests ...string) []LostRoute {
	seen := map[string]bool{}
	all := append(append([]string(nil), l.Targets...), dests...)
	g := NewGraph(snap)
	var out []LostRoute
	for _, d := range all {
		if d == "" || seen[d] {
			continue
		}
		seen[d] = true
		tr, err := l.Trace(0, d)
		if err != nil {
			continue
		}
		steps, err := g.Walk(tr.Exchange, tr.Key, tr.BCC...)
		if err == nil && len(steps) > 0 && steps[len(steps)-1].Queue == tr.Target {
			continue
		}
		if err != nil && !errors.Is(err, ErrNoRoute) {
			// An ambiguous route or an unknown entry is another finding
			// (drift, the delays section), not a lost destination.
			continue
		}
		out = append(out, l.lostRoute(snap, d, tr.Target))
	}
	if len(out) == 0 {
		if r, ok := l.deliveryBindsNothing(snap); ok {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dest < out[j].Dest })
	return out
}

// deliveryBindsNothing is the lost route of a Celery or NServiceBus ladder
// whose delivery exchange binds no destination at all: every message due
// reaches no queue. A destination bound straight to the delivery exchange
// (NServiceBus' direct routing topology) takes its only trace with it when
// its queue is deleted, so its name is unknown: Dest is "".
func (l Ladder) deliveryBindsNothing(snap Snapshot) (LostRoute, bool) {
	var delivery, restore, dest string
	switch l.Layout {
	case "celery":
		delivery, dest = l.Name+"_delayed_delivery", "<queue>"
		restore = fmt.Sprintf("start the Celery workers: kombu binds each task queue's exchange to %s with \"#.<queue>\" (kombu #2252)", delivery)
	case "nsb", "nsb1":
		delivery, dest = strings.TrimSuffix(l.Entry0(), "level-00")+"delivery", "<endpoint>"
		restore = fmt.Sprintf("start the endpoints: NServiceBus binds each endpoint's exchange (or queue) to %s with \"#.<endpoint>\"", delivery)
	default:
		return LostRoute{}, false
	}
	// Nothing names the destination: the binding that restores one, with
	// its name left for the operator to fill in.
	vh := ""
	if snap.Vhost != "" && snap.Vhost != "/" {
		vh = " -V " + snap.Vhost
	}
	restore += fmt.Sprintf("; or, for each, rabbitmqadmin%s declare queue name=%s durable=true, then rabbitmqadmin%s declare binding source=%s destination=%s routing_key='#.%s'",
		vh, dest, vh, delivery, dest, dest)
	if _, ok := snap.Exchange(delivery); !ok {
		return LostRoute{}, false
	}
	for _, b := range snap.Bindings {
		if b.Source == delivery {
			return LostRoute{}, false
		}
	}
	return LostRoute{Gone: "binding", Exchange: delivery, Restore: restore}, true
}

// lostRoute says what is gone of dest's route and what restores it, in the
// terms of the library that declared it.
func (l Ladder) lostRoute(snap Snapshot, dest, queue string) LostRoute {
	r := LostRoute{Dest: dest, Queue: queue, Gone: "binding"}
	if _, ok := snap.Queue(queue); !ok {
		r.Gone = "queue"
	}
	vh := ""
	if snap.Vhost != "" && snap.Vhost != "/" {
		vh = " -V " + snap.Vhost
	}
	declare := ""
	if r.Gone == "queue" {
		declare = fmt.Sprintf("rabbitmqadmin%s declare queue name=%s durable=true, then ", vh, queue)
	}
	switch l.Layout {
	case "celery":
		// kombu binds the queue's exchange to the delivery exchange and the
		// queue to its exchange, both with "#.<routing key>".
		r.Exchange = dest
		if _, ok := snap.Exchange(dest); !ok {
			r.Exchange = l.Name + "_delayed_delivery"
		}
		r.Restore = fmt.Sprintf("start a Celery worker consuming from %s (kombu declares and binds it), or %srabbitmqadmin%s declare binding source=%s destination=%s routing_key='#.%s'",
			queue, declare, vh, r.Exchange, queue, dest)
	case "nsb", "nsb1":
		// NServiceBus' conventional topology routes through the endpoint's
		// exchange, bound to its queue with "": the direct one binds the
		// queue to the delivery exchange with "#.<endpoint>".
		delivery := strings.TrimSuffix(l.Entry0(), "level-00") + "delivery"
		key := "'#." + dest + "'"
		r.Exchange = delivery
		if x, ok := snap.Exchange(dest); ok && x.Name != "" {
			r.Exchange, key = dest, "''"
		}
		r.Restore = fmt.Sprintf("start the %s endpoint (NServiceBus declares its queue and binding), or %srabbitmqadmin%s declare binding source=%s destination=%s routing_key=%s",
			dest, declare, vh, r.Exchange, queue, key)
	default:
		r.Exchange = l.Name + ".deliver"
		r.Restore = fmt.Sprintf("rungs apply --ladder %s --target %s (declares the queue and binds it)", l.Name, dest)
	}
	return r
}

// Entry0 is the exchange a message with no delay left enters by.
func (l Ladder) Entry0() string {
	x, _ := l.Entry(0)
	return x
}

// LostNames joins the destinations of lost routes for a sentence.
func LostNames(rs []LostRoute) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Dest
		if r.Dest == "" {
			names[i] = "every destination"
		}
	}
	return strings.Join(names, ", ")
}
