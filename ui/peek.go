package ui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// PeekState is a peek as the console shows it: the messages read from the
// head of a queue, one of them selected and described in full.
type PeekState struct {
	Queue string
	// QueueType is "classic" or "quorum"; "" when unknown.
	QueueType string
	// Ready is how many ready messages the queue held when the peek began.
	Ready    int
	Messages []broker.PeekedMessage
	// Stories are the messages' stories (ops.PeekStories), one per message.
	Stories []topology.Story
	// Selected indexes Messages; Offset is the first message row shown and
	// Scroll the first line of the detail pane.
	Selected int
	Offset   int
	Scroll   int
	// Effect says in one line what peeking did to the messages; Warn
	// colours it as a warning (a forced peek of a quorum queue).
	Effect string
	Warn   bool
	// Stale, when set, says why the messages shown may have gone (a replay
	// since the peek); it takes Effect's place.
	Stale string
	// At is when the peek was taken, Now the clock (for ages).
	At, Now time.Time
	// MaxBody is how much of a body is shown (0: all).
	MaxBody int
}

// peekChrome is the peek view's fixed lines: summary, effect, the list's
// column titles and the detail pane's title.
const peekChrome = 4

// ListHeight is how many message rows a peek view of height h shows: a
// third of the room, at least three, so that the detail gets the rest.
func (s PeekState) ListHeight(h int) int {
	n := len(s.Messages)
	if n == 0 {
		return 0
	}
	return max(1, min(n, max(3, (h-peekChrome)/3)))
}

// DetailHeight is how many detail lines a peek view of height h shows.
func (s PeekState) DetailHeight(h int) int { return max(1, h-peekChrome-s.ListHeight(h)) }

// DetailLen is how many lines the selected message's detail has at width
// w; the model scrolls through them.
func (s PeekState) DetailLen(w int) int { return len(peekDetail(s, Styles{}, w)) }

// labelW is the width of the detail pane's label column.
const labelW = 13

// PeekView renders a peek in w×h cells: a summary, a line saying what
// peeking did, the list of messages and the selected one's detail.
func PeekView(s PeekState, st Styles, w, h int) string {
	sep := st.Faint.Render(" · ")
	facts := []string{st.Crumb.Render(s.Queue)}
	if s.QueueType != "" {
		facts = append(facts, s.QueueType+" queue")
	}
	facts = append(facts, fmt.Sprintf("%s of %s ready, from the head", st.Bold.Render(topology.FormatCount(int64(len(s.Messages)))), topology.FormatCount(int64(s.Ready))))
	if !s.At.IsZero() {
		facts = append(facts, "peeked "+s.At.Format("15:04:05"))
	}
	effect := st.Muted
	if s.Warn {
		effect = st.Warn
	}
	out := []string{strings.Join(facts, sep), effect.Render(s.Effect)}
	if s.Stale != "" {
		out[1] = st.Warn.Render("⚠ " + s.Stale)
	}
	if len(s.Messages) == 0 {
		out = append(out, "", st.Muted.Render("  "+s.Queue+" has no ready messages: nothing to peek"))
		return block(strings.Join(out, "\n"), w, h)
	}
	listH := s.ListHeight(h)
	sel := max(0, min(s.Selected, len(s.Messages)-1))
	offset := scroll(sel, s.Offset, listH, len(s.Messages))
	t := newTable(peekColumns(s), w)
	plain := newPalette(st, false)
	var b lineBuffer
	b.end(t.header(&b.Builder, plain))
	for i := offset; i < offset+listH && i < len(s.Messages); i++ {
		p := plain
		if i == sel {
			p = newPalette(st, true)
		}
		b.end(peekRow(&b.Builder, t, s, i, i == sel, p))
	}
	for _, l := range b.lines() {
		out = append(out, l.s)
	}
	s.Selected = sel
	detail := peekDetail(s, st, w)
	dh := s.DetailHeight(h)
	top := max(0, min(s.Scroll, len(detail)-dh))
	pos := ""
	if len(detail) > dh {
		pos = fmt.Sprintf("%d–%d/%d", top+1, min(len(detail), top+dh), len(detail))
		switch {
		case top == 0:
			pos += " ↓"
		case top+dh >= len(detail):
			pos += " ↑"
		default:
			pos += " ↕"
		}
		pos = st.Muted.Render(pos + " pgup/pgdn")
	}
	m := s.Messages[sel]
	title := st.Faint.Render("─ ") + st.Bold.Render(fmt.Sprintf("#%d", m.Position+1)) + " " + messageID(m) +
		st.Muted.Render(fmt.Sprintf(" · %d of %d", sel+1, len(s.Messages))) + " "
	title += st.Faint.Render(strings.Repeat("─", max(0, w-lipgloss.Width(title)-lipgloss.Width(pos)-1)))
	out = append(out, spread(title, pos, w))
	end := min(len(detail), top+dh)
	out = append(out, detail[top:end]...)
	return block(strings.Join(out, "\n"), w, h)
}

