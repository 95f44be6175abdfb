package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// ListState is what the ladder list shows.
type ListState struct {
	Items []health.LadderReport // after filtering
	// Totals are the Items' (health.Sum); Total counts the ladders before
	// filtering.
	Totals   health.Totals
	Total    int
	Selected int
	Offset   int
	Filter   string
	Vhost    string
}

// ListHeight is how many rows of the list fit in h lines.
func ListHeight(h int) int { return max(1, h-2) }

func listColumns() []column {
	return []column{
		{id: "mark", width: 1},
		{id: "name", title: "LADDER", width: 12, flex: 18},
		{id: "layout", title: "LAYOUT", width: 6},
		{id: "type", title: "TYPE", width: 7, drop: 5},
		{id: "unit", title: "UNIT", width: 5},
		{id: "max", title: "MAX DELAY", width: 9},
		{id: "levels", title: "LEVELS", width: 6, right: true},
		{id: "radix", title: "RADIX", width: 5, right: true, drop: 7},
		{id: "targets", title: "TARGETS", width: 7, right: true, drop: 6},
		{id: "flight", title: "IN FLIGHT", width: 9, right: true},
		{id: "stuck", title: "STUCK", width: 5, right: true, drop: 3},
		{id: "stalled", title: "STALLED", width: 7, right: true, drop: 4},
		{id: "drift", title: "DRIFT", width: 5, right: true},
		{id: "unroutable", title: "UNROUTABLE", width: 10, right: true},
	}
}

// LadderList renders the ladder list in w×h cells: a table of every
// ladder found, and a one-line total under it.
func LadderList(s ListState, st Styles, w, h int) string {
	t := newTable(listColumns(), w)
	plain := newPalette(st, false)
	var b lineBuffer
	b.end(t.header(&b.Builder, plain))
	rowsH := ListHeight(h)
	if len(s.Items) == 0 {
		msg := fmt.Sprintf("no ladders in vhost %s; declare one with `rungs apply`", s.Vhost)
		if s.Filter != "" {
			msg = fmt.Sprintf("no ladder matches %q (%d hidden; esc clears the filter)", s.Filter, s.Total)
		}
		ls := append(b.lines(), line{}) // a blank line under the titles
		ls = append(ls, unmeasured(st.Muted.Render("  "+msg))...)
		f := frame{w: w}
		f.fitted(ls, h)
		return f.String()
	}
	s.Offset = scroll(s.Selected, s.Offset, rowsH, len(s.Items))
	end := min(len(s.Items), s.Offset+rowsH)
	for i := s.Offset; i < end; i++ {
		p := plain
		if i == s.Selected {
			p = newPalette(st, true)
		}
		b.end(itemLine(&b.Builder, t, s.Items[i], i == s.Selected, p))
	}
	body := frame{w: w}
	body.fitted(b.lines(), h-1)
	return body.String() + "\n" + listTotals(s, st, w, rowsH)
}

// itemLine writes one row of the list to b and returns its width, as
// table.row does. p is the row's palette: plain, or the selection's.
func itemLine(b *strings.Builder, tb table, it health.LadderReport, selected bool, p *palette) int {
	l, t := it.Found.Ladder, it.Totals
	mark := " "
	if selected {
		mark = "▸"
	}
	num := func(n int64, bad *ink) cell {
		if n <= 0 {
			return cell{text: strconv.FormatInt(max(n, 0), 10), ink: &p.faint}
		}
		return cell{text: topology.FormatCount(n), ink: bad}
	}
	return tb.row(b, p, func(c column, _ int) cell {
		switch c.id {
		case "mark":
			return cell{text: mark, ink: &p.accent}
		case "name":
			return cell{text: l.Name, ink: &p.bold}
		case "layout":
			return cell{text: l.Layout, ink: &p.muted}
		case "type":
			return cell{text: string(l.QueueType), ink: &p.muted}
		case "unit":
			return cell{text: topology.FormatSpan(l.Unit), ink: &p.text}
		case "max":
			return cell{text: ShortDelay(l.MaxDelay()), ink: &p.text}
		case "levels":
			return cell{text: strconv.Itoa(l.Levels), ink: &p.text}
		case "radix":
			return cell{text: strconv.Itoa(l.Radix), ink: &p.text}
		case "targets":
			return cell{text: strconv.Itoa(len(l.Targets)), ink: &p.text}
		case "flight":
			return num(t.InFlight, &p.text)
		case "stuck":
			return num(int64(t.Stuck), &p.danger)
		case "stalled":
			return num(int64(t.Stalled), &p.danger)
		case "drift":
			return num(int64(t.Drift), &p.warn)
		case "unroutable":
			if !t.HasUnroutable {
				return cell{text: "—", ink: &p.faint}
			}
			return num(t.Unroutable, &p.danger)
		}
		return cell{}
	})
}

// listTotals sums the visible ladders on the last line.
func listTotals(s ListState, st Styles, w, rowsH int) string {
	t := s.Totals
	flight, unroutable, drift, stuck, stalled := t.InFlight, t.Unroutable, t.Drifted, t.Stuck, t.Stalled
	sep := st.Faint.Render(" · ")
	n := len(s.Items)
	count := fmt.Sprintf("%d %s", n, topology.Plural(int64(n), "ladder", "ladders"))
	if s.Filter != "" {
		count += fmt.Sprintf(" of %d", s.Total)
	}
	parts := []string{st.Muted.Render(count), st.Muted.Render(topology.FormatCount(flight) + " in flight")}
	if t.LostRoute > 0 {
		// Rungs held by a lost route count as stuck; said as what they are.
		stuck -= t.LostRungs
		parts = append(parts, st.Danger.Render(fmt.Sprintf("%d held by a lost route", t.LostRoute)))
	}
	if stuck > 0 {
		parts = append(parts, st.Danger.Render(fmt.Sprintf("%d stuck %s", stuck, topology.Plural(int64(stuck), "rung", "rungs"))))
	}
	if stalled > 0 {
		parts = append(parts, st.Danger.Render(fmt.Sprintf("%d stalled %s", stalled, topology.Plural(int64(stalled), "rung", "rungs"))))
	}
	if t.Delayed > 0 {
		parts = append(parts, st.Warn.Render(topology.FormatCount(t.Delayed)+" delayed"))
	}
	if drift > 0 {
		parts = append(parts, st.Warn.Render(fmt.Sprintf("%d with drift", drift)))
	}
	if unroutable > 0 {
		parts = append(parts, st.Danger.Render(topology.FormatCount(unroutable)+" unroutable"))
	}
	pos := ""
	if n > rowsH {
		pos = st.Muted.Render(fmt.Sprintf("%d–%d of %d", s.Offset+1, min(n, s.Offset+rowsH), n))
	}
	return spread(" "+strings.Join(parts, sep), pos, w)
}
