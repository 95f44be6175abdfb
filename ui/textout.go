package ui

import (
	"bytes"
	"io"
	"text/tabwriter"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
)

// Text output for a command line: what a writer can show of the styles
// this package renders, and tables aligned without trailing padding.

// styleEnv are the variables that decide whether output may carry styles:
// NO_COLOR, CLICOLOR(_FORCE), TERM and COLORTERM, and tmux's.
var styleEnv = []string{"NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TTY_FORCE", "TERM", "COLORTERM", "TERM_PROGRAM", "TMUX", "WT_SESSION"}

// StyledWriter writes to w what w can show. To a pipe or a file, or a
// terminal that cannot show styles (TERM=dumb or unset), every escape
// sequence is dropped: `rungs status | grep` reads plain text. NO_COLOR
// keeps bold and strike-through and drops colours; a terminal with fewer
// colours gets the nearest ones.
func StyledWriter(w io.Writer, getenv func(string) string) io.Writer {
	var environ []string
	for _, k := range styleEnv {
		if v := getenv(k); v != "" {
			environ = append(environ, k+"="+v)
		}
	}
	p := colorprofile.Detect(w, environ)
	switch {
	case p == colorprofile.TrueColor:
		return w
	case p <= colorprofile.NoTTY:
		return &wholeSequences{w: stripper{w}}
	}
	return &wholeSequences{w: &colorprofile.Writer{Forward: w, Profile: p}}
}

// stripper drops every escape sequence.
type stripper struct{ w io.Writer }

func (s stripper) Write(b []byte) (int, error) {
	if _, err := io.WriteString(s.w, ansi.Strip(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// wholeSequences passes w only whole escape sequences: one split between
// two writes (tabwriter writes cell by cell) is held back until it is
// whole, so that w can recognise it.
type wholeSequences struct {
	w    io.Writer
	held []byte
}

func (p *wholeSequences) Write(b []byte) (int, error) {
	buf := append(p.held, b...)
	p.held = nil
	if i := bytes.LastIndexByte(buf, ansi.ESC); i >= 0 && !complete(buf[i:]) {
		p.held = append([]byte(nil), buf[i:]...)
		buf = buf[:i]
	}
	if len(buf) > 0 {
		if _, err := p.w.Write(buf); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// complete reports whether seq, which starts with ESC, holds a whole
// escape sequence: a CSI ends with a final byte in @..~, an OSC with BEL
// or ST, anything else after one more byte.
func complete(seq []byte) bool {
	if len(seq) < 2 {
		return false
	}
	switch seq[1] {
	case '[':
		for _, c := range seq[2:] {
			if c >= 0x40 && c <= 0x7e {
				return true
			}
		}
		return false
	case ']', 'P', '_', '^':
		return bytes.IndexByte(seq, ansi.BEL) >= 0 || bytes.Contains(seq[2:], []byte{ansi.ESC, '\\'})
	}
	return true
}

// TextTable aligns tab-separated columns for a command line tool's output. Rows with empty last cells would end
// in padding, which shows up in copied output and in diffs, so the padding
// before each line's end is dropped.
func TextTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(&trimTrailing{w: w}, 2, 4, 2, ' ', 0)
}

// trimTrailing drops spaces that end a line. tabwriter writes padding in
// writes of its own, so a run of spaces is held back until the next byte
// shows whether a newline follows it.
type trimTrailing struct {
	w       io.Writer
	pending int // spaces held back
}

func (t *trimTrailing) Write(p []byte) (int, error) {
	var out []byte
	for _, b := range p {
		switch b {
		case ' ':
			t.pending++
			continue
		case '\n':
			t.pending = 0
		default:
			for ; t.pending > 0; t.pending-- {
				out = append(out, ' ')
			}
		}
		out = append(out, b)
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
