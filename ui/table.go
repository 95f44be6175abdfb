package ui

import (
	"strings"

	"charm.land/lipgloss/v2"
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

// cell is one table cell: plain text in a style, or a custom drawing (a
// bar) that styles its own segments on top of the row's base style.
type cell struct {
	text  string
	style lipgloss.Style
	cutL  bool // cut from the left, keeping the distinctive end
	draw  func(w int, base lipgloss.Style) string
}

// header renders the column titles.
func (t table) header(st Styles) string {
	cells := map[string]cell{}
	for _, c := range t.cols {
		cells[c.id] = cell{text: c.title, style: st.TableHeader}
	}
	return t.row(cells, lipgloss.NewStyle())
}

// row renders one line. base carries the row's background (the selection),
// which every cell and gap inherits so that the highlight has no holes.
func (t table) row(cells map[string]cell, base lipgloss.Style) string {
	var b strings.Builder
	first := true
	for i, c := range t.cols {
		w := t.widths[i]
		if w == 0 {
			continue
		}
		if !first {
			b.WriteString(base.Render(strings.Repeat(" ", colGap)))
		}
		first = false
		cl := cells[c.id]
		if cl.draw != nil {
			b.WriteString(cl.draw(w, base))
			continue
		}
		var text string
		if cl.cutL {
			text = fitLeft(cl.text, w)
		} else {
			text = fit(cl.text, w, c.right)
		}
		b.WriteString(cl.style.Inherit(base).Render(text))
	}
	if pad := t.width - t.used(); pad > 0 {
		b.WriteString(base.Render(strings.Repeat(" ", pad)))
	}
	return b.String()
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
