package ui

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/topology"
)

// ConnKind is the health of a connection, as the header colours it.
type ConnKind int

// Connection health.
const (
	ConnNone ConnKind = iota // not known or not watched
	ConnUp
	ConnWaiting // connecting or reconnecting
	ConnDown
)

// Conn is a connection's state as the header shows it: the model turns
// broker.ConnState into words (with countdowns) so that ui stays free of
// broker types.
type Conn struct {
	Kind ConnKind
	Text string
	// Short stands in for Text when the title bar is narrow.
	Short string
}

// ResultKind colours the last command's result.
type ResultKind int

// Result kinds.
const (
	ResultInfo ResultKind = iota
	ResultOK
	ResultWarn
	ResultError
)

// Result is the outcome of the last command, shown until the next one.
type Result struct {
	Kind ResultKind
	Text string
}

// HeaderState is the title bar and the breadcrumb line.
type HeaderState struct {
	Broker  string // user@host:port, never a password
	Vhost   string
	Version string // "RabbitMQ 4.1.0", when known
	AMQP    Conn
	// Refreshed is when the last refresh succeeded (zero: never).
	Refreshed time.Time
	// Refresh describes the refresh loop when it is not simply fine:
	// waiting on a slow broker, or failing.
	Refresh Conn
	Every   time.Duration
	// ReadOnly shows the badge.
	ReadOnly bool
	Crumbs   []string
	Chips    []string // active filter, trace
	// Busy is an operation in progress; it takes Result's place.
	Busy   string
	Result Result
}

// HeaderHeight is the number of lines Header renders.
const HeaderHeight = 2

// Header renders the title bar (product, broker, vhost, connection,
// refresh, read-only badge) and the breadcrumb line with the last result.
// A narrow bar first shortens the state words, then the labels: the
// read-only badge and the connection state are never cut.
func Header(h HeaderState, st Styles, w int) string {
	sep := st.Faint.Render(" · ")
	left := func(labels, version bool) string {
		s := st.Brand.Render("rungs") + " " + st.Bold.Render(h.Broker) + sep
		if labels {
			s += st.Muted.Render("vhost ")
		}
		s += st.Text.Render(h.Vhost)
		if h.Version != "" && version {
			s += sep + st.Muted.Render(h.Version)
		}
		return s
	}
	right := func(short, labels bool) string {
		var items []string
		pick := func(c Conn) Conn {
			if short && c.Short != "" {
				c.Text = c.Short
			}
			return c
		}
		if h.AMQP.Kind != ConnNone || h.AMQP.Text != "" {
			items = append(items, connText(pick(h.AMQP), st))
		}
		switch {
		case h.Refresh.Kind != ConnNone:
			items = append(items, connText(pick(h.Refresh), st))
		case !h.Refreshed.IsZero():
			r := "↻ " + h.Refreshed.Format("15:04:05")
			if labels && h.Every > 0 {
				r += " every " + topology.FormatSpan(h.Every)
			}
			items = append(items, st.Muted.Render(r))
		}
		if h.ReadOnly {
			items = append(items, st.ReadOnly.Render("READ-ONLY"))
		}
		return strings.Join(items, sep)
	}
	line1 := ""
	tries := []struct{ labels, version, short bool }{
		{true, true, false}, {true, false, false}, {false, false, false}, {false, false, true},
	}
	for _, try := range tries {
		l, r := left(try.labels, try.version), right(try.short, try.version)
		line1 = fitRight(l, r, w)
		if lipgloss.Width(l)+1+lipgloss.Width(r) <= w {
			break
		}
	}

	crumbs := make([]string, len(h.Crumbs))
	for i, c := range h.Crumbs {
		crumbs[i] = st.Crumb.Render(c)
	}
	line2 := " " + strings.Join(crumbs, st.CrumbSep.Render(" › "))
	for _, c := range h.Chips {
		line2 += " " + st.Chip.Render(c)
	}
	var result string
	switch {
	case h.Busy != "":
		result = st.Accent.Render("… " + h.Busy)
	case h.Result.Text != "":
		result = resultStyle(h.Result.Kind, st).Render(resultIcon(h.Result.Kind) + h.Result.Text)
	}
	line2 = fitRight(line2, result, w)
	return line1 + "\n" + line2
}

// fitRight puts right at the end of a w-cell line and left before it. When
// both do not fit, right keeps at least half the line (state matters more
// than labels) and each side is cut with an ellipsis.
func fitRight(left, right string, w int) string {
	lw, rw := lipgloss.Width(left), lipgloss.Width(right)
	if lw+1+rw <= w {
		return left + strings.Repeat(" ", w-lw-rw) + right
	}
	room := w - 1
	keepR := min(rw, max(room*2/3, room-lw))
	keepL := room - keepR
	return fit(left, keepL, false) + " " + ansi.Truncate(right, keepR, "…") + strings.Repeat(" ", max(0, keepR-rw))
}

func connText(c Conn, st Styles) string {
	switch c.Kind {
	case ConnUp:
		return st.OK.Render("● " + c.Text)
	case ConnWaiting:
		return st.Warn.Render("◌ " + c.Text)
	case ConnDown:
		return st.Danger.Render("✗ " + c.Text)
	}
	return st.Muted.Render(c.Text)
}

func resultStyle(k ResultKind, st Styles) lipgloss.Style {
	switch k {
	case ResultOK:
		return st.OK
	case ResultWarn:
		return st.Warn
	case ResultError:
		return st.Danger
	}
	return st.Muted
}

func resultIcon(k ResultKind) string {
	switch k {
	case ResultOK:
		return "✓ "
	case ResultWarn:
		return "⚠ "
	case ResultError:
		return "✗ "
	}
	return ""
}