// peekColumns are the message list's columns, by importance.
func peekColumns(s PeekState) []column {
	cols := []column{
		{id: "mark", width: 1},
		{id: "pos", title: "#", width: 3, right: true},
		{id: "id", title: "MESSAGE ID", width: 14, flex: 6},
		{id: "body", title: "BODY", width: 12, drop: 3},
		{id: "deaths", title: "HOPS", width: 4, right: true, drop: 4},
		{id: "last", title: "LAST DEATH", width: 20, flex: -1, drop: 2},
	}
	for _, m := range s.Messages {
		if m.DeliveryCount >= 0 {
			cols = append(cols, column{id: "deliv", title: "DELIV", width: 5, right: true, drop: 6})
			break
		}
	}
	return append(cols, column{id: "age", title: "AGE", width: 5, right: true, drop: 5})
}

// peekRow writes message i of the list to b and returns its width, as
// table.row does. p is the row's palette: plain, or the selection's.
func peekRow(b *strings.Builder, t table, s PeekState, i int, selected bool, p *palette) int {
	m := s.Messages[i]
	mark := " "
	if selected {
		mark = "▸"
	}
	kind := BodyKind(m.Body, m.ContentType)
	if kind == "binary" {
		kind = "hex"
	}
	story := s.story(i)
	deaths := story.Deaths
	last, lastInk := "", &p.muted
	switch {
	case story.DeathErr != nil:
		last, lastInk = "malformed x-death", &p.warn
	case len(deaths) > 0:
		d := deaths[0]
		last = fmt.Sprintf("%s from %s ×%d", d.Reason, d.Queue, d.Count)
		if d.Reason != "expired" {
			lastInk = &p.danger
		}
	}
	age := ""
	if !m.Timestamp.IsZero() && !s.Now.IsZero() && s.Now.After(m.Timestamp) {
		age = topology.FormatAge(s.Now.Sub(m.Timestamp))
	}
	numInk := &p.text
	if len(deaths) == 0 {
		numInk = &p.faint
	}
	return t.row(b, p, func(c column, _ int) cell {
		switch c.id {
		case "mark":
			return cell{text: mark, ink: &p.accent}
		case "pos":
			return cell{text: fmt.Sprint(m.Position + 1), ink: &p.muted}
		case "id":
			return cell{text: messageID(m), ink: &p.text}
		case "body":
			return cell{text: topology.FormatBytes(int64(len(m.Body))) + " " + kind, ink: &p.text}
		case "deaths":
			return cell{text: fmt.Sprint(len(deaths)), ink: numInk}
		case "last":
			return cell{text: last, ink: lastInk}
		case "deliv":
			return cell{text: fmt.Sprint(m.DeliveryCount), ink: &p.text}
		case "age":
			return cell{text: age, ink: &p.muted}
		}
		return cell{}
	})
}

// peekDetail is the selected message described in full: the blocks peek
// prints, with labels in a column, the x-death history first, drawn as a
// timeline ending in the queue the message is in now, then the retry
// history and the body: what an operator opens a dead letter for.
func peekDetail(s PeekState, st Styles, w int) []string {
	if s.Selected < 0 || s.Selected >= len(s.Messages) {
		return nil
	}
	m := s.Messages[s.Selected]
	var first, body, rest []Block
	story := s.story(s.Selected)
	for _, b := range MessageBlocks(m, story, s.MaxBody) {
		switch b.Label {
		case "x-death", "saved x-death", "retries":
			first = append(first, b)
		case "body":
			body = append(body, b)
		default:
			rest = append(rest, b)
		}
	}
	var out []string
	if !story.DeadLettered() {
		out = append(out, st.Label.Render(fit("x-death", labelW, false))+"  "+st.Faint.Render("none: this message was never dead-lettered"))
	}
	for _, b := range append(append(first, body...), rest...) {
		out = append(out, detailBlock(b, s.Queue, st, w)...)
	}
	for i, l := range out {
		out[i] = ansi.Truncate(l, w, "…")
	}
	return out
}

