package ui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// LadderState is everything the ladder view shows. The model owns it; the
// render functions only read it.
type LadderState struct {
	Found topology.Found
	// Rows are the rows to show, already traced and filtered.
	Rows []health.Row
	// Totals and Forecast are the ladder's, as its health.LadderReport
	// has them: the summary and the forecast draw them as they are.
	Totals   health.Totals
	Forecast topology.Forecast
	// Drain is the ladder's measured drain (a backlog's rate and finish).
	Drain health.Drain
	// Placement is where its rungs lead and replicate in a cluster.
	Placement health.Placement
	// Selected indexes Rows; Offset is the first visible table line.
	Selected int
	Offset   int
	Filter   string
	// Trace is set while a trace is shown.
	Trace *TraceState
	// ShowDrift replaces the table with the list of drift; ShowCost with
	// what the ladder's range costs in each radix.
	ShowDrift bool
	ShowCost  bool
	// Costs are what the cost pane shows: the ladder's range in each
	// radix (topology.Ladder.RadixCosts), worked out by the model once a
	// ladder, not on every frame.
	Costs []topology.RadixCost
	// ShowForecast replaces it with when the messages in flight arrive.
	ShowForecast bool
	// Gone is set when the latest snapshot no longer holds the ladder.
	Gone bool
	// Folded counts idle rungs left out of Rows (see health.FoldIdleRungs).
	Folded int
	// Remedies are what restores the ladder's lost routes, as rungs status
	// prints them (health.LostRemedies of every row, filtered or not).
	Remedies []string
}

// TraceState is a trace being typed or pinned.
type TraceState struct {
	Input string
	Trace *topology.Trace
	Err   error
	// Checked says Trace was walked over the broker's bindings; Broken,
	// that they route it differently or not at all (rungs trace's check).
	Checked bool
	Broken  error
	// Message is set when the trace is a peeked message's.
	Message *MessageTrace
}

// summaryHeight is the summary's height: a facts line and a health line.
const summaryHeight = 2

// detailHeight is the height of the pane under the table: the selected
// row's details, or the trace.
func (s LadderState) detailHeight(w int) int {
	if s.Trace != nil {
		return len(traceLines(*s.Trace, Styles{}, w))
	}
	return 1 + max(1, len(s.judgementLines(w)))
}

// detailJudgementLines bounds the selected row's judgement under the
// table: a lost route's names its destinations and counts, and wraps
// rather than ending in "…", but never takes the table's place.
const detailJudgementLines = 3

// judgementLines are the selected row's judgement wrapped to w (nil for
// none), at most detailJudgementLines of them.
func (s LadderState) judgementLines(w int) []string {
	if s.ShowDrift || s.ShowCost || s.ShowForecast || s.Selected < 0 || s.Selected >= len(s.Rows) {
		return nil
	}
	r := s.Rows[s.Selected]
	if r.Status == "" {
		return nil
	}
	ls := wrap(flag(r.Severity)+" "+r.Status, w, "  ")
	if len(ls) > detailJudgementLines {
		ls = ls[:detailJudgementLines]
		ls[len(ls)-1] = ansi.Truncate(ls[len(ls)-1], w-1, "") + "…"
	}
	return ls
}

// TableHeight is how many table lines (rows and section headings) fit in
// a ladder view of w×h cells; the model scrolls with it.
func (s LadderState) TableHeight(w, h int) int {
	return max(1, h-summaryHeight-1-s.detailHeight(w)-len(s.remedyLines(w, h)))
}

// remedyLabel starts a lost route's remedy, in status and the console.
const remedyLabel = "remedy: "

// remedyLines are the lost routes' remedies wrapped to w, under the table
// of a w×h view. They take at most half of what the table would have, so
// that the held rungs stay in sight; a remedy cut short ends in "…", and
// rungs status prints it whole.
func (s LadderState) remedyLines(w, h int) []string {
	if len(s.Remedies) == 0 {
		return nil
	}
	var ls []string
	for _, rem := range s.Remedies {
		ls = append(ls, wrap(remedyLabel+rem, w, "  ")...)
	}
	room := (h - summaryHeight - 1 - s.detailHeight(w)) / 2
	if len(ls) <= room {
		return ls
	}
	if room <= 0 {
		return nil
	}
	ls = ls[:room]
	ls[room-1] = ansi.Truncate(ls[room-1], w-1, "") + "…"
	return ls
}

