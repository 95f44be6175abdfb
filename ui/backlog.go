package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// BacklogShort is a backlogged ladder in a few words, for its summary
// line: busy, not broken, and when it will be done.
func BacklogShort(t health.Totals, d health.Drain) string {
	s := "⚠ backlogged " + topology.FormatCount(t.Backlog)
	if d.Capacity > 0 {
		s += fmt.Sprintf(", %s hops/s", topology.FormatCount(int64(d.Capacity+0.5)))
	}
	if d.Finish > 0 {
		s += ", done ~" + topology.FormatSpan(d.Finish.Round(time.Second))
	}
	return s
}

// DrainText is a backlogged ladder's drain as `rungs status` prints it
// under the forecast, wrapped to w; "" without a backlog.
func DrainText(t health.Totals, d health.Drain, w int) string {
	if t.Backlogged == 0 {
		return ""
	}
	s := fmt.Sprintf("Backlog: %s expired %s wait to be dead-lettered in %d %s; messages leave: busy, not broken.",
		topology.FormatCount(t.Backlog), topology.Plural(t.Backlog, "message", "messages"), t.Backlogged, topology.Plural(int64(t.Backlogged), "rung", "rungs"))
	if d.Capacity > 0 {
		s += fmt.Sprintf(" The ladder drains %s hops/s (measured over %s)", topology.FormatCount(int64(d.Capacity+0.5)), topology.FormatSpan(d.Span.Round(time.Second)))
		if d.Finish > 0 {
			s += fmt.Sprintf(": the last message leaves in ~%s", topology.FormatSpan(d.Finish.Round(time.Second)))
			if d.Late > 0 {
				s += fmt.Sprintf(", ~%s later than its TTLs", topology.FormatSpan(d.Late.Round(time.Second)))
			}
		}
		s += "."
	} else {
		s += fmt.Sprintf(" Its drain rate is measured once no client has published to it for %s (the console and the exporter keep the readings).", topology.FormatSpan(health.RateSpan))
	}
	if w <= 0 {
		w = 100
	}
	return strings.Join(wrap(s, w, ""), "\n") + "\n"
}
