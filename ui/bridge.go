package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/topology"
)

// BridgeState is what the console's bridge view shows: the vhost's
// bridges (rungs bridge) as the status line reads them, which one is
// selected, and when they were read.
type BridgeState struct {
	Vhost   string
	Bridges []topology.Bridge
	// Read says a reading came in; Err is the last read's failure.
	Read bool
	Err  string
	At   time.Time
	// Every is how often the view reads again while it is open.
	Every    time.Duration
	Selected int
	// Hints are the view's keys, drawn last.
	Hints string
}

// BridgeOverlay draws the bridges as a dialog of at most w×h cells: a row
// per bridge with its intake's depth and lag, the bridges consuming it,
// what is due and not yet out, and what it parked; then, for the selected
// bridge, what those figures mean for it.
func BridgeOverlay(s BridgeState, st Styles, w, h int) string {
	inner := w - st.Dialog.GetHorizontalFrameSize()
	var body []string
	switch {
	case !s.Read && s.Err == "":
		body = append(body, st.Muted.Render("reading the bridges of vhost "+s.Vhost+" …"))
	case s.Err != "":
		for _, l := range wrap("✗ cannot read the bridges: "+s.Err, inner, "  ") {
			body = append(body, st.Danger.Render(l))
		}
	case len(s.Bridges) == 0:
		for _, l := range wrap("No bridge in vhost "+s.Vhost+". rungs bridge starts one: producers publish to its exchange with an x-delay header, as to the delayed-message plugin's.", inner, "") {
			body = append(body, st.Muted.Render(l))
		}
	default:
		body = bridgeTable(s, st, inner)
	}
	when := ""
	if s.Read && s.Err == "" && !s.At.IsZero() {
		when = "read " + s.At.Format("15:04:05")
		if s.Every > 0 {
			when += ", every " + topology.FormatSpan(s.Every) + " while open"
		}
	}
	return sidePanel("Bridges · vhost "+s.Vhost, body, when, s.Hints, st, w, h)
}

// sidePanel frames a side view (the bridges, delayed retry) as a dialog of
// at most w×h cells: its body, clipped to fit, then when it was read
// ("" while it is not), then its keys.
func sidePanel(title string, body []string, when, hints string, st Styles, w, h int) string {
	inner := w - st.Dialog.GetHorizontalFrameSize()
	maxBody := max(1, OverlayHeight(h)-2-st.Dialog.GetVerticalFrameSize())
	body = append(body, "")
	if when != "" {
		body = append(body, st.Muted.Render(when))
	}
	if len(body) > maxBody-1 {
		body = append(body[:max(0, maxBody-2)], st.Muted.Render("…"))
	}
	body = append(body, hints)
	bodyW := lipgloss.Width(title)
	for _, l := range body {
		bodyW = max(bodyW, lipgloss.Width(l))
	}
	return Dialog(fit(st.DialogTitle.Render(title), min(inner, bodyW), false), strings.Join(body, "\n"), lipgloss.NewStyle(), st, w)
}