// ladderLine is one table line: a row, or a section heading (row < 0).
type ladderLine struct {
	row     int
	section health.RowKind
}

// tableLines interleaves rows with section headings, one per change of kind.
func tableLines(rows []health.Row) []ladderLine {
	var out []ladderLine
	for i, r := range rows {
		if r.Kind != health.RungRow && (i == 0 || rows[i-1].Kind != r.Kind) {
			out = append(out, ladderLine{row: -1, section: r.Kind})
		}
		out = append(out, ladderLine{row: i})
	}
	return out
}

// SelectedLine returns the table line of row sel and the number of lines.
func SelectedLine(rows []health.Row, sel int) (line, total int) {
	ls := tableLines(rows)
	return selectedLine(ls, sel), len(ls)
}

func selectedLine(ls []ladderLine, sel int) int {
	for i, l := range ls {
		if l.row == sel {
			return i
		}
	}
	return 0
}

// Scroll returns the first visible line that keeps line sel in a window of
// h lines, moving the window as little as possible from offset.
func Scroll(sel, offset, h, n int) int { return scroll(sel, offset, h, n) }

// LadderView renders the ladder view in w×h cells: summary, table (or the
// drift or cost pane) and the detail or trace pane.
func LadderView(s LadderState, st Styles, w, h int) string {
	tableH := s.TableHeight(w, h)
	ls := tableLines(s.Rows)
	pane := s.ShowDrift || s.ShowCost || s.ShowForecast // a pane replaces the table
	if !pane {
		s.Offset = scroll(selectedLine(ls, s.Selected), s.Offset, tableH, len(ls))
	}
	pos := ""
	if n := len(ls); !pane && n > tableH {
		pos = st.Muted.Render(fmt.Sprintf("%d–%d/%d", s.Offset+1, min(n, s.Offset+tableH), n))
		switch {
		case s.Offset == 0:
			pos += st.Muted.Render(" ↓")
		case s.Offset+tableH >= n:
			pos += st.Muted.Render(" ↑")
		default:
			pos += st.Muted.Render(" ↕")
		}
	}
	parts := frame{w: w, lines: make([]line, 0, h+summaryHeight+2)}
	parts.block(ladderSummary(s, st, w, pos, true), summaryHeight)
	switch {
	case s.ShowDrift:
		parts.block(driftList(s.Found, s.Offset, st, w, tableH+1, true), tableH+1)
	case s.ShowCost:
		parts.block(costList(s.Found.Ladder, s.Costs, st, w, tableH+1, true), tableH+1)
	case s.ShowForecast:
		parts.block(forecastList(s.Forecast, st, w, tableH+1, true), tableH+1)
	default:
		parts.fitted(ladderTable(s, ls, st, w, tableH), tableH+1)
	}
	if rl := s.remedyLines(w, h); len(rl) > 0 {
		for i, l := range rl {
			rl[i] = st.Warn.Render(l)
		}
		parts.block(strings.Join(rl, "\n"), len(rl))
	}
	if s.Trace != nil {
		parts.raw(strings.Join(traceLines(*s.Trace, st, w), "\n"))
	} else {
		parts.block(rowDetail(s, st, w), s.detailHeight(w))
	}
	// The parts may not add up to h (a tall trace, a tiny terminal): cut
	// or pad them as one block.
	view := frame{w: w, lines: make([]line, 0, h)}
	view.fitted(parts.lines, h)
	return view.String()
}

