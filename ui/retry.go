package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// RetryText is what RabbitMQ 4.3's delayed retry holds in a vhost, as
// status and discover --delays print it beside the ladders: a summary
// line, then a row per quorum queue that has delayed retry, those holding
// the most first, with its settings and what sets them. It is "" when the
// queues were not read (before 4.3) or none has delayed retry.
func RetryText(h health.RetryHold, w int) string {
	if !h.Read || len(h.Queues) == 0 {
		return ""
	}
	if w <= 0 {
		w = 100
	}
	head := fmt.Sprintf("Delayed retry (RabbitMQ 4.3, quorum): %s", topology.Counted(len(h.Queues), "queue", "queues"))
	if held := h.Held(); held != "" {
		head += "; " + held + ", in none of ready or unacked: they leave when their hold ends"
	} else {
		head += ", none holding a message back"
	}
	out := wrap(head, w, "  ")
	cells := [][]string{{"QUEUE", "DELAYED", "READY", "UNACKED", "TYPE", "HOLD", "SET BY"}}
	for _, q := range h.Queues {
		delayed := "?"
		if q.Reported {
			delayed = topology.FormatCount(q.Delayed)
		}
		by := q.SetBy()
		if q.Ignored {
			by += " (ignored)"
		}
		cells = append(cells, []string{q.Name, delayed, topology.FormatCount(q.Ready), topology.FormatCount(q.Unacked), q.Type, q.Hold(), by})
	}
	widths := make([]int, len(cells[0]))
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	// The queue's name gives way first, then what sets it: the counts,
	// type and hold always show.
	fixed := 2
	for i, wd := range widths {
		if i != 0 {
			fixed += wd + 2
		}
	}
	widths[0] = max(8, min(widths[0], w-fixed))
	right := map[int]bool{1: true, 2: true, 3: true}
	for _, row := range cells {
		var b strings.Builder
		b.WriteString("  ")
		for i, c := range row {
			c = ansi.Truncate(c, widths[i], "…")
			pad := strings.Repeat(" ", widths[i]-ansi.StringWidth(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if right[i] {
				b.WriteString(pad + c)
			} else if i < len(row)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		out = append(out, ansi.Truncate(b.String(), w, "…"))
	}
	return strings.Join(out, "\n") + "\n"
}

// RetryScopeText is one line saying where a read beside the ladders
// (health.RetryScope) looked for delayed retry, and where to look for the
// rest of the vhost: "Delayed retry read in 107 ladder queues and 1 named
// by a policy; the rest: rungs discover --delays". It is
// "" where the queues were not read (before 4.3) or the read took the
// whole vhost.
func RetryScopeText(h health.RetryHold, w int) string {
	sc := h.Scope
	if !h.Read || !sc.Ladders {
		return ""
	}
	if w <= 0 {
		w = 100
	}
	in := topology.Counted(sc.Queues, "ladder queue", "ladder queues")
	if sc.Queues == 0 {
		in = "no ladder queue"
	}
	switch {
	case len(sc.Named) > 0:
		in += fmt.Sprintf(" and %d named by a policy", len(sc.Named))
	case sc.PoliciesUnread:
		in += " (policies unreadable: none named by one)"
	}
	return strings.Join(wrap("Delayed retry read in "+in+"; the rest: rungs discover --delays", w, "  "), "\n") + "\n"
}
