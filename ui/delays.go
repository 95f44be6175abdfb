package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// maxDelayRows is how many delay groups the ladder list shows under the
// ladders; the rest are counted (rungs discover --delays lists them all).
const maxDelayRows = 4

// DelayStripHeight is how many of the list's h lines the delays beside the
// ladders take: none without any, else a title and a row per group (at most
// maxDelayRows, and a line for plugin exchanges), never more than a third
// of h.
func DelayStripHeight(inv topology.Inventory, h int) int {
	if inv.Empty() {
		return 0
	}
	n := 1 + min(len(inv.Groups), maxDelayRows)
	if len(inv.Plugins) > 0 {
		n++
	}
	return min(n, h/3)
}

func delayColumns() []column {
	return []column{
		{id: "mark", width: 1},
		{id: "group", title: "DELAYS OUTSIDE LADDERS", width: 22, flex: 18},
		{id: "queues", title: "QUEUES", width: 6, right: true},
		{id: "delays", title: "DELAYS", width: 10, drop: 3},
		{id: "waiting", title: "WAITING", width: 7, right: true},
		{id: "oldest", title: "OLDEST", width: 6, right: true, drop: 2},
		{id: "to", title: "DEAD-LETTER TO", width: 14, flex: -1, drop: 1},
	}
}

// DelayStrip renders the delays outside ladders in w×h cells, under the
// ladder list: a header and a row per group, the groups past the space
// counted on the last row, then the plugin exchanges in one line.
func DelayStrip(inv topology.Inventory, st Styles, w, h int) string {
	if h <= 0 || inv.Empty() {
		return ""
	}
	t := newTable(delayColumns(), w)
	p := newPalette(st, false)
	var b lineBuffer
	b.end(t.header(&b.Builder, p))
	rows := h - 1
	plugins := ""
	if len(inv.Plugins) > 0 && rows > 1 {
		rows--
		var names []string
		for _, x := range inv.Plugins {
			n := x.Name
			if x.Reported {
				n += " (" + topology.FormatCount(x.Delayed) + " delayed)"
			}
			names = append(names, n)
		}
		plugins = st.Warn.Render("  plugin exchanges: " + strings.Join(names, ", "))
	}
	for i, g := range inv.Groups {
		if i == rows-1 && len(inv.Groups) > rows {
			b.WriteString(st.Muted.Render(fmt.Sprintf("  +%d more groups (rungs discover --delays)", len(inv.Groups)-i)))
			b.end(-1)
			break
		}
		if i >= rows {
			break
		}
		b.end(t.row(&b.Builder, p, func(c column, _ int) cell {
			switch c.id {
			case "group":
				return cell{text: g.ID(), ink: &p.bold}
			case "queues":
				return cell{text: strconv.Itoa(len(g.Queues)), ink: &p.text}
			case "delays":
				return cell{text: groupDelays(g), ink: &p.muted}
			case "waiting":
				if g.Messages == 0 {
					return cell{text: "0", ink: &p.faint}
				}
				return cell{text: topology.FormatCount(g.Messages), ink: &p.text}
			case "oldest":
				if g.Oldest <= 0 {
					return cell{text: "—", ink: &p.faint}
				}
				return cell{text: topology.FormatSpan(g.Oldest.Truncate(time.Second)), ink: &p.text}
			case "to":
				return cell{text: strings.Join(g.DeadLetterTo, "; "), ink: &p.muted}
			}
			return cell{}
		}))
	}
	ls := b.lines()
	if plugins != "" {
		ls = append(ls, unmeasured(plugins)...)
	}
	f := frame{w: w}
	f.fitted(ls, h)
	return f.String()
}

// groupDelays is a group's delays in a few cells: the fewest first.
func groupDelays(g topology.DelayGroup) string {
	ts := g.DelayLabels(ShortDelay, "per msg")
	if len(ts) > 2 {
		return ts[0] + "…" + ts[len(ts)-1]
	}
	return strings.Join(ts, " ")
}
