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

// toJSONDelays is the inventories in --json (ui.DelaysJSON).
func toJSONDelays(invs []topology.Inventory) any { return ui.DelaysJSON(invs) }

// jsonRetryQueue is a quorum queue under delayed retry in --json
// (ui.JSONRetryQueue).
type jsonRetryQueue = ui.JSONRetryQueue
