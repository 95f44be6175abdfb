package ui

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/topology"
)

// LogEntry is one operation the console sent to the broker, with exactly
// what was sent and what came back.
type LogEntry struct {
	At time.Time
	// Op is the operation: publish, purge, connect.
	Op string
	// Sent lists the parameters as sent: exchange=..., routing_key=...
	Sent []string
	// Result is the broker's answer; empty while it is awaited.
	Result string
	Failed bool
}

// LogOverlay renders the command log as a dialog of at most w×h cells,
// newest last, each entry its time and operation, then what was sent, then
// the outcome. When the log is longer than the room, the oldest entries are
// left off and the title says how many are shown.
func LogOverlay(entries []LogEntry, context string, st Styles, w, h int) string {
	inner := w - st.Dialog.GetHorizontalFrameSize()
	maxBody := max(1, OverlayHeight(h)-2-st.Dialog.GetVerticalFrameSize())
	var blocks [][]string
	for _, e := range entries {
		head := st.Muted.Render(e.At.Format("15:04:05")) + " " + st.Bold.Render(e.Op)
		var b []string
		sent := strings.Join(e.Sent, " ")
		first := true
		for _, l := range wrapWords(sent, max(10, inner-len("15:04:05 ")-len(e.Op)-3)) {
			if first {
				b = append(b, head+"  "+l)
				first = false
				continue
			}
			b = append(b, strings.Repeat(" ", len("15:04:05 ")+len(e.Op)+2)+l)
		}
		res, style := "… awaiting the broker", st.Muted
		switch {
		case e.Failed:
			res, style = "✗ "+e.Result, st.Danger
		case e.Result != "":
			res, style = "✓ "+e.Result, st.OK
		}
		b = append(b, "         "+style.Render(ansi.Truncate(res, max(1, inner-9), "…")))
		blocks = append(blocks, b)
	}
	var body []string
	shown := 0
	for i := len(blocks) - 1; i >= 0; i-- {
		if len(body)+len(blocks[i]) > maxBody {
			break
		}
		body = append(append([]string(nil), blocks[i]...), body...)
		shown++
	}
	if len(entries) == 0 {
		body = []string{st.Muted.Render("nothing sent to the broker yet: publish (p) and purge (x) show here")}
	}
	title := "Sent to the broker"
	if context != "" {
		title += " · " + context
	}
	if shown < len(entries) {
		title += " · last " + topology.FormatCount(int64(shown)) + " of " + topology.FormatCount(int64(len(entries)))
	}
	closes := st.Muted.Render("L or esc closes")
	bodyW := 0
	for _, l := range body {
		bodyW = max(bodyW, lipgloss.Width(l))
	}
	titleW := lipgloss.Width(title) + 2 + lipgloss.Width(closes)
	return Dialog(spread(st.DialogTitle.Render(title), closes, min(inner, max(bodyW, titleW))), strings.Join(body, "\n"), lipgloss.NewStyle(), st, w)
}

// wrapWords breaks s at spaces into lines of at most w cells; a word longer
// than w (a long routing key) is cut across lines.
func wrapWords(s string, w int) []string {
	var out []string
	cur := ""
	for _, word := range strings.Fields(s) {
		for lipgloss.Width(word) > w {
			if cur != "" {
				out = append(out, cur)
				cur = ""
			}
			out = append(out, ansi.Cut(word, 0, w))
			word = ansi.Cut(word, w, lipgloss.Width(word))
		}
		switch {
		case cur == "":
			cur = word
		case lipgloss.Width(cur)+1+lipgloss.Width(word) <= w:
			cur += " " + word
		default:
			out = append(out, cur)
			cur = word
		}
	}
	if cur != "" || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}
