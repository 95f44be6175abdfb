package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// printDelays writes the inventories under the ladders' table.
func (v view) printDelays(invs []topology.Inventory) {
	for _, inv := range invs {
		if inv.Empty() {
			fmt.Fprintf(v.Out, "\nno delays outside ladders in vhost %s\n", inv.Vhost)
			continue
		}
		fmt.Fprintf(v.Out, "\ndelays outside ladders in vhost %s: %s\n", inv.Vhost, topology.Counted(inv.Queues(), "queue", "queues"))
		w := table(v.Out)
		fmt.Fprintln(w, "  group\tqueues\tdelays\twaiting\toldest\tdead-letter to")
		for _, g := range inv.Groups {
			fmt.Fprintf(w, "  %s\t%d\t%s\t%s\t%s\t%s\n", g.ID(), len(g.Queues), delaysText(g), topology.FormatCount(g.Messages), oldestText(g), strings.Join(g.DeadLetterTo, "; "))
		}
		_ = w.Flush()
		for _, g := range inv.Groups {
			for _, q := range g.Queues {
				if q.Consumers > 0 {
					fmt.Fprintf(v.Out, "  warning: %s has %s: they take its messages before their delay (or left less than a statistics interval ago)\n",
						q.Name, topology.Counted(q.Consumers, "consumer", "consumers"))
				}
			}
		}
		for _, p := range inv.Plugins {
			n := "messages_delayed not reported"
			if p.Reported {
				n = topology.FormatCount(p.Delayed) + " delayed"
			}
			fmt.Fprintf(v.Out, "  plugin exchange %s (x-delayed-message, routes as %s): %s\n", p.Name, orDash(p.DelayedType), n)
		}
	}
	for _, inv := range invs {
		if r := ui.RetryText(health.NewRetryHold(inv.Retry, inv.RetryRead), v.width()); r != "" {
			fmt.Fprintf(v.Out, "\nin vhost %s:\n%s", inv.Vhost, r)
		}
	}
}

// delaysText is a group's delays: the first three and how many more.
func delaysText(g topology.DelayGroup) string {
	ts := g.DelayLabels(topology.FormatDelay, "per message")
	if len(ts) > 4 {
		return strings.Join(ts[:3], " ") + fmt.Sprintf(" +%d", len(ts)-3)
	}
	return strings.Join(ts, " ")
}

func oldestText(g topology.DelayGroup) string {
	if g.Oldest <= 0 {
		return "-"
	}
	return topology.FormatSpan(g.Oldest.Truncate(time.Second))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type jsonDelayQueue struct {
	Name               string   `json:"name"`
	TTLMS              int64    `json:"ttl_ms"`
	PerMessage         bool     `json:"per_message_ttl"`
	DeadLetterExchange string   `json:"dead_letter_exchange"`
	DeadLetterKey      *string  `json:"dead_letter_routing_key"` // null: each message's own key
	ExpiresMS          int64    `json:"expires_ms,omitempty"`
	Type               string   `json:"type"`
	Durable            bool     `json:"durable"`
	DeliveryLimit      int64    `json:"delivery_limit,omitempty"`
	Messages           int64    `json:"messages"`
	OldestMS           int64    `json:"oldest_ms"`
	Destinations       []string `json:"destinations"`
	// Consumers on a delay queue take its messages before their delay,
	// or left less than a statistics interval ago.
	Consumers int64 `json:"consumers"`
}

// toJSONDelays is the inventories in --json.
func toJSONDelays(invs []topology.Inventory) any {
	out := []map[string]any{}
	for _, inv := range invs {
		groups := []map[string]any{}
		for _, g := range inv.Groups {
			qs := []jsonDelayQueue{}
			for _, q := range g.Queues {
				jq := jsonDelayQueue{
					Name: q.Name, TTLMS: q.TTL.Milliseconds(), PerMessage: q.PerMessage,
					DeadLetterExchange: q.DeadLetterExchange, ExpiresMS: q.Expires.Milliseconds(),
					Type: string(q.Type), Durable: q.Durable, DeliveryLimit: q.DeliveryLimit,
					Messages: q.Messages, OldestMS: q.Oldest.Milliseconds(), Destinations: append([]string{}, q.Destinations...),
					Consumers: q.Consumers,
				}
				if !q.KeepsKey {
					k := q.DeadLetterKey
					jq.DeadLetterKey = &k
				}
				qs = append(qs, jq)
			}
			groups = append(groups, map[string]any{
				"id": g.ID(), "app": g.App, "name": g.Name, "queues": qs, "messages": g.Messages,
				"oldest_ms": g.Oldest.Milliseconds(), "dead_letter_to": g.DeadLetterTo,
			})
		}
		plugins := []map[string]any{}
		for _, p := range inv.Plugins {
			var n *int64
			if p.Reported {
				v := p.Delayed
				n = &v
			}
			plugins = append(plugins, map[string]any{"name": p.Name, "delayed_type": p.DelayedType, "durable": p.Durable, "messages_delayed": n})
		}
		out = append(out, map[string]any{"vhost": inv.Vhost, "groups": groups, "plugin_exchanges": plugins,
			"delayed_retry": toJSONRetry(inv.Retry), "delayed_retry_read": inv.RetryRead})
	}
	return out
}

// jsonRetryQueue is a quorum queue under delayed retry in --json.
type jsonRetryQueue struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	MinMS int64  `json:"min_ms"`
	MaxMS int64  `json:"max_ms,omitempty"`
	// Source is argument, policy or operator policy; Policy names it.
	Source string `json:"source"`
	Policy string `json:"policy,omitempty"`
	// Ignored: the release does not honour the source (4.3.0's policies).
	Ignored bool `json:"ignored,omitempty"`
	// MessagesDelayed is null where the broker reported no figure.
	MessagesDelayed *int64 `json:"messages_delayed"`
	Ready           int64  `json:"ready"`
	Unacked         int64  `json:"unacked"`
	DeliveryLimit   *int   `json:"delivery_limit"` // null: unknown; 0: none
	Consumers       int64  `json:"consumers"`
}

func toJSONRetry(qs []topology.RetryQueue) []jsonRetryQueue {
	out := []jsonRetryQueue{}
	for _, q := range qs {
		jq := jsonRetryQueue{Name: q.Name, Type: q.Type, MinMS: q.Min.Milliseconds(), MaxMS: q.Max.Milliseconds(),
			Source: q.Source, Policy: q.Policy, Ignored: q.Ignored, Ready: q.Ready, Unacked: q.Unacked, Consumers: q.Consumers}
		if q.Reported {
			n := q.Delayed
			jq.MessagesDelayed = &n
		}
		if q.LimitKnown {
			n := q.DeliveryLimit
			jq.DeliveryLimit = &n
		}
		out = append(out, jq)
	}
	return out
}
