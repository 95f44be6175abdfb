package ui

import (
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/topology"
)

// Count prints a message count in at most six cells: exact below a million,
// so that a depth that moves by one is visible, then 1.2M, 34M, 5.6G.
func Count(n int64) string {
	switch {
	case n < 0:
		return "-" + Count(-n)
	case n < 1_000_000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000_000:
		return compact(float64(n)/1e6, "M")
	default:
		return compact(float64(n)/1e9, "G")
	}
}

// Rate prints messages per second: "0", "0.4", "12", "1.2k".
func Rate(r float64) string {
	switch {
	case r <= 0:
		return "0"
	case r < 0.05:
		return "<0.1"
	case r < 10:
		return strconv.FormatFloat(r, 'f', 1, 64)
	case r < 1000:
		return strconv.FormatFloat(r, 'f', 0, 64)
	default:
		return compact(r/1000, "k")
	}
}

func compact(v float64, suffix string) string {
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64) + suffix
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + suffix
}

// Delay prints a delay exactly, as topology.FormatDelay does, except that
// fractional seconds read as seconds (51.2s rather than 51200ms).
func Delay(d time.Duration) string {
	if d > time.Second && d < time.Minute && d%time.Millisecond == 0 && d%time.Second != 0 {
		return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
	}
	return topology.FormatDelay(d)
}

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
		return Delay(d)
	case d < time.Hour-30*time.Second:
		return two(d, time.Minute, time.Second, "m", "s")
	case d < 24*time.Hour-30*time.Minute:
		return two(d, time.Hour, time.Minute, "h", "m")
	default:
		return two(d, 24*time.Hour, time.Hour, "d", "h")
	}
}

// Age prints how long ago something happened, coarsely: 4s, 3m, 2h, 5d.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h"
	default:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
}

// fit pads or cuts s (which may be styled) to exactly w cells. Text that
// does not fit ends in an ellipsis, so a cut is never silent.
func fit(s string, w int, right bool) string {
	if w <= 0 {
		return ""
	}
	sw := lipgloss.Width(s)
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

// plural picks a noun for a count: plural(1, "hop", "hops").
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
