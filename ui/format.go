package ui

import (
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/topology"
)

// ShortDelay prints a delay in at most two adjacent units, for narrow
// columns: exact below a minute, then rounded to the lower unit (1h8m16s
// becomes 1h8m, 3d0h49m4s becomes 3d1h). Exact values are shown wherever
// there is room: summary lines, traces, details.
func ShortDelay(d time.Duration) string {
	two := func(d, hi, lo time.Duration, hs, ls string) string {
		d = d.Round(lo)
		h, l := d/hi, (d%hi)/lo
		if l == 0 {
			return strconv.FormatInt(int64(h), 10) + hs
		}
		return strconv.FormatInt(int64(h), 10) + hs + strconv.FormatInt(int64(l), 10) + ls
	}
	switch {
	case d < time.Minute:
		return topology.FormatSpan(d)
	case d < time.Hour-30*time.Second:
		return two(d, time.Minute, time.Second, "m", "s")
	case d < 24*time.Hour-30*time.Minute:
		return two(d, time.Hour, time.Minute, "h", "m")
	default:
		return two(d, 24*time.Hour, time.Hour, "d", "h")
	}
}

// MaxDelay prints a ladder's longest delay: exactly below a day, in days
// and whole hours above (3106d21h for 2^28 s), rounded down so that the
// figure never promises more than the ladder holds.
func MaxDelay(d time.Duration) string {
	if d < 24*time.Hour {
		return topology.FormatSpan(d)
	}
	return ShortDelay(d.Truncate(time.Hour))
}

// fit pads or cuts s (which may be styled) to exactly w cells. Text that
// does not fit ends in an ellipsis, so a cut is never silent.
func fit(s string, w int, right bool) string {
	if w <= 0 {
		return ""
	}
	return fitWidth(s, lipgloss.Width(s), w, right)
}

// fitWidth is fit for s already known to be sw cells wide.
func fitWidth(s string, sw, w int, right bool) string {
	if w <= 0 {
		return ""
	}
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	pad := strings.Repeat(" ", w-sw)
	if right {
		return pad + s
	}
	return s + pad
}

// fitLeft cuts from the left, keeping the end of s: queue names differ in
// their last words (orders.rung.07), so that is the part worth keeping.
func fitLeft(s string, w int) string {
	sw := lipgloss.Width(s)
	if sw <= w {
		return s + strings.Repeat(" ", w-sw)
	}
	if w <= 1 {
		return ansi.Truncate(s, w, "")
	}
	return "…" + ansi.TruncateLeft(s, sw-w+1, "")
}

// lines splits rendered text into exactly h lines of width w, padding short
// content and cutting long content, so that callers can stack blocks
// without the layout shifting.
func lines(s string, w, h int) []string {
	var out []string
	if s != "" {
		out = strings.Split(s, "\n")
	}
	if len(out) > h {
		out = out[:h]
	}
	for len(out) < h {
		out = append(out, "")
	}
	for i, l := range out {
		out[i] = fit(l, w, false)
	}
	return out
}

// block joins lines into exactly h lines of width w.
func block(s string, w, h int) string { return strings.Join(lines(s, w, h), "\n") }

// line is a rendered line and its width in cells, or -1 if not known.
type line struct {
	s string
	w int
}

// unmeasured splits s into lines of unknown width.
func unmeasured(s string) []line {
	var out []line
	for l := range strings.SplitSeq(s, "\n") {
		out = append(out, line{s: l, w: -1})
	}
	return out
}

// frame stacks blocks of w cells, as block and strings.Join would, but
// keeps each line's width: measuring styled text again for every block a
// line passes through was much of what a view cost.
type frame struct {
	w     int
	lines []line
}

// block appends block(s, f.w, h)'s lines.
func (f *frame) block(s string, h int) {
	var ls []line
	if s != "" {
		ls = unmeasured(s)
	}
	f.fitted(ls, h)
}

// fitted appends ls cut or padded to h lines, each fitted to w, as lines
// does.
func (f *frame) fitted(ls []line, h int) {
	for i := range h {
		l := line{}
		if i < len(ls) {
			l = ls[i]
		}
		f.lines = append(f.lines, fitLine(l, f.w))
	}
}

// raw appends s's lines as they are, for a pane that is not a block.
func (f *frame) raw(s string) { f.lines = append(f.lines, unmeasured(s)...) }

// String joins the lines.
func (f *frame) String() string {
	n := 0
	for _, l := range f.lines {
		n += len(l.s) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for i, l := range f.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.s)
	}
	return b.String()
}

// fitLine is fit(l.s, w, false), measuring l only if its width is unknown.
func fitLine(l line, w int) line {
	switch {
	case w <= 0:
		return line{}
	case l.w == w:
		return l
	case l.w < 0:
		l.w = lipgloss.Width(l.s)
	}
	if l.w > w {
		// A cut before a wide character leaves the line a cell short.
		return line{s: fitWidth(l.s, l.w, w, false), w: -1}
	}
	return line{s: fitWidth(l.s, l.w, w, false), w: w}
}

// spread puts left and right on one line of width w, cutting left first:
// the right side holds status that must stay visible.
func spread(left, right string, w int) string {
	rw := lipgloss.Width(right)
	if rw >= w {
		return fit(right, w, true)
	}
	lw := w - rw - 1
	return fit(left, lw, false) + " " + right
}
