package ui

import (
	"strings"
)

// column describes one table column. Tables lay themselves out for the
// width they get: columns with the highest drop rank go first when space
// runs out, and flexible columns share what is left, which is how wider
// terminals get more columns without a second layout.
type column struct {
	id    string
	title string
	width int  // fixed width, or the minimum of a flexible column
	flex  int  // extra cells the column may take; -1 without limit
	right bool // right-align (numbers)
	drop  int  // 0: never dropped; higher ranks are dropped first
}

// table is a column layout for one width.
type table struct {
	cols   []column
	widths []int // 0: hidden
	width  int
}

const colGap = 1

// newTable lays out cols in width cells.
func newTable(cols []column, width int) table {
	t := table{cols: cols, widths: make([]int, len(cols)), width: width}
	for i, c := range cols {
		t.widths[i] = c.width
	}
	for t.used() > width {
		worst := -1
		for i, c := range cols {
			if t.widths[i] > 0 && c.drop > 0 && (worst < 0 || c.drop >= cols[worst].drop) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		t.widths[worst] = 0
	}
	spare := width - t.used()
	for i, c := range cols {
		if spare <= 0 {
			break
		}
		if t.widths[i] == 0 || c.flex == 0 {
			continue
		}
		add := spare
		if c.flex > 0 && add > c.flex {
			add = c.flex
		}
		t.widths[i] += add
		spare -= add
	}
	return t
}

// used is the width of the visible columns and the gaps between them.
func (t table) used() int {
	n, sum := 0, 0
	for _, w := range t.widths {
		if w > 0 {
			n++
			sum += w
		}
	}
	if n > 1 {
		sum += (n - 1) * colGap
	}
	return sum
}

// has reports whether a column survived the layout.
func (t table) has(id string) bool { return t.colWidth(id) > 0 }

func (t table) colWidth(id string) int {
	for i, c := range t.cols {
		if c.id == id {
			return t.widths[i]
		}
	}
	return 0
}

// cell is one table cell: plain text in an ink, or a depth bar. A nil ink
// leaves the cell in the row's background.
type cell struct {
	text string
	ink  *ink
	cutL bool // cut from the left, keeping the distinctive end
	// track follows a bar's text in the row's background, so that the
	// selection runs under the bar; a bar is exactly its column's width.
	track string
	bar   bool
}

// colGapText is the blank between two columns.
var colGapText = strings.Repeat(" ", colGap)

// header writes the column titles to b; see row for the result.
func (t table) header(b *strings.Builder, p *palette) int {
	return t.row(b, p, func(c column, _ int) cell { return cell{text: c.title, ink: &p.header} })
}

// row writes one line to b: the cell of each visible column, asked of
// cellAt only for those, so that hidden columns cost nothing. p carries
// the row's background (the selection), which every cell and gap inherits
// so that the highlight has no holes. row returns the line's width in
// cells, or -1 when a style changed some text's width and the caller must
// measure it.
func (t table) row(b *strings.Builder, p *palette, cellAt func(c column, w int) cell) int {
	width, known := 0, true
	first := true
	for i, c := range t.cols {
		w := t.widths[i]
		if w == 0 {
			continue
		}
		if !first {
			known = p.base.write(b, colGapText) && known
			width += colGap
		}
		first = false
		cl := cellAt(c, w)
		k := cl.ink
		if k == nil {
			k = &p.base
		}
		width += w
		if cl.bar {
			known = k.write(b, cl.text) && known
			known = p.base.write(b, cl.track) && known
			continue
		}
		// Cells are mostly plain text that fits: pad it as fit would
		// without building the padded string.
		text, sw := cl.text, textWidth(cl.text)
		switch {
		case sw <= w && c.right && !cl.cutL:
			known = k.writePadded(b, w-sw, text, 0) && known
		case sw <= w:
			known = k.writePadded(b, 0, text, w-sw) && known
		default:
			if cl.cutL {
				text = fitLeft(cl.text, w)
			} else {
				text = fit(cl.text, w, c.right)
			}
			// A cut before a wide character leaves the cell a cell short.
			width += textWidth(text) - w
			known = k.write(b, text) && known
		}
		known = known && measurable(text)
	}
	if pad := t.width - t.used(); pad > 0 {
		known = p.base.writePadded(b, 0, "", pad) && known
		width += pad
	}
	if !known {
		return -1
	}
	return width
}

// lineBuffer collects lines written one after another in one buffer, so
// that a table costs one allocation rather than one per row.
type lineBuffer struct {
	strings.Builder
	marks []lineMark
}

type lineMark struct{ end, w int }

// end ends the line written since the last one; w is its width in cells,
// or -1 if not known.
func (lb *lineBuffer) end(w int) { lb.marks = append(lb.marks, lineMark{end: lb.Len(), w: w}) }

// lines returns the lines written. A line of unknown width is split where
// a style may have broken it, as joining and splitting lines would.
func (lb *lineBuffer) lines() []line {
	text := lb.String()
	out := make([]line, 0, len(lb.marks))
	from := 0
	for _, m := range lb.marks {
		l := line{s: text[from:m.end], w: m.w}
		from = m.end
		if l.w < 0 {
			out = append(out, unmeasured(l.s)...)
			continue
		}
		out = append(out, l)
	}
	return out
}

// scroll returns the first visible index that keeps sel in a window of h
// rows, moving the window as little as possible from offset.
func scroll(sel, offset, h, n int) int {
	if h <= 0 || n <= h {
		return 0
	}
	if sel < offset {
		offset = sel
	}
	if sel >= offset+h {
		offset = sel - h + 1
	}
	return max(0, min(offset, n-h))
}
