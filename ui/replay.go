package ui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// ReplayReport words a finished replay: what moved where, how fast and why
// it stopped, then what did not move, then the reasons, most frequent
// first. park is the parking queue ("" for none); filter names the option
// that skips messages ("--where"), "" when there is none.
func ReplayReport(c broker.MoveProgress, from, describe, park, filter string) []string {
	out := []string{fmt.Sprintf("replayed %d message(s) from %s %s in %s (%s/s); stopped: %s",
		c.Moved, from, describe, c.Elapsed.Round(time.Millisecond), topology.FormatRate(c.Rate()), c.Stopped)}
	l := fmt.Sprintf("  %d parked", c.Parked)
	if park != "" {
		l += " in " + park
	}
	l += fmt.Sprintf(", %d kept on the source", c.Kept)
	if filter != "" {
		l += fmt.Sprintf(", %d skipped by %s", c.Skipped, filter)
	}
	if c.Unknown > 0 || c.Reconnects > 0 {
		l += fmt.Sprintf(", %d possibly duplicated (in flight when the connection dropped, %d %s)", c.Unknown, c.Reconnects, topology.Plural(int64(c.Reconnects), "time", "times"))
	}
	return append(append(out, l), ReasonLines(c.Reasons)...)
}

// ReasonLines words why messages were parked or kept, "  N × reason",
// most frequent first (replay and migrate reports).
func ReasonLines(reasons map[string]int) []string {
	var out []string
	for _, r := range sortedReasons(reasons) {
		out = append(out, fmt.Sprintf("  %d × %s", reasons[r], r))
	}
	return out
}

func sortedReasons(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// ReplayPhase is where a replay dialog is.
type ReplayPhase int

// Replay phases after the form.
const (
	ReplayConfirm ReplayPhase = iota
	ReplayRunning
	ReplayCancelling
	ReplayDone
)

// ReplayState is the replay dialog once the form is filled in: the
// confirmation, the progress and the outcome.
type ReplayState struct {
	Phase    ReplayPhase
	Source   string
	Describe string
	Park     string
	// Ready is the source's depth when the replay was set up; -1 unknown.
	Ready int
	// Limit and Rate are the caps asked for (0: none).
	Limit int
	Rate  float64
	// Counts are the latest progress.
	Counts broker.MoveProgress
	// Cancelled is set when the operator stopped the replay.
	Cancelled bool
	// Err is why the replay stopped early, if it did.
	Err  string
	Keys []key.Binding
}

// total is how many messages the bar counts up to; 0 when unknown.
func (s ReplayState) total() int {
	switch {
	case s.Limit > 0 && s.Ready >= 0:
		return min(s.Limit, s.Ready)
	case s.Limit > 0:
		return s.Limit
	}
	return max(0, s.Ready)
}

// Replay renders the replay dialog at most w cells wide: the confirmation
// (source, count and destination), then a progress bar with the counts
// and the rate, then the outcome.
func Replay(s ReplayState, st Styles, w int) string {
	inner := w - st.Dialog.GetHorizontalFrameSize()
	var ls []string
	add := func(text string) { ls = append(ls, wrap(text, inner, "  ")...) }
	src := st.Bold.Render(s.Source)
	switch s.Phase {
	case ReplayConfirm:
		n := "every message"
		if s.Ready >= 0 {
			n = fmt.Sprintf("about %s %s", topology.FormatCount(int64(s.Ready)), topology.Plural(int64(s.Ready), "message", "messages"))
		}
		if s.Limit > 0 {
			n += fmt.Sprintf(" (at most %d)", s.Limit)
		}
		add("Replay " + n + " from " + src + " " + s.Describe + ".")
		if s.Rate > 0 {
			add(st.Muted.Render(fmt.Sprintf("At most %s a second.", topology.FormatRate(s.Rate))))
		}
		park := "Unroutable messages stay on " + s.Source + "."
		if s.Park != "" {
			park = "Unroutable messages go to " + s.Park + ", with the reason in x-rungs-reason."
		}
		add(st.Muted.Render("Nothing is lost: each message leaves the source only once the broker confirmed its copy. " + park))
	default:
		if s.Phase != ReplayDone {
			// The outcome says it again, in full.
			add("→ " + s.Describe)
			ls = append(ls, "")
		}
		ls = append(ls, replayBar(s, st, inner))
		c := s.Counts
		sep := st.Faint.Render(" · ")
		counts := []string{
			st.OK.Render(fmt.Sprintf("moved %d", c.Moved)),
			fmt.Sprintf("stayed %d", c.Kept+c.Skipped),
			fmt.Sprintf("parked %d", c.Parked),
			topology.FormatRate(c.Rate()) + "/s",
			topology.FormatSpan(c.Elapsed.Round(100 * time.Millisecond)),
		}
		if c.Unknown > 0 {
			counts = append(counts, st.Warn.Render(fmt.Sprintf("%d in doubt", c.Unknown)))
		}
		ls = append(ls, strings.Join(counts, sep))
		ls = append(ls, "")
		switch s.Phase {
		case ReplayRunning:
			add(st.Muted.Render("esc or ctrl+c stops cleanly: messages already confirmed stay moved, the rest stay on " + s.Source + "."))
		case ReplayCancelling:
			add(st.Warn.Render("stopping: waiting for the confirms of copies in flight; the rest stay on " + s.Source + " …"))
		case ReplayDone:
			report := ReplayReport(c, s.Source, s.Describe, s.Park, "")
			style := st.OK
			mark := "✓ "
			if s.Err != "" || s.Cancelled || c.Kept > 0 || c.Unknown > 0 {
				style, mark = st.Warn, "⚠ "
			}
			add(style.Render(mark + report[0]))
			for _, l := range report[1:] {
				add(st.Muted.Render(l))
			}
			if s.Cancelled {
				add(st.Warn.Render(fmt.Sprintf("Cancelled: the %d %s confirmed stay moved; the rest stay on %s.", c.Moved+c.Parked, topology.Plural(int64(c.Moved+c.Parked), "message", "messages"), s.Source)))
			}
			if s.Err != "" {
				add(st.Danger.Render("✗ " + s.Err))
			}
		}
	}
	ls = append(ls, "", KeyHints(s.Keys, st, inner))
	title, ts := "Replay from "+s.Source+"?", st.DialogTitle
	switch s.Phase {
	case ReplayRunning, ReplayCancelling:
		title = "Replaying from " + s.Source
	case ReplayDone:
		title = "Replayed from " + s.Source
	}
	return Dialog(title, strings.Join(ls, "\n"), ts, st, w)
}

// replayBar is the progress bar with "done/total pct" after it, or only
// the count when the total is unknown.
func replayBar(s ReplayState, st Styles, w int) string {
	c := s.Counts
	done := c.Moved + c.Parked
	total := s.total()
	if total <= 0 {
		return st.Muted.Render(fmt.Sprintf("%d taken off %s", done, s.Source))
	}
	label := fmt.Sprintf(" %d/%d %3d%%", done, total, min(100, done*100/total))
	bw := max(4, w-lipgloss.Width(label))
	fill, track := barText(int64(done), int64(total), bw)
	return st.Bar.Render(fill) + st.BarTrack.Render(strings.Repeat("·", lipgloss.Width(track))) + label
}
