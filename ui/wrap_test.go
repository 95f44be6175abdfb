package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A hyphen must not push a wrapped line past its width, where the final cut
// would eat the middle of a date.
func TestWrapNeverCutsAfterAHyphen(t *testing.T) {
	s := "transient, content-type application/x-protobuf, timestamp 2025-01-14 09:22:53 UTC"
	for w := 26; w <= len(s); w++ { // the longest word and the indent fit from 26
		ls := wrap(s, w, "  ")
		joined := strings.Join(ls, "\n")
		if strings.Contains(joined, "…") {
			t.Fatalf("width %d cut text:\n%s", w, joined)
		}
		for _, l := range ls {
			if ansi.StringWidth(l) > w {
				t.Fatalf("width %d: line %q is %d wide", w, l, ansi.StringWidth(l))
			}
		}
	}
}