// lostRoutes are the destinations the rows' judgements name as lost, and
// how many rungs hold messages for them.
func lostRoutes(rows []health.Row) (dests []string, rungs int) {
	seen := map[string]bool{}
	for _, r := range rows {
		if r.Why.Cause != health.CauseLostRoute {
			continue
		}
		if r.Kind == health.RungRow {
			rungs++
		}
		for _, d := range r.Why.Lost {
			if !seen[d.Dest] {
				seen[d.Dest] = true
				// An unnamed destination ("") is said as LostNames says it.
				dests = append(dests, topology.LostNames([]topology.LostRoute{d.LostRoute}))
			}
		}
	}
	return dests, rungs
}

// ladderSummary is two lines: what the ladder is, and how healthy it is.
func ladderSummary(s LadderState, st Styles, w int, pos string, keys bool) string {
	l, t := s.Found.Ladder, s.Totals
	inFlight, expired, unroutable := t.InFlight, t.Expired, t.Unroutable
	stuck, stalled, problems := t.Stuck, t.Stalled, t.Problems
	sep := st.Faint.Render(" · ")
	shape := fmt.Sprintf("%d levels × %s", l.Levels, topology.FormatSpan(l.Unit))
	if l.Radix != 2 {
		shape = fmt.Sprintf("%d levels × %s, radix %d", l.Levels, topology.FormatSpan(l.Unit), l.Radix)
	}
	facts := []string{
		st.Crumb.Render(l.Name),
		l.Layout,
		l.RungKind(),
		shape,
		"max " + MaxDelay(l.MaxDelay()),
		st.Bold.Render(topology.FormatCount(inFlight)) + " in flight",
	}

	if n := len(l.Targets); n > 0 && w >= 100 {
		facts = append(facts, fmt.Sprintf("%d %s", n, topology.Plural(int64(n), "target", "targets")))
	}
	line1 := strings.Join(facts, sep)

	var verdict []string
	if s.Gone {
		verdict = append(verdict, st.Danger.Render("✗ not found in the latest snapshot"))
	}
	if n := len(s.Found.Drift); n > 0 {
		d := st.Warn.Render(fmt.Sprintf("⚠ %d drift", n))
		if keys {
			d += st.Muted.Render(" (d)")
		}
		verdict = append(verdict, d)
	} else {
		verdict = append(verdict, st.OK.Render("✓ matches plan"))
	}
	if stalled > 0 {
		verdict = append(verdict, st.Danger.Render(fmt.Sprintf("✗ %d stalled", stalled)))
	}
	if expired > 0 {
		// Expired messages waiting to be dead-lettered are in flight but
		// in neither READY nor UNACK: say how many, or the sum looks wrong.
		e := st.Muted
		if stalled > 0 {
			e = st.Danger
		}
		verdict = append(verdict, e.Render(topology.FormatCount(expired)+" expired"))
	}
	if t.Delayed > 0 {
		// Held by a delayed retry: in flight, in none of READY, UNACK or
		// EXPIRED, and late.
		verdict = append(verdict, st.Warn.Render(topology.FormatCount(t.Delayed)+" delayed"))
	}
	if t.Backlogged > 0 {
		verdict = append(verdict, st.Warn.Render(BacklogShort(t, s.Drain)))
	}
	// A rung held by a lost route counts as stuck in the totals; the
	// verdict names the route instead (health/cause.go).
	if dests, rungs := lostRoutes(s.Rows); len(dests) > 0 {
		stuck -= rungs
		verdict = append(verdict, st.Danger.Render("✗ lost route to "+strings.Join(dests, ", ")))
	}
	if stuck > 0 {
		verdict = append(verdict, st.Danger.Render(fmt.Sprintf("✗ %d stuck", stuck)))
	} else if stalled == 0 && t.LostRoute == 0 {
		verdict = append(verdict, st.OK.Render("✓ moving"))
	}
	if unroutable > 0 {
		verdict = append(verdict, st.Danger.Render(fmt.Sprintf("✗ %s unroutable", topology.FormatCount(unroutable))))
	}
	if t.NoQuorum > 0 {
		verdict = append(verdict, st.Danger.Render(fmt.Sprintf("✗ %d without quorum", t.NoQuorum)))
	} else if t.MembersLost > 0 {
		verdict = append(verdict, st.Warn.Render(fmt.Sprintf("⚠ %d lost a member", t.MembersLost)))
	}
	if n := s.Placement.OneNode(); n != "" {
		verdict = append(verdict, st.Warn.Render("⚠ leaders all on "+n))
	}
	if problems > 0 {
		verdict = append(verdict, st.Warn.Render(fmt.Sprintf("⚠ %d %s", problems, topology.Plural(int64(problems), "warning", "warnings"))))
	}
	if s.Folded > 0 {
		f := fmt.Sprintf("%d idle %s folded", s.Folded, topology.Plural(int64(s.Folded), "rung", "rungs"))
		if keys {
			f += " (z)"
		}
		verdict = append(verdict, st.Muted.Render(f))
	}
	return line1 + "\n" + spread(strings.Join(verdict, sep), pos, w)
}

