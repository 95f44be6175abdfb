package health

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rungs-dev/rungs/topology"
)

// DelayFinding is one way a vhost's delays lose or misroute messages, on
// the release it runs or on the one it is going to.
type DelayFinding struct {
	// Object names the queue, exchange or ladder, with its kind.
	Object string
	Risk   string
	Fix    string
	// Today is true when it holds on the running release, OnTarget when it
	// holds on the target release (false without one).
	Today, OnTarget bool
	// Severity is Problem when messages are lost or stuck, Warning when
	// they may be.
	Severity Severity
}

// Releases the findings turn on.
var (
	release40 = topology.Version{Major: 4}
	release43 = topology.Version{Major: 4, Minor: 3}
)

// at reports whether v is known and at least from.
func at(v, from topology.Version) bool { return v.Known() && !v.Less(from) }

// DelayFindings checks a vhost's delays (its inventory, the snapshot it
// was taken from and the ladders found there) against the running release
// and, when target is known, the release it is going to. Only findings that
// hold on one of them are returned, sorted by object, then risk.
//
//   - delayed-message plugin exchanges: the plugin keeps its messages in
//     Mnesia, which RabbitMQ 4.3 removed; it cannot start there.
//   - transient (non-durable) delay queues: their messages are gone after a
//     restart, and a transient queue that is not exclusive is a deprecated
//     feature (transient_nonexcl_queues): 4.3.6 still permits it by
//     default (measured), a broker whose operator denies it refuses the
//     library's declare, and a later release removes it.
//   - quorum delay queues with x-expires: a quorum queue's expiry is not
//     renewed when the queue is redeclared, only when it is used, so a
//     library that relies on redeclaring (Symfony, Laravel) has the queue
//     deleted with the messages still waiting in it (symfony #57867,
//     laravel-queue-rabbitmq #627).
//   - quorum delivery limits: from 4.0 a quorum queue dead-letters (or
//     drops, with no dead-letter exchange) a message handed back more than
//     its limit, 20 by default; a destination a delay path leads to
//     applies it to every retry that requeues.
//   - Celery: a delivery exchange that binds nothing (every delayed
//     message stays in level 0, kombu #2252), a destination the delivery
//     exchange binds whose queue the final key does not reach, and
//     over-broad "#.*" or "#" bindings that copy every delayed message.
//   - NServiceBus on 4.x: its quorum queues get the default delivery limit,
//     which a policy cannot turn off (NServiceBus.RabbitMQ #1688, #1828).
func DelayFindings(inv topology.Inventory, snap topology.Snapshot, ladders []topology.Found, running, target topology.Version) []DelayFinding {
	var out []DelayFinding
	add := func(f DelayFinding) {
		if f.Today || f.OnTarget {
			out = append(out, f)
		}
	}
	for _, p := range inv.Plugins {
		held := "its delayed messages"
		if p.Reported {
			held = topology.Counted(p.Delayed, "delayed message", "delayed messages")
		}
		add(DelayFinding{
			Object:   "exchange " + p.Name,
			Risk:     fmt.Sprintf("a delayed-message plugin exchange: the plugin keeps %s in Mnesia, which RabbitMQ 4.3 removed, so it cannot start there and they are lost; the plugin is archived", held),
			Fix:      pluginFix(p),
			Today:    at(running, release43),
			OnTarget: at(target, release43),
			Severity: Problem,
		})
	}
	g := topology.NewGraph(snap)
	for _, grp := range inv.Groups {
		for _, q := range grp.Queues {
			obj := "queue " + q.Name + " (" + grp.ID() + ")"
			if !q.Durable {
				add(DelayFinding{
					Object:   obj,
					Risk:     fmt.Sprintf("transient (non-durable) delay queue: its %s are lost on a restart, and transient non-exclusive queues are a deprecated feature (transient_nonexcl_queues: still permitted by default on 4.3.6, refused where an operator denies it, to be removed), so the application's declare will fail", topology.Counted(q.Messages, "message", "messages")),
					Fix:      "declare it durable (Sneakers: queue_options durable: true), or move the delays into a ladder with rungs migrate --from-delays",
					Today:    true,
					OnTarget: target.Known(),
					Severity: Warning,
				})
			}
			if q.Type == topology.Quorum && q.Expires > 0 {
				add(DelayFinding{
					Object:   obj,
					Risk:     fmt.Sprintf("quorum delay queue with x-expires %s: redeclaring a quorum queue does not renew its expiry, so it is deleted with the messages still waiting in it", topology.FormatDelay(q.Expires)),
					Fix:      "declare delay queues classic, or without x-expires, or move them into a ladder (rungs migrate --from-delays)",
					Today:    true,
					OnTarget: target.Known(),
					Severity: Problem,
				})
			}
			for _, dest := range q.Destinations {
				if f, ok := deliveryLimit(snap, dest, "the delay path of "+q.Name, running, target); ok {
					add(f)
				}
			}
		}
	}
	for _, f := range ladders {
		switch f.Ladder.Layout {
		case "celery":
			out = append(out, celeryFindings(f.Ladder, snap, g)...)
		case "nsb":
			l := f.Ladder
			if l.QueueType != topology.Quorum {
				continue
			}
			add(DelayFinding{
				Object:   "ladder " + l.Name + " (NServiceBus)",
				Risk:     "on RabbitMQ 4.0 and later every quorum queue has a delivery limit (20 by default) that a policy cannot turn off; NServiceBus' endpoint queues then dead-letter or drop a message its recoverability hands back more often (NServiceBus.RabbitMQ #1688, #1828)",
				Fix:      "declare the endpoint queues with x-delivery-limit -1 (an argument; recreate them), or keep retries below the limit",
				Today:    at(running, release40),
				OnTarget: at(target, release40),
				Severity: Warning,
			})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Object != out[j].Object {
			return out[i].Object < out[j].Object
		}
		return out[i].Risk < out[j].Risk
	})
	return out
}

