package ui

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/health"
)

// ink is a style rendered once, on first use. For a style that only
// colours text (no padding, borders, widths or separately styled spaces),
// Render(s) is always pre + s + post, so drawing a cell costs two string
// writes. Render itself re-reads every property of the style on each
// call, which made it most of the cost of a table.
type ink struct {
	style lipgloss.Style
	// over is the row background the style inherits, applied on first use
	// like the rest, because a view uses only a few of a palette's inks.
	over      *lipgloss.Style
	pre, post string
	wraps     bool // Render only wraps text in pre and post
	ready     bool
}

func newInk(s lipgloss.Style) ink {
	k := ink{style: s}
	k.prepare()
	return k
}

func (k *ink) prepare() {
	if k.over != nil {
		k.style = k.style.Inherit(*k.over)
		k.over = nil
	}
	if onlyColours(k.style) {
		k.pre, k.post, k.wraps = strings.Cut(k.style.Render("x"), "x")
	}
	k.ready = true
}

// onlyColours reports whether Render only wraps text in escape sequences.
func onlyColours(s lipgloss.Style) bool {
	link, _ := s.GetHyperlink()
	return s.Value() == "" && s.GetTransform() == nil && link == "" &&
		s.GetHorizontalFrameSize() == 0 && s.GetVerticalFrameSize() == 0 &&
		s.GetWidth() == 0 && s.GetHeight() == 0 && s.GetMaxWidth() == 0 && s.GetMaxHeight() == 0 &&
		!s.GetUnderline() && !s.GetStrikethrough() && !s.GetUnderlineSpaces() && !s.GetStrikethroughSpaces()
}

// write writes Render(s) to b and reports whether s kept its width: Render
// turns tabs into spaces and CRLF into LF, so such text goes through it.
func (k *ink) write(b *strings.Builder, s string) (kept bool) {
	return k.writePadded(b, 0, s, 0)
}

// writePadded writes Render of s between left and right spaces, as write
// does, without building the padded string.
func (k *ink) writePadded(b *strings.Builder, left int, s string, right int) (kept bool) {
	if !k.ready {
		k.prepare()
	}
	if !k.wraps || strings.ContainsAny(s, "\t\r\n") {
		b.WriteString(k.style.Render(strings.Repeat(" ", left) + s + strings.Repeat(" ", right)))
		return false
	}
	b.WriteString(k.pre)
	writeSpaces(b, left)
	b.WriteString(s)
	writeSpaces(b, right)
	b.WriteString(k.post)
	return true
}

// blanks is padding to write from without building it.
const blanks = "                                                                "

func writeSpaces(b *strings.Builder, n int) {
	for ; n > len(blanks); n -= len(blanks) {
		b.WriteString(blanks)
	}
	b.WriteString(blanks[:n])
}

// palette is the styles table cells use, as inks over one row background:
// plain rows share one palette and the selected row has its own, so each
// style is rendered at most once per view rather than once per cell.
type palette struct {
	// base is the background itself: gaps, padding, a bar's empty track.
	base                                            ink
	text, muted, faint, accent, bold, ok, warn, hop ink
	danger, bar, barWarn                            ink
	// header is for column titles, section for the headings between
	// rows, struck for a queue the plan has and the broker lacks.
	header, section, struck ink
}

// newPalette holds st's table styles for plain rows or, if selected, over
// the cursor's background.
func newPalette(st Styles, selected bool) *palette {
	p := &palette{}
	var over *lipgloss.Style
	if selected {
		p.base = newInk(st.Selected)
		over = &p.base.style
	} else {
		p.base = newInk(lipgloss.NewStyle())
	}
	in := func(s lipgloss.Style) ink { return ink{style: s, over: over} }
	p.text, p.muted, p.faint = in(st.Text), in(st.Muted), in(st.Faint)
	p.accent, p.bold, p.hop = in(st.Accent), in(st.Bold), in(st.Hop)
	p.ok, p.warn, p.danger = in(st.OK), in(st.Warn), in(st.Danger)
	p.bar, p.barWarn, p.header = in(st.Bar), in(st.BarWarn), in(st.TableHeader)
	p.section, p.struck = in(st.Section), in(st.Danger.Strikethrough(true))
	return p
}

func (p *palette) severity(s health.Severity) *ink {
	switch s {
	case health.Notice:
		return &p.muted
	case health.Warning:
		return &p.warn
	case health.Problem:
		return &p.danger
	}
	return &p.ok
}

// measurable reports whether s, written between spaces or escape
// sequences, adds just its own width to a line. Control characters could
// start an escape sequence that swallows what follows, and a combining
// mark at the start or a prepended one at the end would join a
// neighbouring space into one character.
func measurable(s string) bool {
	ascii := true
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c == 0x7f:
			return false
		case c >= 0x80:
			ascii = false
		}
	}
	if ascii {
		return true
	}
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) {
			return false
		}
	}
	if first, _ := ansi.FirstGraphemeCluster(" "+s, ansi.GraphemeWidth); first != " " {
		return false
	}
	rest := s + " "
	for {
		c, _ := ansi.FirstGraphemeCluster(rest, ansi.GraphemeWidth)
		if len(c) == len(rest) {
			return c == " "
		}
		rest = rest[len(c):]
	}
}

// textWidth is lipgloss.Width without the grapheme walk for printable
// ASCII, which most cells are.
func textWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return lipgloss.Width(s)
		}
	}
	return len(s)
}