// ladderColumns are the ladder table's columns, by importance: identity
// and depth never go; rates, consumers and details go as width shrinks.
func ladderColumns(s LadderState, status bool) []column {
	lvl := 3
	if s.Found.Ladder.Radix != 2 {
		lvl = 4
	}
	// The queue column asks for its longest name (up to a point) so that
	// less important columns make way before names are cut.
	qw := 12
	for _, r := range s.Rows {
		qw = max(qw, min(textWidth(r.Queue), 24))
	}
	cols := []column{
		{id: "mark", width: 1},
		{id: "lvl", title: "LVL", width: lvl},
		{id: "queue", title: "QUEUE", width: qw, flex: max(0, 22-qw)},
		{id: "ttl", title: "TTL", width: 8},
		{id: "ready", title: "READY", width: 6, right: true},
		{id: "unack", title: "UNACK", width: 5, right: true},
	}
	for _, r := range s.Rows {
		if r.Stats.Expired > 0 {
			// Only quorum rungs report expired messages waiting to be
			// dead-lettered; a column of zeros would waste the room.
			cols = append(cols, column{id: "expired", title: "EXPIRED", width: 7, right: true})
			break
		}
	}
	for _, r := range s.Rows {
		if r.Stats.Delayed > 0 {
			// Only quorum queues under RabbitMQ 4.3's delayed retry hold
			// messages back (messages_delayed), and on a rung past its TTL.
			cols = append(cols, column{id: "delayed", title: "DELAYED", width: 7, right: true})
			break
		}
	}
	cols = append(cols, []column{
		{id: "bar", title: "DEPTH", width: 6, flex: 12, drop: 3},
		{id: "in", title: "IN/s", width: 5, right: true, drop: 6},
		{id: "out", title: "OUT/s", width: 5, right: true, drop: 7},
		{id: "cons", title: "CONS", width: 4, right: true, drop: 5},
	}...)
	if s.Trace != nil && s.Trace.Trace != nil {
		cols = append(cols, column{id: "arrive", title: "ENTERS", width: 8, right: true, drop: 2})
	}
	for _, r := range s.Rows {
		if r.Stats.HeadAge > 0 {
			// Only brokers that see a timestamp property know the head's
			// age; an always-empty column would waste the room.
			cols = append(cols, column{id: "head", title: "OLDEST", width: 6, right: true, drop: 4})
			break
		}
	}
	cols = append(cols, column{id: "state", title: "STATE", width: 7, drop: 9})
	if status {
		return append(cols, column{id: "status", title: "STATUS", width: 16, flex: -1, drop: 10})
	}
	return append(cols, column{id: "flag", width: 1})
}

// ladderLayout prefers a STATUS column and falls back to a one-cell flag.
func ladderLayout(s LadderState, w int) table {
	t := newTable(ladderColumns(s, true), w)
	if t.has("status") {
		return t
	}
	return newTable(ladderColumns(s, false), w)
}

