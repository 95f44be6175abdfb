package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// KeyHints renders enabled bindings as "key desc · key desc" in w cells.
// The bindings come most important first, except the last, which is
// always shown (it is the way to the full help): when room runs out, the
// items before it are left off and "…" says so.
func KeyHints(bs []key.Binding, st Styles, w int) string {
	var items []string
	for _, b := range bs {
		if b.Enabled() && b.Help().Key != "" {
			items = append(items, st.Key.Render(b.Help().Key)+" "+st.KeyDesc.Render(b.Help().Desc))
		}
	}
	if len(items) == 0 {
		return ""
	}
	sep := st.Faint.Render(" · ")
	all := strings.Join(items, sep)
	if lipgloss.Width(all) <= w {
		return all
	}
	last := items[len(items)-1]
	more := st.Faint.Render(" … ")
	room := w - lipgloss.Width(last) - lipgloss.Width(more)
	out := ""
	for _, it := range items[:len(items)-1] {
		next := it
		if out != "" {
			next = out + sep + it
		}
		if lipgloss.Width(next) > room {
			break
		}
		out = next
	}
	return out + more + last
}

// Footer is the last line: key hints, or an input line when one is open.
func Footer(content string, st Styles, w int) string {
	return fit(" "+content, w, false)
}

// Dialog frames body under a title in a box at most w cells wide.
func Dialog(title, body string, titleStyle lipgloss.Style, st Styles, w int) string {
	inner := w - st.Dialog.GetHorizontalFrameSize()
	content := titleStyle.Render(ansi.Truncate(title, inner, "…")) + "\n\n" + body
	bw := 0
	for _, l := range strings.Split(content, "\n") {
		bw = max(bw, lipgloss.Width(l))
	}
	bw = min(bw, inner)
	var ls []string
	for _, l := range strings.Split(content, "\n") {
		ls = append(ls, fit(l, bw, false))
	}
	return st.Dialog.Render(strings.Join(ls, "\n"))
}

// Overlay draws box over base, a w×h screen, centred between the header
// and the footer so that both stay visible. The base shows around the box
// so the operator keeps their bearings.
func Overlay(base, box string, w, h int) string {
	bw, bh := lipgloss.Size(box)
	top, bottom := HeaderHeight, h-1
	x := max(0, (w-bw)/2)
	y := max(0, top+(bottom-top-bh)/2)
	if y+bh > h {
		y = max(0, h-bh)
	}
	c := lipgloss.NewCompositor(lipgloss.NewLayer(base), lipgloss.NewLayer(box).X(x).Y(y).Z(1))
	return block(c.Render(), w, h)
}

// OverlayHeight is the tallest box Overlay can show with the header and
// footer in sight.
func OverlayHeight(h int) int { return max(3, h-HeaderHeight-1) }

// HelpGroup is one column of the help overlay.
type HelpGroup struct {
	Title string
	Keys  []key.Binding
}

// HelpCommand is one `:` command in the help overlay.
type HelpCommand struct {
	Usage string
	Desc  string
}

// HelpOverlay renders the full key help as a dialog of at most w×h cells.
// Disabled bindings (actions switched off in read-only mode) stay listed,
// struck through, so that the operator learns they exist and why they do
// nothing.
func HelpOverlay(groups []HelpGroup, cmds []HelpCommand, note string, st Styles, w, h int) string {
	var cols []string
	for _, g := range groups {
		keyW := 0
		for _, b := range g.Keys {
			keyW = max(keyW, lipgloss.Width(b.Help().Key))
		}
		ls := []string{st.TableHeader.Render(strings.ToUpper(g.Title))}
		for _, b := range g.Keys {
			if b.Help().Key == "" {
				continue
			}
			k := fit(b.Help().Key, keyW, false)
			if b.Enabled() {
				ls = append(ls, st.Key.Render(k)+" "+st.KeyDesc.Render(b.Help().Desc))
			} else {
				ls = append(ls, st.KeyOff.Render(k)+" "+st.KeyOff.Render(b.Help().Desc))
			}
		}
		cols = append(cols, strings.Join(ls, "\n"))
	}
	inner := w - st.Dialog.GetHorizontalFrameSize()
	keys := flow(cols, "   ", inner)

	usageW := 0
	for _, c := range cmds {
		usageW = max(usageW, len(c.Usage))
	}
	cl := []string{st.TableHeader.Render("COMMANDS")}
	for _, c := range cmds {
		cl = append(cl, st.Key.Render(fit(c.Usage, usageW, false))+"  "+st.KeyDesc.Render(c.Desc))
	}
	body := keys + "\n\n" + strings.Join(cl, "\n")
	closes := st.Muted.Render("esc closes")
	if note != "" {
		closes = st.Warn.Render(note) + st.Faint.Render(" · ") + closes
	}
	// Cut to the room between header and footer: a help that overflows
	// would push them off screen.
	maxBody := max(1, OverlayHeight(h)-2-st.Dialog.GetVerticalFrameSize())
	bl := strings.Split(body, "\n")
	if len(bl) > maxBody {
		bl = append(bl[:maxBody-1], st.Muted.Render("… a taller terminal shows the rest"))
	}
	bodyW := lipgloss.Width(strings.Join(bl, "\n"))
	titleW := lipgloss.Width("Keys and commands") + 2 + lipgloss.Width(closes)
	title := spread(st.DialogTitle.Render("Keys and commands"), closes, min(inner, max(bodyW, titleW)))
	return Dialog(title, strings.Join(bl, "\n"), lipgloss.NewStyle(), st, w)
}