// detailBlock lays out one block in w cells: beside its label when it
// fits, else under it (a timeline, a hex dump), else word-wrapped beside
// it (a long property list or header).
func detailBlock(b Block, queue string, st Styles, w int) []string {
	indent := strings.Repeat(" ", labelW+2)
	label := st.Label.Render(fit(b.Label, labelW, false)) + "  "
	head, lines := b.Head, b.Lines
	widest := 0
	for _, l := range lines {
		widest = max(widest, lipgloss.Width(l))
	}
	under := func(head string, lines []string) []string {
		out := []string{label + head}
		for _, l := range lines {
			out = append(out, "  "+l)
		}
		return out
	}
	switch {
	case b.Hops != nil:
		// A timeline reads down the page: it goes under its label. A key
		// every hop shares is said once, above it.
		head = fmt.Sprintf("%d %s, oldest first", len(b.Hops), topology.Plural(int64(len(b.Hops)), "queue", "queues"))
		key, same := commonKey(b.Hops)
		if same {
			head += " · key " + key
		}
		return under(st.Muted.Render(head), timeline(b.Hops, queue, b.Label == "x-death", same, st))
	case widest+len(indent) <= w:
	case widest+2 <= w && (len(lines) > 1 || head != ""):
		return under(head, lines)
	default:
		var wrapped []string
		for _, l := range lines {
			wrapped = append(wrapped, wrap(l, max(8, w-len(indent)), "  ")...)
		}
		lines = wrapped
	}
	if head == "" && len(lines) > 0 {
		head, lines = lines[0], lines[1:]
	}
	out := []string{label + head}
	for _, l := range lines {
		out = append(out, indent+l)
	}
	return out
}

// timeline draws dead-letter hops one a line, oldest first: ● a rung it
// expired from, ✗ a queue that rejected or dropped it, ○ any other queue,
// and (now) ◆ the queue it is in.
func timeline(hops []topology.DeathHop, queue string, now, sameKey bool, st Styles) []string {
	rows := DeathRows(hops)
	if sameKey {
		for i, h := range hops {
			rows[i][len(rows[i])-1] = "from " + orDefault(h.Exchange)
		}
	}
	marks := make([]string, 0, len(rows)+1)
	styles := make([]lipgloss.Style, 0, len(rows)+1)
	for i, h := range hops {
		mark, style := "○", st.Muted
		switch {
		case h.Reason != "expired":
			mark, style = "✗", st.Danger
		case h.Role == topology.RoleRung:
			mark, style = "●", st.Hop
		}
		marks, styles = append(marks, mark), append(styles, style)
		rows[i] = append([]string{mark}, rows[i]...)
	}
	if now {
		rows = append(rows, []string{"◆", "now", queue})
		marks, styles = append(marks, "◆"), append(styles, st.Hop)
	}
	lines := AlignRows(rows)
	for i, l := range lines {
		lines[i] = styles[i].Render(marks[i]) + strings.TrimPrefix(l, marks[i])
	}
	return lines
}

// commonKey returns the routing key every hop had, if they share one.
func commonKey(hops []topology.DeathHop) (string, bool) {
	key := ""
	for i, h := range hops {
		k := strings.Join(h.RoutingKeys, ",")
		if i > 0 && k != key || k == "" {
			return "", false
		}
		key = k
	}
	return key, len(hops) > 0
}

// MessageTrace is a peeked message traced on its ladder: which message,
// the queues its x-death says it has left (oldest first) and the queue it
// is in now.
type MessageTrace struct {
	Label string
	Hops  []topology.DeathHop
	Now   string
}

// messageTraceLines is the trace pane's line about a traced message: where
// its x-death says it has been, and where it is now.
func messageTraceLines(mt MessageTrace, st Styles, w int) []string {
	items := []string{st.Bold.Render(mt.Label)}
	for _, h := range mt.Hops {
		name := h.Queue
		if h.Role == topology.RoleRung {
			name = fmt.Sprintf("L%02d", h.Rung.Level)
		}
		if h.Reason != "expired" {
			items = append(items, st.Danger.Render("✗ "+name+" "+h.Reason))
			continue
		}
		items = append(items, st.OK.Render("✓ "+name))
	}
	items = append(items, st.Hop.Render("now "+mt.Now))
	indent := "      "
	chain := wrapItems(items, st.Faint.Render(" › "), w-len(indent))
	if len(chain) > 2 {
		chain = append(chain[:1], st.Muted.Render(fmt.Sprintf("… %d more lines; ✓ marks the queues it has left", len(chain)-1)))
	}
	for i, c := range chain {
		prefix := indent
		if i == 0 {
			prefix = st.Muted.Render("msg   ")
		}
		chain[i] = prefix + c
	}
	return chain
}

// story is message i's story; none when the caller gave no stories.
func (s PeekState) story(i int) topology.Story {
	if i < len(s.Stories) {
		return s.Stories[i]
	}
	return topology.Story{}
}