// ladderTable renders the column titles and h table lines from s.Offset;
// ls are s.Rows' table lines.
func ladderTable(s LadderState, ls []ladderLine, st Styles, w, h int) []line {
	t := ladderLayout(s, w)
	if len(s.Rows) == 0 {
		msg := "no queues"
		if s.Filter != "" {
			msg = fmt.Sprintf("no queue matches %q", s.Filter)
		}
		return append(tableText(t, s, nil, st, w), unmeasured(st.Muted.Render("  "+msg))...)
	}
	start := min(s.Offset, len(ls))
	return tableText(t, s, ls[start:min(len(ls), start+h)], st, w)
}

// tableText renders t's column titles and the table lines ls of s.Rows.
// The lines share one buffer, so that a table is one allocation rather
// than one per row.
func tableText(t table, s LadderState, ls []ladderLine, st Styles, w int) []line {
	var maxDepth int64
	for _, r := range s.Rows {
		if r.Kind == health.RungRow {
			maxDepth = max(maxDepth, r.Stats.Messages())
		}
	}
	plain := newPalette(st, false)
	var selected *palette // only when the cursor's row is visible
	var b lineBuffer
	// Escape sequences and block characters take a styled line to about
	// three bytes a cell; a little more spares growing the buffer.
	b.Grow((len(ls) + 1) * (4*w + 64))
	b.marks = make([]lineMark, 0, len(ls)+1)
	b.end(t.header(&b.Builder, plain))
	for _, l := range ls {
		switch {
		case l.row < 0:
			b.end(sectionLine(&b.Builder, l.section, plain, w))
		case l.row == s.Selected:
			if selected == nil {
				selected = newPalette(st, true)
			}
			b.end(queueLine(&b.Builder, t, s.Rows[l.row], true, maxDepth, selected))
		default:
			b.end(queueLine(&b.Builder, t, s.Rows[l.row], false, maxDepth, plain))
		}
	}
	return b.lines()
}

// sectionLine writes a section heading to b and returns its width, or -1
// if a style changed it.
func sectionLine(b *strings.Builder, k health.RowKind, p *palette, w int) int {
	label := "  ─ " + k.Section() + " "
	lw := textWidth(label)
	rule := max(0, min(w, 40)-lw)
	known := p.section.write(b, label)
	if !p.faint.write(b, strings.Repeat("─", rule)) || !known {
		return -1
	}
	return lw + rule
}

