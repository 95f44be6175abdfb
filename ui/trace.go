package ui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/topology"
)

// maxHopLines caps the hop list so a 28-hop trace cannot push the table
// off screen; the table marks every hop anyway.
const maxHopLines = 3

// traceLines renders the trace pane: what was asked, the key to publish
// with, and the hops with their TTLs and arrival times. Its height depends
// only on the content and w, so the layout can reserve it in advance.
func traceLines(ts TraceState, st Styles, w int) []string {
	label := st.Hop.Render("trace ")
	indent := "      "
	switch {
	case ts.Err != nil:
		head := label + st.Bold.Render(strings.TrimSpace(ts.Input))
		msg := wrap(st.Danger.Render("✗ "+ts.Err.Error()), w, indent)
		return append([]string{head}, msg...)
	case ts.Trace == nil:
		return []string{
			label + st.Muted.Render("type a delay (90s, 1500ms, 1h30m, 7d) and an optional destination"),
			indent + st.Muted.Render("enter keeps the trace · esc clears it"),
		}
	}
	tr := ts.Trace
	sep := st.Faint.Render(" · ")
	what := topology.FormatSpan(tr.Requested)
	if tr.Delay != tr.Requested {
		what += " (rounded up to " + topology.FormatSpan(tr.Delay) + ")"
	}
	what += " → " + tr.Target
	head := label + st.Bold.Render(what) + sep +
		fmt.Sprintf("total %s in %d %s", topology.FormatSpan(tr.Total()), len(tr.Hops), topology.Plural(int64(len(tr.Hops)), "hop", "hops")) +
		sep + "publish to " + tr.Exchange
	out := wrap(head, w, indent)
	keyLines := strings.Split(ansi.Hardwrap(tr.Key, max(8, w-len(indent)), false), "\n")
	for i, k := range keyLines {
		prefix := indent
		if i == 0 {
			prefix = st.Muted.Render("key   ")
		}
		out = append(out, prefix+st.Bold.Render(k))
	}
	if len(tr.BCC) > 0 {
		// A direct ladder routes by these, in the BCC header.
		for i, k := range wrapItems(tr.BCC, "  ", w-len(indent)) {
			prefix := indent
			if i == 0 {
				prefix = st.Muted.Render("BCC   ")
			}
			out = append(out, prefix+st.Bold.Render(k))
		}
	}
	var hops []string
	for _, h := range tr.Hops {
		hops = append(hops, st.Hop.Render(fmt.Sprintf("L%02d", h.Level))+" "+topology.FormatSpan(h.TTL)+st.Muted.Render(" @+"+topology.FormatSpan(h.Start)))
	}
	hops = append(hops, st.Hop.Render("◆ "+tr.Target)+st.Muted.Render(" @+"+topology.FormatSpan(tr.Total())))
	chain := wrapItems(hops, st.Faint.Render(" › "), w-len(indent))
	if len(chain) > maxHopLines {
		chain = append(chain[:maxHopLines-1], st.Muted.Render(fmt.Sprintf("… %d more lines; the table marks every hop with ●", len(chain)-maxHopLines+1)))
	}
	for i, c := range chain {
		prefix := indent
		if i == 0 {
			prefix = st.Muted.Render("hops  ")
		}
		out = append(out, prefix+c)
	}
	switch {
	case ts.Broken != nil:
		out = append(out, wrap(st.Muted.Render("route ")+st.Danger.Render("✗ BROKEN on the broker: "+ts.Broken.Error()), w, indent)...)
	case ts.Checked:
		out = append(out, st.Muted.Render("route ")+"✓ checked: the broker's bindings route it exactly this way")
	}
	if ts.Message != nil {
		out = append(out, messageTraceLines(*ts.Message, st, w)...)
	}
	return out
}

// wrap word-wraps styled text to w cells, indenting continuation lines.
func wrap(s string, w int, indent string) []string {
	ls := wordwrap(s, w)
	out := []string{ls[0]}
	if len(ls) > 1 {
		rest := strings.Join(ls[1:], " ")
		for _, l := range wordwrap(rest, max(8, w-len(indent))) {
			out = append(out, indent+l)
		}
	}
	for i := range out {
		out[i] = ansi.Truncate(out[i], w, "…")
	}
	return out
}

// wordwrap breaks s at spaces into lines of at most w cells. ansi.Wordwrap
// also breaks after hyphens, which splits dates and queue names
// ("2025-\n03-14", "orders.work-\nparked") and can leave the hyphen a cell
// past the limit; hyphens are made non-breaking while it runs.
func wordwrap(s string, w int) []string {
	const nbHyphen = "\u2011"
	if strings.Contains(s, nbHyphen) {
		return strings.Split(ansi.Wordwrap(s, w, ""), "\n")
	}
	wrapped := ansi.Wordwrap(strings.ReplaceAll(s, "-", nbHyphen), w, "")
	return strings.Split(strings.ReplaceAll(wrapped, nbHyphen, "-"), "\n")
}

// wrapItems joins items with sep into lines of at most w cells, never
// breaking an item.
func wrapItems(items []string, sep string, w int) []string {
	var out []string
	cur := ""
	for _, it := range items {
		switch {
		case cur == "":
			cur = it
		case lipgloss.Width(cur)+lipgloss.Width(sep)+lipgloss.Width(it) <= w:
			cur += sep + it
		default:
			out = append(out, cur+strings.TrimRight(sep, " "))
			cur = it
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// driftLines renders the differences between a ladder's plan and the
// broker, wrapped to w cells: an object name is never cut, because the
// operator needs all of it to fix the drift.
func driftLines(f topology.Found, st Styles, w int) []string {
	kindW := 0
	for _, d := range f.Drift {
		kindW = max(kindW, len(d.Kind)+1+len(d.Object))
	}
	indent := strings.Repeat(" ", kindW+4)
	var out []string
	for _, d := range f.Drift {
		style := st.Warn
		if d.Kind == topology.Missing {
			style = st.Danger
		}
		text := d.Name
		if d.Detail != "" {
			text += st.Muted.Render(": " + d.Detail)
		}
		ws := strings.Split(ansi.Wrap(text, max(10, w-len(indent)), " "), "\n")
		out = append(out, "  "+style.Render(fit(string(d.Kind)+" "+d.Object, kindW, false))+"  "+ws[0])
		for _, l := range ws[1:] {
			out = append(out, indent+l)
		}
	}
	return out
}

// driftList renders the drift pane: a heading and the drift lines from
// line offset, in w×h cells.
func driftList(f topology.Found, offset int, st Styles, w, h int, keys bool) string {
	n := len(f.Drift)
	head := st.TableHeader.Render(fmt.Sprintf("DRIFT  %d %s between the plan and the broker", n, topology.Plural(int64(n), "difference", "differences")))
	if n == 0 {
		return head + "\n" + st.OK.Render("  ✓ the broker matches the ladder's plan")
	}
	ls := driftLines(f, st, w)
	offset = max(0, min(offset, len(ls)-(h-1)))
	hint := ""
	if keys {
		hint = "d or esc: back"
		if len(ls) > h-1 {
			hint = fmt.Sprintf("%d–%d/%d · ", offset+1, min(len(ls), offset+h-1), len(ls)) + hint
		}
	}
	out := []string{spread(head, st.Muted.Render(hint), w)}
	for i := offset; i < len(ls) && len(out) < h; i++ {
		out = append(out, ls[i])
	}
	return strings.Join(out, "\n")
}

// DriftLines is how many lines the drift pane scrolls through at width w.
func DriftLines(f topology.Found, w int) int { return len(driftLines(f, Styles{}, w)) }
