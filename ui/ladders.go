package ui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
)

// ListState is what the ladder list shows.
type ListState struct {
	Items    []LadderItem // after filtering
	Total    int          // ladders before filtering
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
		{id: "drift", title: "DRIFT", width: 5, right: true},
		{id: "unroutable", title: "UNROUTABLE", width: 10, right: true},
	}
}

// LadderList renders the ladder list in w×h cells: a table of every
// ladder found, and a one-line total under it.
func LadderList(s ListState, st Styles, w, h int) string {
	t := newTable(listColumns(), w)
	out := []string{t.header(st)}
	rowsH := ListHeight(h)
	if len(s.Items) == 0 {
		msg := fmt.Sprintf("no ladders in vhost %s; declare one with `rungs apply`", s.Vhost)
		if s.Filter != "" {
			msg = fmt.Sprintf("no ladder matches %q (%d hidden; esc clears the filter)", s.Filter, s.Total)
		}
		out = append(out, "", st.Muted.Render("  "+msg))
		return block(strings.Join(out, "\n"), w, h)
	}
	s.Offset = scroll(s.Selected, s.Offset, rowsH, len(s.Items))
	end := min(len(s.Items), s.Offset+rowsH)
	for i := s.Offset; i < end; i++ {
		out = append(out, itemLine(t, s.Items[i], i == s.Selected, st))
	}
	body := block(strings.Join(out, "\n"), w, h-1)
	return body + "\n" + listTotals(s, st, w, rowsH)
}

func itemLine(t table, it LadderItem, selected bool, st Styles) string {
	l := it.Found.Ladder
	base := lipgloss.NewStyle()
	mark := " "
	if selected {
		base, mark = st.Selected, "▸"
	}
	num := func(n int64, bad lipgloss.Style) cell {
		if n <= 0 {
			return cell{text: strconv.FormatInt(max(n, 0), 10), style: st.Faint}
		}
		return cell{text: Count(n), style: bad}
	}
	cells := map[string]cell{
		"mark":    {text: mark, style: st.Accent},
		"name":    {text: l.Name, style: st.Bold},
		"layout":  {text: l.Layout, style: st.Muted},
		"type":    {text: string(l.QueueType), style: st.Muted},
		"unit":    {text: Delay(l.Unit), style: st.Text},
		"max":     {text: ShortDelay(l.MaxDelay()), style: st.Text},
		"levels":  {text: strconv.Itoa(l.Levels), style: st.Text},
		"radix":   {text: strconv.Itoa(l.Radix), style: st.Text},
		"targets": {text: strconv.Itoa(len(l.Targets)), style: st.Text},
		"flight":  num(it.InFlight, st.Text),
		"stuck":   num(int64(it.Stuck), st.Danger),
		"drift":   num(int64(len(it.Found.Drift)), st.Warn),
	}
	if it.Unroutable < 0 {
		cells["unroutable"] = cell{text: "—", style: st.Faint}
	} else {
		cells["unroutable"] = num(it.Unroutable, st.Danger)
	}
	return t.row(cells, base)
}

// listTotals sums the visible ladders on the last line.
func listTotals(s ListState, st Styles, w, rowsH int) string {
	var flight, unroutable int64
	drift, stuck := 0, 0
	for _, it := range s.Items {
		flight += it.InFlight
		unroutable += max(it.Unroutable, 0)
		stuck += it.Stuck
		if len(it.Found.Drift) > 0 {
			drift++
		}
	}
	sep := st.Faint.Render(" · ")
	n := len(s.Items)
	count := fmt.Sprintf("%d %s", n, plural(int64(n), "ladder", "ladders"))
	if s.Filter != "" {
		count += fmt.Sprintf(" of %d", s.Total)
	}
	parts := []string{st.Muted.Render(count), st.Muted.Render(Count(flight) + " in flight")}
	if stuck > 0 {
		parts = append(parts, st.Danger.Render(fmt.Sprintf("%d stuck %s", stuck, plural(int64(stuck), "rung", "rungs"))))
	}
	if drift > 0 {
		parts = append(parts, st.Warn.Render(fmt.Sprintf("%d with drift", drift)))
	}
	if unroutable > 0 {
		parts = append(parts, st.Danger.Render(Count(unroutable)+" unroutable"))
	}
	pos := ""
	if n > rowsH {
		pos = st.Muted.Render(fmt.Sprintf("%d–%d of %d", s.Offset+1, min(n, s.Offset+rowsH), n))
	}
	return spread(" "+strings.Join(parts, sep), pos, w)
}