// queueLine writes one row of the ladder table to b and returns its width,
// as table.row does. p is the row's palette: plain, or the selection's.
func queueLine(b *strings.Builder, t table, r health.Row, selected bool, maxDepth int64, p *palette) int {
	mark := " "
	markInk := &p.accent
	switch {
	case r.Visited:
		mark = "✓"
		markInk = &p.ok
	case r.Hop != nil:
		mark = "●"
		markInk = &p.hop
	case r.End:
		mark = "◆"
		markInk = &p.hop
	case selected:
		mark = "▸"
	}
	nameInk := &p.text
	switch {
	case r.Missing:
		nameInk = &p.struck
	case r.Hop != nil || r.End:
		nameInk = &p.hop
	case r.Kind == health.UnroutableRow && r.Stats.Messages() > 0:
		nameInk = &p.danger
	case r.Kind == health.ExtraRow:
		nameInk = &p.warn
	}
	count := func(n int64) cell {
		if r.Missing {
			return cell{text: "—", ink: &p.faint}
		}
		if n == 0 {
			return cell{text: topology.FormatCount(n), ink: &p.faint}
		}
		return cell{text: topology.FormatCount(n), ink: &p.text}
	}
	rate := func(v float64) cell {
		if r.Missing {
			return cell{text: "—", ink: &p.faint}
		}
		if v <= 0 {
			return cell{text: topology.FormatRate(v), ink: &p.faint}
		}
		return cell{text: topology.FormatRate(v), ink: &p.text}
	}
	return t.row(b, p, func(c column, w int) cell {
		switch c.id {
		case "mark":
			return cell{text: mark, ink: markInk}
		case "lvl":
			switch {
			case r.Kind != health.RungRow:
				return cell{ink: &p.muted}
			case w > 3:
				return cell{text: fmt.Sprintf("%02d.%x", r.Level, r.Digit), ink: &p.muted}
			}
			return cell{text: fmt.Sprintf("%02d", r.Level), ink: &p.muted}
		case "queue":
			return cell{text: r.Queue, ink: nameInk, cutL: true}
		case "ttl":
			if r.Kind != health.RungRow {
				return cell{text: "—", ink: &p.text}
			}
			ttl := topology.FormatSpan(r.TTL)
			if len(ttl) > w {
				ttl = ShortDelay(r.TTL)
			}
			return cell{text: ttl, ink: &p.text}
		case "ready":
			return count(r.Stats.Ready)
		case "unack":
			return count(r.Stats.Unacked)
		case "expired":
			if r.Stalled {
				return cell{text: topology.FormatCount(r.Stats.Expired), ink: &p.danger}
			}
			return count(r.Stats.Expired)
		case "delayed":
			if r.Kind == health.RungRow && r.Stats.Delayed > 0 {
				return cell{text: topology.FormatCount(r.Stats.Delayed), ink: &p.warn}
			}
			return count(r.Stats.Delayed)
		case "bar":
			if r.Missing {
				return cell{}
			}
			ink := &p.bar
			if r.Stuck || r.Stalled {
				ink = &p.barWarn
			}
			fill, track := barText(r.Stats.Messages(), maxDepth, w)
			return cell{text: fill, track: track, ink: ink, bar: true}
		case "in":
			return rate(r.InRate)
		case "out":
			return rate(r.OutRate)
		case "cons":
			return count(r.Stats.Consumers)
		case "arrive":
			switch {
			case r.Hop != nil:
				return cell{text: "+" + topology.FormatSpan(r.Hop.Start), ink: &p.hop}
			case r.End:
				return cell{text: "+" + topology.FormatSpan(r.EndAt), ink: &p.hop}
			}
		case "head":
			if r.Stats.HeadAge > 0 {
				return cell{text: topology.FormatAge(r.Stats.HeadAge), ink: &p.text}
			}
		case "state":
			return cell{text: r.Stats.State, ink: &p.muted}
		case "status":
			return cell{text: statusText(r), ink: p.severity(r.Severity)}
		case "flag":
			return cell{text: flag(r.Severity), ink: p.severity(r.Severity)}
		}
		return cell{}
	})
}

func flag(s health.Severity) string {
	switch s {
	case health.Notice:
		return "·"
	case health.Warning:
		return "⚠"
	case health.Problem:
		return "✗"
	}
	return ""
}

func severityStyle(s health.Severity, st Styles) lipgloss.Style {
	switch s {
	case health.Notice:
		return st.Muted
	case health.Warning:
		return st.Warn
	case health.Problem:
		return st.Danger
	}
	return st.OK
}

// statusText is the STATUS column: the row's tag behind its flag.
func statusText(r health.Row) string {
	if r.Tag != "" {
		return flag(r.Severity) + " " + r.Tag
	}
	return ""
}

