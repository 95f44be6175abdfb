package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// StatusText is rungs status: each ladder's rungs (idle ones folded
// unless all), forecast and drain, then what delayed retry holds, the
// storm judged as one and the bridges.
func StatusText(rep health.Report, bridges []topology.Bridge, vhost string, all bool, width int) string {
	var b strings.Builder
	retry := RetryText(rep.Retry, width) + RetryScopeText(rep.Retry, width)
	if len(rep.Ladders) == 0 {
		fmt.Fprintf(&b, "no ladders in vhost %s\n", vhost)
		if retry != "" {
			fmt.Fprint(&b, "\n", retry)
		}
		b.WriteString(BridgeLinesText(bridges))
		return b.String()
	}
	for i, lr := range rep.Ladders {
		if i > 0 {
			fmt.Fprintln(&b)
		}
		b.WriteString(statusLadderText(lr, all, width))
	}
	if retry != "" {
		fmt.Fprint(&b, "\n", retry)
	}
	// The storm judged as one, where it is both a ladder's backlog and
	// messages delayed retry holds: each part above says its own.
	if st := rep.Storm(); st.Backlog > 0 && st.Held > 0 {
		fmt.Fprint(&b, "\n", StormText(st, width))
	}
	b.WriteString(BridgeLinesText(bridges))
	return b.String()
}

// statusLadderText is one ladder's table, then its forecast, drain and
// destinations where each has something to say.
func statusLadderText(lr health.LadderReport, all bool, width int) string {
	var b strings.Builder
	rows, folded := health.StatusRows(lr, all)
	b.WriteString(LadderText(lr, rows, folded, width))
	if lr.Forecast.Messages > 0 {
		fmt.Fprint(&b, "\n", ForecastText(lr.Forecast, width))
	}
	if d := DrainText(lr.Totals, lr.Drain, width); d != "" {
		fmt.Fprint(&b, "\n", d)
	}
	if d := DestText(lr.Drain, width); d != "" {
		fmt.Fprint(&b, "\n", d)
	}
	return b.String()
}

// BridgeLinesText is a line per bridge, after a blank line; nothing
// without bridges.
func BridgeLinesText(bs []topology.Bridge) string {
	var b strings.Builder
	if len(bs) > 0 {
		fmt.Fprintln(&b)
	}
	for _, br := range bs {
		fmt.Fprintln(&b, br.Describe())
	}
	return b.String()
}

// DelaysText is discover --delays' inventories, under the ladders'
// table: each vhost's groups, the consumers that take a delay queue's
// messages early, the plugin's exchanges, then what delayed retry holds.
func DelaysText(invs []topology.Inventory, width int) string {
	var b strings.Builder
	for _, inv := range invs {
		b.WriteString(inventoryText(inv))
	}
	for _, inv := range invs {
		if r := RetryText(health.NewRetryHold(inv.Retry, inv.RetryRead), width); r != "" {
			fmt.Fprintf(&b, "\nin vhost %s:\n%s", inv.Vhost, r)
		}
	}
	return b.String()
}

// inventoryText is one vhost's delays outside ladders.
func inventoryText(inv topology.Inventory) string {
	var b strings.Builder
	if inv.Empty() {
		fmt.Fprintf(&b, "\nno delays outside ladders in vhost %s\n", inv.Vhost)
		return b.String()
	}
	fmt.Fprintf(&b, "\ndelays outside ladders in vhost %s: %s\n", inv.Vhost, topology.Counted(inv.Queues(), "queue", "queues"))
	w := TextTable(&b)
	fmt.Fprintln(w, "  group\tqueues\tdelays\twaiting\toldest\tdead-letter to")
	for _, g := range inv.Groups {
		fmt.Fprintf(w, "  %s\t%d\t%s\t%s\t%s\t%s\n", g.ID(), len(g.Queues), delayLabelsText(g), topology.FormatCount(g.Messages), delayOldestText(g), strings.Join(g.DeadLetterTo, "; "))
	}
	_ = w.Flush()
	for _, g := range inv.Groups {
		for _, q := range g.Queues {
			if q.Consumers > 0 {
				fmt.Fprintf(&b, "  warning: %s has %s: they take its messages before their delay (or left less than a statistics interval ago)\n",
					q.Name, topology.Counted(q.Consumers, "consumer", "consumers"))
			}
		}
	}
	for _, p := range inv.Plugins {
		n := "messages_delayed not reported"
		if p.Reported {
			n = topology.FormatCount(p.Delayed) + " delayed"
		}
		fmt.Fprintf(&b, "  plugin exchange %s (x-delayed-message, routes as %s): %s\n", p.Name, orHyphen(p.DelayedType), n)
	}
	return b.String()
}

// delayLabelsText is a group's delays: the first three and how many more.
func delayLabelsText(g topology.DelayGroup) string {
	ts := g.DelayLabels(topology.FormatDelay, "per message")
	if len(ts) > 4 {
		return strings.Join(ts[:3], " ") + fmt.Sprintf(" +%d", len(ts)-3)
	}
	return strings.Join(ts, " ")
}

func delayOldestText(g topology.DelayGroup) string {
	if g.Oldest <= 0 {
		return "-"
	}
	return topology.FormatSpan(g.Oldest.Truncate(time.Second))
}

// ChecksText is doctor's findings: those of one area together, areas in
// the order they first came up (a ladder's needs are judged after it is
// found), then how many problems.
func ChecksText(checks []ops.Finding, problems int) string {
	var b strings.Builder
	marks := map[string]string{ops.FindingOK: "✓", ops.FindingInfo: "·", ops.FindingWarn: "!", ops.FindingProblem: "✗"}
	var areas []string
	byArea := map[string][]ops.Finding{}
	for _, c := range checks {
		if _, seen := byArea[c.Area]; !seen {
			areas = append(areas, c.Area)
		}
		byArea[c.Area] = append(byArea[c.Area], c)
	}
	for _, area := range areas {
		fmt.Fprintln(&b, area)
		for _, c := range byArea[area] {
			fmt.Fprintf(&b, "  %s %s\n", marks[c.Status], c.Text)
		}
	}
	if problems == 0 {
		fmt.Fprintln(&b, "no problems found")
	} else {
		fmt.Fprintf(&b, "%s found\n", topology.Counted(problems, "problem", "problems"))
	}
	return b.String()
}
