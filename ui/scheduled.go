package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/topology"
)

// ScheduledRow is one scheduled message as the console lists it. Due is
// when it fires; when nothing dates the message exactly, Due and Latest
// bound a window and Exact is false, so the view never shows a window as
// one instant.
type ScheduledRow struct {
	Due, Latest time.Time
	Exact       bool
	// Basis says what the due time rests on: rungs' own headers, the
	// x-death time, Celery's eta, or nothing (the rung's TTL alone).
	Basis string
	// Rung is the queue the message waits in, Dest where it goes.
	Rung, Dest             string
	MessageID, Correlation string
	Preview                string
	// Warning is what is wrong with the message itself (a Celery key
	// with stacked delay prefixes), "" when nothing is.
	Warning string
}

// ScanPhase is where the scan of a ladder's scheduled messages stands.
type ScanPhase int

// The phases of a scan.
const (
	ScanRunning ScanPhase = iota
	ScanDone
	ScanCancelled
	ScanFailed
)

// Horizon is how many scheduled messages are due by one time ahead: Found
// from the messages scanned, Estimate from the rungs' depths.
type Horizon struct {
	Label    string
	Found    int64
	Estimate int64
}

// ScheduledState is the scheduled-messages view of one ladder.
type ScheduledState struct {
	Ladder string
	Phase  ScanPhase
	// Scanned of Total messages read so far (Total 0 when unknown);
	// Matched is how many the filter selected, of which Rows are the
	// earliest due (the view keeps a bounded list).
	Scanned, Total, Matched int64
	Elapsed                 time.Duration
	Rows                    []ScheduledRow
	// Horizons count the matched messages by when they are due, beside the
	// depth-based forecast; empty until the scan has ended.
	Horizons []Horizon
	// Filter is the filter as typed; Err why the scan failed.
	Filter, Err string
	// Selected indexes Rows; Offset is the first row shown.
	Selected, Offset int
	Now              time.Time
}

// scheduledChrome is the view's fixed lines: the summary, the progress or
// horizons line, the column titles and the detail pane's title.
const scheduledChrome = 4

// scheduledDetail is how many lines the selected message's detail takes.
const scheduledDetail = 4

// ListHeight is how many rows a view of height h shows.
func (s ScheduledState) ListHeight(h int) int {
	return max(1, h-scheduledChrome-scheduledDetail)
}

// ScheduledView renders the scheduled messages of a ladder in w×h cells:
// a summary, the scan's progress bar (or, once it ended, the counts by
// horizon beside the depth estimate), the messages by due time and the
// selected one in full.
func ScheduledView(s ScheduledState, st Styles, w, h int) string {
	out := []string{scheduledSummary(s, st, w), scheduledSecond(s, st, w)}
	if len(s.Rows) == 0 {
		msg := "  no scheduled message matches the filter"
		switch {
		case s.Phase == ScanRunning:
			msg = "  the earliest due are listed when the scan ends (esc stops it early)"
		case s.Phase == ScanFailed:
			msg = "  " + st.Danger.Render("✗ "+s.Err)
		case s.Filter == "" && s.Scanned == 0:
			msg = "  " + s.Ladder + ": its rungs are empty, nothing is scheduled"
		}
		out = append(out, "", st.Muted.Render(msg))
		return block(strings.Join(out, "\n"), w, h)
	}
	listH := min(len(s.Rows), s.ListHeight(h))
	sel := max(0, min(s.Selected, len(s.Rows)-1))
	offset := scroll(sel, s.Offset, listH, len(s.Rows))
	t := newTable(scheduledColumns(), w)
	plain := newPalette(st, false)
	var b lineBuffer
	b.end(t.header(&b.Builder, plain))
	for i := offset; i < offset+listH && i < len(s.Rows); i++ {
		p := plain
		if i == sel {
			p = newPalette(st, true)
		}
		b.end(scheduledRow(&b.Builder, t, s, i, i == sel, p))
	}
	for _, l := range b.lines() {
		out = append(out, l.s)
	}
	out = append(out, scheduledDetailLines(s, sel, st, w)...)
	return block(strings.Join(out, "\n"), w, h)
}

