package ui

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

// NO_COLOR and a terminal that cannot show styles are honoured: TTY_FORCE
// stands in for a terminal here.
func TestStyledWriterFollowsTheTerminal(t *testing.T) {
	styled := lipgloss.NewStyle().Foreground(lipgloss.Color("#ff0000")).Strikethrough(true).Render("plain.gone")
	cases := []struct {
		name   string
		env    map[string]string
		escape bool // any escape sequence
		colour bool // a colour
	}{
		{"buffer", map[string]string{"TERM": "xterm-256color", "COLORTERM": "truecolor"}, false, false},
		{"dumb terminal", map[string]string{"TTY_FORCE": "1", "TERM": "dumb"}, false, false},
		{"no TERM", map[string]string{"TTY_FORCE": "1"}, false, false},
		{"NO_COLOR", map[string]string{"TTY_FORCE": "1", "TERM": "xterm-256color", "COLORTERM": "truecolor", "NO_COLOR": "1"}, true, false},
		{"true colour", map[string]string{"TTY_FORCE": "1", "TERM": "xterm-256color", "COLORTERM": "truecolor"}, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			w := StyledWriter(&b, func(k string) string { return c.env[k] })
			// Written a byte at a time, as a split sequence would be.
			for i := range len(styled) {
				if _, err := w.Write([]byte{styled[i]}); err != nil {
					t.Fatal(err)
				}
			}
			got := b.String()
			if has := strings.ContainsRune(got, 0x1b); has != c.escape {
				t.Errorf("escape sequences %v, want %v: %q", has, c.escape, got)
			}
			if has := strings.Contains(got, "38;"); has != c.colour {
				t.Errorf("colour %v, want %v: %q", has, c.colour, got)
			}
			if !c.escape && got != "plain.gone" {
				t.Errorf("got %q, want the bare name", got)
			}
		})
	}
}

func TestTableDropsTrailingPadding(t *testing.T) {
	var b strings.Builder
	tw := TextTable(&b)
	fmt.Fprintln(tw, "hop\tqueue\tttl\tenters\tleaves")
	fmt.Fprintln(tw, "1\tdemo.rung.01.5\t1m20s\t0s\t1m20s")
	fmt.Fprintln(tw, "→\tdemo.done\t\t1m30s\t")
	fmt.Fprintln(tw, "2\tq  r\t\t\t")
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "hop  queue           ttl    enters  leaves\n" +
		"1    demo.rung.01.5  1m20s  0s      1m20s\n" +
		"→    demo.done              1m30s\n" +
		"2    q  r\n"
	if b.String() != want {
		t.Fatalf("got\n%q\nwant\n%q", b.String(), want)
	}
}