// deliveryLimit is the finding for a quorum queue a delay path leads to,
// when a delivery limit applies there.
func deliveryLimit(snap topology.Snapshot, name, via string, running, target topology.Version) (DelayFinding, bool) {
	q, ok := snap.Queue(name)
	if !ok || q.QueueType() != topology.Quorum {
		return DelayFinding{}, false
	}
	limitOn := func(v topology.Version) int {
		if !v.Known() {
			return 0
		}
		if n, ok := topology.NormalizeArg(q.Args["x-delivery-limit"]).(int64); ok {
			return v.DeliveryLimitOf(n)
		}
		return v.QuorumDefaultDeliveryLimit()
	}
	now, then := limitOn(running), limitOn(target)
	if now == 0 && then == 0 {
		return DelayFinding{}, false
	}
	limit := now
	if limit == 0 {
		limit = then
	}
	where := "dropped (it has no dead-letter exchange)"
	if dlx, ok := q.DeadLetterExchange(); ok {
		where = "dead-lettered to " + orDefault(dlx)
	}
	n := fmt.Sprintf("%d times", limit)
	if limit < 0 {
		n = "once"
	}
	return DelayFinding{
		Object:   "queue " + name,
		Risk:     fmt.Sprintf("quorum queue at the end of %s with a delivery limit: a message handed back more than %s is %s, so retries that requeue end early", via, n, where),
		Fix:      "set x-delivery-limit to what the retries need (or -1 on 4.0+ for none) when declaring it, or retry through delays rather than requeues",
		Today:    now != 0,
		OnTarget: then != 0,
		Severity: Warning,
	}, true
}

func orDefault(x string) string {
	if x == "" {
		return "the default exchange"
	}
	return x
}

// celeryFindings checks a Celery ladder's delivery bindings: they hold on
// every release.
func celeryFindings(l topology.Ladder, snap topology.Snapshot, g *topology.Graph) []DelayFinding {
	var out []DelayFinding
	delivery := l.Name + "_delayed_delivery"
	obj := "exchange " + delivery + " (Celery ladder " + l.Name + ")"
	var keys []string
	for _, b := range snap.Bindings {
		if b.Source != delivery {
			continue
		}
		keys = append(keys, b.RoutingKey)
		if b.RoutingKey == "#" || strings.HasPrefix(b.RoutingKey, "#.") && strings.Contains(strings.TrimPrefix(b.RoutingKey, "#."), "*") || b.RoutingKey == "#.#" {
			out = append(out, DelayFinding{
				Object: obj,
				Risk:   fmt.Sprintf("binding %q to %s matches every delayed message's key, so it gets a copy of every delayed retry of every task", b.RoutingKey, b.Destination),
				Fix:    fmt.Sprintf("unbind it and bind %s with \"#.<its routing key>\" (a task routed with a \"*\" key made it)", b.Destination),
				Today:  true, Severity: Problem,
			})
		}
	}
	if len(keys) == 0 {
		out = append(out, DelayFinding{
			Object: obj,
			Risk:   "the delivery exchange binds nothing: every delayed message leaves level 0 for nowhere (a quorum level 0 keeps it, expired, forever; kombu #2252)",
			Fix:    "bind each worker's exchange to " + delivery + " with \"#.<routing key>\" (kombu 5.5's native delayed delivery does it when a worker starts), then rungs unstall or replay what waits",
			Today:  true, Severity: Problem,
		})
	}
	for _, t := range l.Targets {
		// The key a message for t has when it leaves level 0: 28 zero
		// digits, then t.
		key := strings.Repeat("0.", 28) + t
		qs, _, err := g.Route(delivery, key)
		if err == nil && len(qs) > 0 {
			continue
		}
		out = append(out, DelayFinding{
			Object: obj,
			Risk:   fmt.Sprintf("a message delayed for %s reaches no queue when it is due: %s's queue is not bound with \"#.%s\" (kombu #2252)", t, t, t),
			Fix:    fmt.Sprintf("bind the queue to exchange %s with \"#.%s\"", t, t),
			Today:  true, Severity: Problem,
		})
	}
	return out
}

// pluginFix is the bridge recipe (docs/bridge.md) for a plugin exchange:
// its producers keep their code and change the exchange's name.
func pluginFix(p topology.PluginExchange) string {
	typ := p.DelayedType
	if typ == "" {
		typ = "direct"
	}
	return fmt.Sprintf("before upgrading, bridge it (docs/bridge.md): rungs bridge --exchange %s.bridged --type %s --copy-bindings-from %s --yes; switch its producers to exchange %s.bridged (configuration, not code: they keep x-delay); let %s drain (messages_delayed 0), then delete it and disable the plugin",
		p.Name, typ, p.Name, p.Name, p.Name)
}