// scheduledSummary is the first line: the ladder, how far the scan got
// and how many messages the filter selected.
func scheduledSummary(s ScheduledState, st Styles, w int) string {
	sep := st.Faint.Render(" · ")
	facts := []string{st.Crumb.Render(s.Ladder)}
	scanned := topology.FormatCount(s.Scanned)
	switch s.Phase {
	case ScanRunning:
		facts = append(facts, "scanning "+scanned+" read")
	case ScanCancelled:
		facts = append(facts, st.Warn.Render("scan cancelled after "+scanned+" read"))
	case ScanFailed:
		facts = append(facts, st.Danger.Render("scan failed after "+scanned+" read"))
	default:
		facts = append(facts, "scanned "+topology.Counted(s.Scanned, "message", "messages"))
	}
	match := st.Bold.Render(topology.FormatCount(s.Matched)) + " scheduled"
	if s.Filter != "" {
		match = st.Bold.Render(topology.FormatCount(s.Matched)) + " match"
	}
	if s.Phase == ScanRunning {
		match += " so far"
	}
	facts = append(facts, match)
	if n := int64(len(s.Rows)); n < s.Matched && s.Phase != ScanRunning {
		facts = append(facts, fmt.Sprintf("earliest %d shown", n))
	}
	if s.Elapsed > 0 {
		facts = append(facts, topology.FormatSpan(s.Elapsed.Round(100*time.Millisecond)))
	}
	return ansi.Truncate(strings.Join(facts, sep), w, "…")
}

// scheduledSecond is the progress bar while the scan runs, the counts by
// horizon once it ended.
func scheduledSecond(s ScheduledState, st Styles, w int) string {
	if s.Phase == ScanRunning {
		label := " " + topology.FormatCount(s.Scanned)
		if s.Total > 0 && s.Scanned < s.Total {
			label = fmt.Sprintf(" %s/%s %3d%%", topology.FormatCount(s.Scanned), topology.FormatCount(s.Total), min(100, s.Scanned*100/s.Total))
		}
		hint := st.Muted.Render("  esc cancels")
		bw := max(4, w-lipgloss.Width(label)-lipgloss.Width(hint))
		if s.Total <= 0 || s.Scanned >= s.Total {
			// The listed depth is the broker's statistics, seconds old: a
			// scan can pass it, and a full bar would claim it is done.
			text := "reading the rungs …" + label + " read"
			if s.Total > 0 {
				text += ", past the " + topology.FormatCount(s.Total) + " listed (statistics lag)"
			}
			return st.Muted.Render(ansi.Truncate(text, w-lipgloss.Width(hint), "…")) + hint
		}
		fill, track := barText(s.Scanned, s.Total, bw)
		return st.Bar.Render(fill) + st.BarTrack.Render(strings.Repeat("·", lipgloss.Width(track))) + label + hint
	}
	if len(s.Horizons) == 0 {
		return ""
	}
	var found, est []string
	var nFound, nEst int64
	for _, hz := range s.Horizons {
		found = append(found, st.Muted.Render(hz.Label+" ")+topology.FormatCount(hz.Found))
		est = append(est, topology.FormatCount(hz.Estimate))
		nFound, nEst = nFound+hz.Found, nEst+hz.Estimate
	}
	sep := st.Faint.Render(" · ")
	line := st.Label.Render("due in ") + strings.Join(found, sep)
	if nEst == 0 && nFound > 0 {
		// The depths are the broker's statistics, which reach a new
		// ladder's rungs seconds after its messages: zeros beside what
		// the scan found would contradict it.
		line += st.Muted.Render("   by depth: no statistics yet")
	} else {
		line += st.Muted.Render("   by depth ") + strings.Join(est, st.Faint.Render("·"))
	}
	return ansi.Truncate(line, w, "…")
}

// scheduledColumns are the list's columns, by importance.
func scheduledColumns() []column {
	return []column{
		{id: "mark", width: 1},
		{id: "due", title: "DUE", width: 14},
		{id: "left", title: "LEFT", width: 9, right: true},
		{id: "basis", title: "BASIS", width: 7, drop: 4},
		{id: "id", title: "MESSAGE ID", width: 14, flex: 10},
		{id: "rung", title: "RUNG", width: 12, flex: 8, drop: 2},
		{id: "dest", title: "DEST", width: 12, flex: 6, drop: 3},
		{id: "corr", title: "CORRELATION", width: 12, flex: 6, drop: 5},
		{id: "body", title: "BODY", width: 10, flex: -1, drop: 6},
	}
}

