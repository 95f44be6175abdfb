package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

func TestRetryOverlayGolden(t *testing.T) {
	st := NewStyles(true)
	at := time.Date(2026, 11, 28, 10, 4, 5, 0, time.UTC)
	v, _ := topology.ParseVersion("4.3.6")
	h := retryHold()
	cases := map[string]RetryState{
		"holding":     {Vhost: "shop", Version: "4.3.6", Hold: h, Findings: health.RetryFindings(h, v), Read: true, At: at, Every: 5 * time.Second, Hints: "r read again · esc close"},
		"none":        {Vhost: "shop", Version: "4.3.6", Hold: health.NewRetryHold(nil, true), Read: true, At: at, Hints: "r read again · esc close"},
		"unsupported": {Vhost: "shop", Version: "4.0.5", Unsupported: true, Hints: "esc close"},
	}
	for name, s := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d", name, sz.w, sz.h), func(t *testing.T) {
				out := ansi.Strip(RetryOverlay(s, st, min(sz.w, 110), sz.h))
				ls := strings.Split(out, "\n")
				if len(ls) > OverlayHeight(sz.h) {
					t.Errorf("%d lines, want at most %d", len(ls), OverlayHeight(sz.h))
				}
				for _, l := range ls {
					if ansi.StringWidth(l) > sz.w {
						t.Errorf("line wider than %d: %q", sz.w, l)
					}
				}
				golden.RequireEqual(t, out)
			})
		}
	}
	if out := ansi.Strip(RetryOverlay(cases["unsupported"], st, 80, 24)); !strings.Contains(out, "not on this release (4.0.5)") {
		t.Errorf("before 4.3 the view does not say so:\n%s", out)
	}
	if out := ansi.Strip(RetryOverlay(cases["holding"], st, 80, 24)); !strings.Contains(out, "1207 held by delayed retry") {
		t.Errorf("the view does not count what is held:\n%s", out)
	}
}
