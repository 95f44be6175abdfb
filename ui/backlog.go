package ui

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// BacklogShort is a backlogged ladder in a few words, for its summary
// line: busy, not broken, whether clients add to it faster than it
// drains, and when it will be done.
func BacklogShort(t health.Totals, d health.Drain) string {
	s := "⚠ backlogged " + topology.FormatCount(t.Backlog)
	switch {
	case d.Capacity <= 0:
	// The rates are in the rung's line and in status: an 80-column
	// summary has room for the one word that matters and the finish.
	case d.Grows():
		s += fmt.Sprintf(", grows %s/s", perS(d.In-d.Out))
	case d.Finish > 0:
		s += ", done ~" + health.FinishRange(d)
	default:
		s += fmt.Sprintf(", %s hops/s", perS(d.Capacity))
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
		switch t := d.Trend(); t {
		case "":
		case "holds":
			s += fmt.Sprintf(" Clients publish %s/s into it and %s/s drain out: the backlog holds.", perS(d.In), perS(d.Out))
		default:
			s += fmt.Sprintf(" Clients publish %s/s into it and %s/s drain out: the backlog %s %s/s.", perS(d.In), perS(d.Out), t, perS(math.Abs(d.In-d.Out)))
		}
		s += fmt.Sprintf(" The ladder drains %s hops/s (measured over %s", perS(d.Capacity), topology.FormatSpan(d.Span.Round(time.Second)))
		if r := health.HopsRange(d); r != perS(d.Capacity) {
			s += "; " + r + " at its slowest and fastest"
		}
		s += ")"
		switch {
		case d.Finish > 0:
			s += fmt.Sprintf(": what it holds now has left in ~%s", health.FinishRange(d))
			if d.Late > 0 {
				s += fmt.Sprintf(", ~%s later than its TTLs", topology.FormatSpan(d.Late.Round(time.Second)))
			}
			s += "."
		case d.Grows():
			s += ": no finish while it grows; when the clients slow down decides it."
		default:
			s += "."
		}
	} else {
		s += fmt.Sprintf(" Its drain rate is measured once the publishing to it has held steady for %s (the console and the exporter keep the readings).", topology.FormatSpan(health.RateSpan))
	}
	if w <= 0 {
		w = 100
	}
	return strings.Join(wrap(s, w, ""), "\n") + "\n"
}

// DestText is how fast messages arrive in each queue the ladder delivers
// to and how fast its consumers take them, as `rungs status` prints it
// under the drain, wrapped to w; "" when the readings show none moving.
func DestText(d health.Drain, w int) string {
	if w <= 0 {
		w = 100
	}
	var out []string
	for _, f := range d.Dests {
		role := "Destination"
		if f.Done {
			role = "Done queue"
		}
		s := fmt.Sprintf("%s %s: %s (measured over %s).", role, f.Queue, health.DestFlowText(f), topology.FormatSpan(f.Span.Round(time.Second)))
		out = append(out, wrap(s, w, "  ")...)
	}
	if len(out) == 0 {
		return ""
	}
	return strings.Join(out, "\n") + "\n"
}

func perS(r float64) string { return topology.FormatCount(int64(r + 0.5)) }