// rowDetail is the two lines under the table about the selected row.
func rowDetail(s LadderState, st Styles, w int) string {
	if s.ShowDrift || s.ShowCost || s.ShowForecast || s.Selected < 0 || s.Selected >= len(s.Rows) {
		return ""
	}
	r := s.Rows[s.Selected]
	sep := st.Faint.Render(" · ")
	facts := []string{st.Bold.Render(r.Queue)}
	if r.Kind == health.RungRow {
		facts = append(facts, "TTL "+topology.FormatSpan(r.TTL))
	} else {
		facts = append(facts, r.Kind.Section())
	}
	if r.DeadLetter != "" {
		facts = append(facts, "DLX "+r.DeadLetter)
	}
	if !r.Missing {
		if r.Stats.Consumers > 0 || r.Kind != health.RungRow {
			facts = append(facts, fmt.Sprintf("%d %s", r.Stats.Consumers, topology.Plural(r.Stats.Consumers, "consumer", "consumers")))
		}
		if r.Stats.State != "" {
			facts = append(facts, r.Stats.State)
		}
		if n := r.Stats.Expired; n > 0 {
			facts = append(facts, topology.FormatCount(n)+" expired waiting to be dead-lettered")
		}
		if n := r.Stats.Delayed; n > 0 {
			facts = append(facts, topology.FormatCount(n)+" held by delayed retry")
		}
		if f, ok := destFlow(s.Drain, r.Queue); ok {
			facts = append(facts, health.DestFlowText(f))
		}
		if m := len(r.Stats.Members); m > 1 {
			// Where it runs, in a cluster only.
			facts = append(facts, fmt.Sprintf("leader %s, %d/%d members online", r.Stats.Leader, m-len(r.Stats.LostMembers()), m))
		}
	}
	judged := st.OK.Render("✓ ok")
	if ls := s.judgementLines(w); len(ls) > 0 {
		for i := range ls {
			ls[i] = severityStyle(r.Severity, st).Render(ls[i])
		}
		judged = strings.Join(ls, "\n")
	}
	return strings.Join(facts, sep) + "\n" + judged
}

// destFlow is the flow the readings show of queue, when it is one the
// ladder delivers to.
func destFlow(d health.Drain, queue string) (health.DestFlow, bool) {
	for _, f := range d.Dests {
		if f.Queue == queue {
			return f, true
		}
	}
	return health.DestFlow{}, false
}

// LadderText renders a ladder as plain text, without colour or cursor, for
// non-interactive use (`rungs status`): the summary, the rows (folded of
// them: idle rungs left out, see health.StatusRows), what is wrong with
// which queue, and the drift. A width of 0 or less means 120.
func LadderText(lr health.LadderReport, rows []health.Row, folded, width int) string {
	if width <= 0 {
		width = 120
	}
	var st Styles
	f := lr.Found
	s := LadderState{Found: f, Rows: rows, Selected: -1, Folded: folded, Totals: lr.Totals, Forecast: lr.Forecast, Drain: lr.Drain, Placement: lr.Placement}
	out := []string{ladderSummary(s, st, width, "", false)}
	if sp := lr.Placement.Spread(); sp != "" {
		out = append(out, wrap("leaders: "+sp, width, "  ")...)
	}
	out = append(out, "")
	for _, l := range tableText(ladderLayout(s, width), s, tableLines(rows), st, width) {
		out = append(out, l.s)
	}
	if folded > 0 {
		out = append(out, fmt.Sprintf("  (%d idle %s not listed: --all lists every rung)", folded, topology.Plural(int64(folded), "rung", "rungs")))
	}
	var problems []string
	if lost := lr.Placement.LostText(); lost != "" && lr.Totals.NoQuorum == 0 {
		// Said once: a node down touches every queue of the ladder.
		problems = append(problems, wrap(flag(health.Warning)+" "+lost+"; each works while a majority of its members runs it", width, "    ")...)
	}
	for _, r := range rows {
		if r.Status != "" && !(r.StatusIsMembership() && r.Severity < health.Problem) {
			problems = append(problems, wrap(flag(r.Severity)+" "+r.Queue+": "+r.Status, width, "    ")...)
		}
	}
	// A lost route's remedy, once for each remedy the rows name: the
	// judgement carries it, the view only prints it.
	for _, rem := range health.LostRemedies(rows) {
		problems = append(problems, wrap("    "+remedyLabel+rem, width, "      ")...)
	}
	if len(problems) > 0 {
		out = append(out, "")
		out = append(out, problems...)
	}
	if len(f.Drift) > 0 {
		out = append(out, "", driftList(f, 0, st, width, DriftLines(f, width)+1, false))
	}
	out = strings.Split(strings.Join(out, "\n"), "\n")
	for i, l := range out {
		// Plain text: the table strikes a missing queue's name through
		// whatever the styles, and status is read by scripts too.
		out[i] = strings.TrimRight(ansi.Strip(l), " ")
	}
	return strings.Join(out, "\n") + "\n"
}