// bridgeTable is the bridges' rows, then the selected one's notes.
func bridgeTable(s BridgeState, st Styles, w int) []string {
	cells := [][]string{{"BRIDGE", "INTAKE", "LAG", "CONSUMING", "DUE", "PARKED"}}
	for _, b := range s.Bridges {
		lag := "—"
		if b.Intake.Stats.Ready+b.Intake.Stats.Unacked == 0 {
			lag = "0s"
		} else if b.Lag() > 0 {
			lag = topology.FormatDelay(b.Lag().Round(time.Second))
		}
		due, parked := "—", "—"
		if b.HasDue {
			due = topology.FormatCount(b.Due.Stats.Ready + b.Due.Stats.Unacked)
		}
		if b.HasParked {
			parked = topology.FormatCount(b.Parked.Stats.Ready + b.Parked.Stats.Unacked)
		}
		cells = append(cells, []string{b.Exchange, topology.FormatCount(b.Intake.Stats.Ready + b.Intake.Stats.Unacked), lag,
			topology.FormatCount(int64(b.Intake.Stats.Consumers)), due, parked})
	}
	widths := make([]int, len(cells[0]))
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], lipgloss.Width(c))
		}
	}
	fixed := 0
	for _, wd := range widths[1:] {
		fixed += wd + 2
	}
	widths[0] = max(8, min(widths[0], w-fixed-2))
	var out []string
	for r, row := range cells {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(fit(c, widths[i], i > 0))
		}
		line := ansi.Truncate("  "+b.String(), w, "…")
		switch {
		case r == 0:
			line = st.TableHeader.Render(line)
		case r-1 == s.Selected && len(s.Bridges) > 1:
			line = st.Selected.Render(line)
		}
		out = append(out, line)
	}
	sel := min(max(0, s.Selected), len(s.Bridges)-1)
	out = append(out, "")
	for _, n := range bridgeNotes(s.Bridges[sel], st) {
		out = append(out, wrapStyled(n, w)...)
	}
	return out
}

// note is one line of text in a style.
type note struct {
	text  string
	style lipgloss.Style
}

// bridgeNotes say what the selected bridge's figures mean.
func bridgeNotes(b topology.Bridge, st Styles) []note {
	n := topology.NamesOfBridge(b.Exchange, "")
	intake := b.Intake.Stats.Ready + b.Intake.Stats.Unacked
	var out []note
	switch {
	case b.Intake.Stats.Consumers == 0 && intake > 0:
		out = append(out, note{fmt.Sprintf("✗ %s: no bridge consumes %s: its %s wait there, later than their x-delay", b.Exchange, n.Intake, topology.Counted(int(intake), "message", "messages")), st.Danger})
	case b.Intake.Stats.Consumers == 0:
		out = append(out, note{fmt.Sprintf("! %s: no bridge consumes %s: what producers publish now waits there", b.Exchange, n.Intake), st.Warn})
	case b.Lag() > 0:
		out = append(out, note{fmt.Sprintf("%s: a message reaching the intake now waits about %s before a bridge takes it, on top of its x-delay, while the backlog lasts", b.Exchange, topology.FormatDelay(b.Lag().Round(time.Second))), st.Text})
	case intake > 0:
		out = append(out, note{fmt.Sprintf("%s: %s in the intake; how long they wait is not known yet (LAG —): the broker has measured no rate of taking them", b.Exchange, topology.Counted(int(intake), "message", "messages")), st.Text})
	default:
		out = append(out, note{fmt.Sprintf("%s: the intake is empty: %s keeping up", b.Exchange, topology.Counted(int(b.Intake.Stats.Consumers), "bridge", "bridges")), st.Muted})
	}
	if b.HasDue && b.Due.Stats.Ready+b.Due.Stats.Unacked > 0 {
		out = append(out, note{fmt.Sprintf("%s due in %s, not yet out through the exit exchange", topology.FormatCount(b.Due.Stats.Ready+b.Due.Stats.Unacked), n.Due), st.Text})
	}
	switch {
	case !b.HasParked:
	case b.Parked.Stats.Ready+b.Parked.Stats.Unacked > 0:
		out = append(out, note{fmt.Sprintf("! %s parked in %s, each with its reason in %s (an x-delay that is not a number, beyond the ladder, or unroutable at the exit): v peeks them", topology.FormatCount(b.Parked.Stats.Ready+b.Parked.Stats.Unacked), n.Parked, topology.HeaderReason), st.Warn})
	default:
		out = append(out, note{"nothing parked in " + n.Parked, st.Muted})
	}
	return out
}

// wrapStyled wraps a note to w cells, each line in its style.
func wrapStyled(n note, w int) []string {
	var out []string
	for _, l := range wrap(n.text, w, "  ") {
		out = append(out, n.style.Render(l))
	}
	return out
}
