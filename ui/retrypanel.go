package ui

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// RetryState is what the console's delayed-retry view shows: what
// RabbitMQ 4.3's delayed retry holds across the vhost's quorum queues, as
// status and discover --delays read it, and the release's warnings about
// those queues.
type RetryState struct {
	Vhost string
	// Version is the broker's release ("" while unknown); Unsupported
	// says it has no delayed retry (before 4.3).
	Version     string
	Unsupported bool
	Hold        health.RetryHold
	Findings    []health.RetryFinding
	// Read says a reading came in; Err is the last read's failure.
	Read bool
	Err  string
	At   time.Time
	// Every is how often the held counts are read again while the view
	// is open (0: only when asked).
	Every time.Duration
	Hints string
}

// RetryOverlay draws the delayed-retry view as a dialog of at most w×h
// cells: RetryText's summary and table, then the warnings. On a release
// without delayed retry it says so in one line.
func RetryOverlay(s RetryState, st Styles, w, h int) string {
	inner := w - st.Dialog.GetHorizontalFrameSize()
	var body []string
	text := func(t string, style lipgloss.Style) {
		for _, l := range wrap(t, inner, "  ") {
			body = append(body, style.Render(l))
		}
	}
	switch {
	case s.Unsupported:
		text("Delayed retry is new in RabbitMQ 4.3: not on this release ("+s.Version+").", st.Muted)
	case !s.Read && s.Err == "":
		text("reading the quorum queues of vhost "+s.Vhost+" …", st.Muted)
	case s.Err != "":
		text("✗ cannot read the queues under delayed retry: "+s.Err, st.Danger)
	case len(s.Hold.Queues) == 0:
		text("No quorum queue in vhost "+s.Vhost+" has delayed retry (x-delayed-retry-type, by argument or policy).", st.Muted)
	default:
		body = append(body, strings.Split(strings.TrimSuffix(RetryText(s.Hold, inner), "\n"), "\n")...)
		for _, f := range s.Findings {
			if f.Info {
				continue
			}
			style := st.Warn
			if f.Severity == health.Problem {
				style = st.Danger
			}
			text("! "+f.Text, style)
		}
	}
	when := ""
	if s.Read && s.Err == "" && !s.Unsupported && !s.At.IsZero() {
		when = "read " + s.At.Format("15:04:05")
		if s.Every > 0 && len(s.Hold.Queues) > 0 {
			when += "; held counts every " + topology.FormatSpan(s.Every) + " while open"
		}
	}
	title := "Delayed retry · vhost " + s.Vhost
	if s.Version != "" {
		title += " · RabbitMQ " + s.Version
	}
	return sidePanel(title, body, when, s.Hints, st, w, h)
}