// DueText is a due time as the list shows it: the clock time, the date
// too when not today, and a window as "~from–to".
func DueText(r ScheduledRow, now time.Time) string {
	at := func(t time.Time) string {
		y1, m1, d1 := t.Date()
		if y2, m2, d2 := now.Date(); y1 != y2 || m1 != m2 || d1 != d2 {
			return t.Format("01-02 15:04")
		}
		return t.Format("15:04:05")
	}
	if r.Exact || r.Latest.IsZero() || !r.Latest.After(r.Due) {
		return at(r.Due)
	}
	// A window is whole minutes: seconds would claim a precision it lacks.
	from := r.Due.Format("15:04")
	if at(r.Due) != r.Due.Format("15:04:05") {
		from = at(r.Due)
	}
	return "~" + from + "–" + r.Latest.Format("15:04")
}

// LeftText is the time left before a message is due: "4m12s", a window
// "4m–10m", or "due" once the time has passed.
func LeftText(r ScheduledRow, now time.Time) string {
	left := func(t time.Time) string {
		d := t.Sub(now)
		if d <= 0 {
			return "due"
		}
		if d < time.Hour {
			return topology.FormatSpan(d.Round(time.Second))
		}
		return topology.FormatSpan(d.Round(time.Minute))
	}
	if r.Exact || r.Latest.IsZero() || !r.Latest.After(r.Due) {
		return left(r.Due)
	}
	return left(r.Due) + "–" + left(r.Latest)
}

// scheduledRow writes row i of the list to b and returns its width, as
// table.row does.
func scheduledRow(b *strings.Builder, t table, s ScheduledState, i int, selected bool, p *palette) int {
	r := s.Rows[i]
	mark := " "
	if selected {
		mark = "▸"
	}
	basisInk := &p.text
	if !r.Exact {
		basisInk = &p.warn
	}
	return t.row(b, p, func(c column, _ int) cell {
		switch c.id {
		case "mark":
			return cell{text: mark, ink: &p.accent}
		case "due":
			return cell{text: DueText(r, s.Now), ink: &p.text}
		case "left":
			return cell{text: LeftText(r, s.Now), ink: &p.bold}
		case "basis":
			return cell{text: r.Basis, ink: basisInk}
		case "id":
			return cell{text: orDash(r.MessageID), ink: &p.text}
		case "rung":
			return cell{text: r.Rung, ink: &p.muted, cutL: true}
		case "dest":
			return cell{text: orDash(r.Dest), ink: &p.text, cutL: true}
		case "corr":
			return cell{text: orDash(r.Correlation), ink: &p.muted}
		case "body":
			return cell{text: r.Preview, ink: &p.faint}
		}
		return cell{}
	})
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// scheduledDetailLines describe the selected message: what its due time
// rests on and how precise it is, where it waits and goes, its ids and
// the start of its body.
func scheduledDetailLines(s ScheduledState, sel int, st Styles, w int) []string {
	r := s.Rows[sel]
	title := st.Faint.Render("─ ") + st.Bold.Render(orDash(r.MessageID)) + st.Muted.Render(fmt.Sprintf(" · %d of %d", sel+1, len(s.Rows))) + " "
	title += st.Faint.Render(strings.Repeat("─", max(0, w-lipgloss.Width(title))))
	left := LeftText(r, s.Now)
	if left != "due" {
		left = "in " + left
	}
	due := r.Due.Format("2006-01-02 15:04:05") + " (" + left + ") · exact, from " + r.Basis
	if !r.Exact && r.Latest.After(r.Due) {
		due = "between " + r.Due.Format("15:04:05") + " and " + r.Latest.Format("15:04:05") + st.Warn.Render(" · a window: nothing dates it but the rung")
	}
	label := func(l string) string { return st.Label.Render(fit(l, 6, false)) }
	where := label("where") + r.Rung + st.Muted.Render(" → ") + orDash(r.Dest)
	if r.Warning != "" {
		// Before the correlation id: a narrow terminal cuts the end.
		where += st.Warn.Render(" · ⚠ " + r.Warning)
	}
	where += st.Muted.Render(" · correlation ") + orDash(r.Correlation)
	body := label("body") + st.Faint.Render(orDash(r.Preview))
	ls := []string{title, label("due") + due, where, body}
	for i, l := range ls {
		ls[i] = ansi.Truncate(l, w, "…")
	}
	return ls
}