// flow lays blocks out side by side, wrapping to a new row of blocks when
// the next one would not fit in w cells.
func flow(blocks []string, gap string, w int) string {
	var rows []string
	var cur []string
	curW := 0
	for _, b := range blocks {
		bw := lipgloss.Width(b)
		if len(cur) > 0 && curW+len(gap)+bw > w {
			rows = append(rows, joinCols(cur, gap))
			cur, curW = nil, 0
		}
		if len(cur) > 0 {
			curW += len(gap)
		}
		cur = append(cur, b)
		curW += bw
	}
	if len(cur) > 0 {
		rows = append(rows, joinCols(cur, gap))
	}
	return strings.Join(rows, "\n\n")
}

func joinCols(cols []string, gap string) string {
	parts := make([]string, 0, 2*len(cols))
	for i, c := range cols {
		if i > 0 {
			parts = append(parts, gap)
		}
		parts = append(parts, c)
	}
	return lipgloss.JoinHorizontal(lipgloss.Top, parts...)
}

// FormField is one field of a form.
type FormField struct {
	Label   string
	Input   string // the rendered input
	Focused bool
	Hint    string
}

// FormState is a form dialog: fields, a live preview and key hints.
type FormState struct {
	Title      string
	Fields     []FormField
	Preview    []string // lines describing what submitting would do
	PreviewErr string
	Keys       []key.Binding
}

// Form renders a form dialog at most w cells wide.
func Form(f FormState, st Styles, w int) string {
	inner := w - st.Dialog.GetHorizontalFrameSize()
	labelW := 0
	for _, fl := range f.Fields {
		labelW = max(labelW, lipgloss.Width(fl.Label))
	}
	var ls []string
	for _, fl := range f.Fields {
		label, mark := st.Label, " "
		if fl.Focused {
			label, mark = st.FocusedLabel, st.Accent.Render("▸")
		}
		line := mark + " " + label.Render(fit(fl.Label, labelW, false)) + "  " + fl.Input
		if fl.Hint != "" && fl.Focused {
			line += "  " + st.Faint.Render(fl.Hint)
		}
		ls = append(ls, ansi.Truncate(line, inner, "…"))
	}
	ls = append(ls, "")
	if f.PreviewErr != "" {
		ls = append(ls, wrap(st.Danger.Render("✗ "+f.PreviewErr), inner, "  ")...)
	} else {
		for _, p := range f.Preview {
			ls = append(ls, wrap(p, inner, "  ")...)
		}
	}
	ls = append(ls, "", KeyHints(f.Keys, st, inner))
	return Dialog(f.Title, strings.Join(ls, "\n"), st.DialogTitle, st, w)
}

// ConfirmState is a confirmation dialog for a destructive action.
type ConfirmState struct {
	Title string
	// Lines say exactly what will be lost.
	Lines []string
	// Prompt and Input are set when the operator must type a name.
	Prompt string
	Input  string
	Err    string
	Keys   []key.Binding
}

// Confirm renders a confirmation dialog at most w cells wide.
func Confirm(c ConfirmState, st Styles, w int) string {
	inner := w - st.Dialog.GetHorizontalFrameSize()
	var ls []string
	for _, l := range c.Lines {
		ls = append(ls, wrap(l, inner, "")...)
	}
	if c.Prompt != "" {
		ls = append(ls, "", st.Bold.Render(c.Prompt)+" "+c.Input)
	}
	if c.Err != "" {
		ls = append(ls, st.Danger.Render("✗ "+c.Err))
	}
	ls = append(ls, "", KeyHints(c.Keys, st, inner))
	return Dialog(c.Title, strings.Join(ls, "\n"), st.DangerTitle, st, w)
}

// Message renders a centred block of text for empty, loading and failed
// states, in w×h cells.
func Message(title, detail string, titleStyle lipgloss.Style, st Styles, w, h int) string {
	var ls []string
	ls = append(ls, wrap(titleStyle.Render(title), w-4, "")...)
	if detail != "" {
		ls = append(ls, "")
		for _, d := range strings.Split(detail, "\n") {
			ls = append(ls, wrap(st.Muted.Render(d), w-4, "")...)
		}
	}
	body := strings.Join(ls, "\n")
	return block(lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, body), w, h)
}

// Banner word-wraps text in style to at most maxLines lines of w cells,
// each starting with a space like the footer.
func Banner(text string, style lipgloss.Style, w, maxLines int) string {
	ls := strings.Split(ansi.Wrap(text, max(1, w-2), " "), "\n")
	if len(ls) > maxLines {
		ls = ls[:maxLines]
		ls[maxLines-1] = ansi.Truncate(ls[maxLines-1], w-3, "…")
	}
	for i, l := range ls {
		ls[i] = fit(" "+style.Render(l), w, false)
	}
	return strings.Join(ls, "\n")
}
