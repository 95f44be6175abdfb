package ui

import (
	"reflect"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

// TestInkMatchesRender checks that an ink writes what Render does, over a
// plain and a selected row, for every style in both palettes: the table's
// output must not change by a byte for being fast.
func TestInkMatchesRender(t *testing.T) {
	texts := []string{"", "x", "a b", "orders.rung.07", "—", "✓ ok", "a\tb", "x\r\ny", "日本"}
	for _, dark := range []bool{true, false} {
		st := NewStyles(dark)
		for _, selected := range []bool{false, true} {
			p := newPalette(st, selected)
			v := reflect.ValueOf(st)
			for i := range v.NumField() {
				s, ok := v.Field(i).Interface().(lipgloss.Style)
				if !ok {
					continue
				}
				name := v.Type().Field(i).Name
				want := s.Inherit(p.base.style)
				k := ink{style: s, over: &p.base.style}
				for _, text := range texts {
					var b strings.Builder
					k.writePadded(&b, 2, text, 1)
					if got, want := b.String(), want.Render("  "+text+" "); got != want {
						t.Errorf("dark=%v selected=%v %s: ink wrote %q, Render %q", dark, selected, name, got, want)
					}
				}
			}
		}
	}
}

func TestTextWidth(t *testing.T) {
	var ascii strings.Builder
	for c := byte(0x20); c < 0x7f; c++ {
		ascii.WriteByte(c)
	}
	for _, s := range []string{"", ascii.String(), "a\tb", "—", "日本語", "e\u0301", "\x1b[31mred\x1b[m"} {
		if got, want := textWidth(s), lipgloss.Width(s); got != want {
			t.Errorf("textWidth(%q) = %d, lipgloss.Width %d", s, got, want)
		}
	}
}

func TestMeasurable(t *testing.T) {
	for s, want := range map[string]bool{
		"orders.rung.07": true,
		"—":              true,
		"日本語":            true,
		"e\u0301":        true,
		"\u0301e":        false, // a combining mark joins the space before it
		"e\u0600":        false, // a prepended mark joins the space after it
		"a\tb":           false,
		"\x1b[31mred":    false,
		"\xffbad":        false,
	} {
		if got := measurable(s); got != want {
			t.Errorf("measurable(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestFrameMatchesBlock checks that stacking blocks in a frame gives what
// joining them and calling block did, wide and styled lines included.
func TestFrameMatchesBlock(t *testing.T) {
	st := NewStyles(true)
	parts := []string{
		"",
		"short",
		st.Warn.Render("⚠ styled") + " tail",
		"日本語のキュー名前がとても長いですね" + "\n" + strings.Repeat("x", 50),
		"a\nb\nc\nd\ne",
	}
	for _, w := range []int{0, 1, 9, 20, 40} {
		for _, h := range []int{1, 3, 8} {
			var f frame
			f.w = w
			var joined []string
			for _, p := range parts {
				f.block(p, 2)
				joined = append(joined, block(p, w, 2))
			}
			view := frame{w: w}
			view.fitted(f.lines, h)
			if got, want := view.String(), block(strings.Join(joined, "\n"), w, h); got != want {
				t.Errorf("w=%d h=%d: frame gave\n%q\nblock\n%q", w, h, got, want)
			}
		}
	}
}
