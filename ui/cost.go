package ui

import (
	"fmt"
	"strings"

	"github.com/rungs-dev/rungs/topology"
)

// costList renders the cost pane: what the ladder's range would cost in
// each radix its layout allows, with the ladder's own marked, in w×h cells.
// It is the console's side of `rungs plan`'s radix table: the numbers come
// from the plan, and the one measured fact that decides between them (broker
// CPU per message) is in docs/benchmarks, summarised in the footnote.
func costList(l topology.Ladder, costs []topology.RadixCost, st Styles, w, h int, keys bool) string {
	head := st.TableHeader.Render(fmt.Sprintf("COST  the range up to %s at %s, in each radix", MaxDelay(l.MaxDelay()), topology.FormatSpan(l.Unit)))
	hint := ""
	if keys {
		hint = "c or esc: back"
	}
	out := []string{spread(head, st.Muted.Render(hint), w)}
	cols := []column{
		{id: "radix", title: "RADIX", width: 5, right: true},
		{id: "levels", title: "LEVELS", width: 6, right: true},
		{id: "rungs", title: "RUNGS", width: 5, right: true},
		{id: "queues", title: "QUEUES", width: 6, right: true, drop: 2},
		{id: "exchanges", title: "EXCHANGES", width: 9, right: true, drop: 3},
		{id: "bindings", title: "BINDINGS", width: 8, right: true},
		{id: "mean", title: "MEAN HOPS", width: 9, right: true},
		{id: "max", title: "MAX HOPS", width: 8, right: true},
		{id: "reach", title: "MAX DELAY", width: 10, right: true, drop: 1},
		{id: "mark", title: "", width: 13},
	}
	t := newTable(cols, w)
	p := newPalette(st, false)
	var b strings.Builder
	t.header(&b, p)
	out = append(out, b.String())
	for _, c := range costs {
		mark, base := "", &p.text
		if c.Radix == l.Radix {
			mark, base = "◂ this ladder", &p.bold
		}
		values := map[string]string{
			"radix": fmt.Sprint(c.Radix), "levels": fmt.Sprint(c.Levels),
			"rungs": fmt.Sprint(c.Cost.Rungs), "queues": fmt.Sprint(c.Cost.Queues),
			"exchanges": fmt.Sprint(c.Cost.Exchanges), "bindings": fmt.Sprint(c.Cost.Bindings),
			"mean": fmt.Sprintf("%.1f", c.Cost.MeanHops), "max": fmt.Sprint(c.Cost.MaxHops),
			"reach": MaxDelay(c.MaxDelay),
		}
		b.Reset()
		t.row(&b, p, func(col column, _ int) cell {
			if col.id == "mark" {
				return cell{text: mark, ink: &p.accent}
			}
			return cell{text: values[col.id], ink: base}
		})
		out = append(out, b.String())
	}
	notes := []string{"Each hop is an expiry, a dead-lettering and a topic routing on the broker."}
	if len(costs) > 1 {
		notes = append(notes,
			"Measured (docs/benchmarks): radix 16 takes about a third of radix 2's broker",
			"CPU per message and halves its lateness, for more (mostly idle) queues.",
			"To change: rungs apply a ladder with --radix, then rungs migrate into it.")
	} else {
		notes = append(notes, fmt.Sprintf("The %s layout is binary: radix 2 is its only choice.", l.Layout))
	}
	out = append(out, "")
	for _, n := range notes {
		out = append(out, st.Muted.Render(fit(n, w, false)))
	}
	if len(out) > h {
		out = out[:h]
	}
	return strings.Join(out, "\n")
}
