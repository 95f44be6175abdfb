package ui

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// WritePeek writes rungs peek's text: the head of the queue, then each
// message with its story, bodies cut at maxBody bytes.
func WritePeek(w io.Writer, res broker.PeekResult, stories []topology.Story, g ops.PeekGate, maxBody int) {
	qt := ""
	if g.Checked {
		qt = fmt.Sprintf(" (%s queue)", g.Risk.Type)
	}
	fmt.Fprintf(w, "%s: %d of %d ready message(s), from the head%s\n", res.Queue, len(res.Messages), res.Ready, qt)
	if len(res.Messages) > 0 {
		fmt.Fprintln(w, "peeking left them in the queue, in order, marked redelivered")
	}
	for i, m := range res.Messages {
		fmt.Fprintln(w)
		for _, l := range MessageText(m, stories[i], maxBody) {
			fmt.Fprintln(w, l)
		}
	}
}

// WriteTrace writes rungs trace's text: the ladder as described, the key
// and exchange to publish with, the hops, and what the broker's bindings
// say of the route.
func WriteTrace(w io.Writer, described string, tr topology.Trace, c ops.RouteCheck) {
	fmt.Fprintln(w, described)
	rounded := ""
	if tr.Delay != tr.Requested {
		rounded = fmt.Sprintf(" (%s rounded up to the %s unit)", topology.FormatDelay(tr.Requested), topology.FormatDelay(tr.Ladder.Unit))
	}
	fmt.Fprintf(w, "delay    %s%s\n", topology.FormatDelay(tr.Delay), rounded)
	fmt.Fprintf(w, "key      %s\n", tr.Key)
	if len(tr.BCC) > 0 {
		fmt.Fprintf(w, "BCC      %s   (header BCC: one key per hop, then delivery)\n", strings.Join(tr.BCC, "  "))
	}
	fmt.Fprintf(w, "publish  to exchange %s\n", tr.Exchange)
	t := TextTable(w)
	fmt.Fprintln(t, "hop\tqueue\tttl\tenters\tleaves")
	for i, h := range tr.Hops {
		fmt.Fprintf(t, "%d\t%s\t%s\t%s\t%s\n", i+1, h.Queue, topology.FormatDelay(h.TTL), topology.FormatDelay(h.Start), topology.FormatDelay(h.End))
	}
	fmt.Fprintf(t, "→\t%s\t\t%s\t\n", tr.Target, topology.FormatDelay(tr.Total()))
	t.Flush()
	fmt.Fprintln(w, RouteCheckLine(c))
}

// RouteCheckLine is what a trace says of its route on the broker.
func RouteCheckLine(c ops.RouteCheck) string {
	switch {
	case c.Err != nil:
		return fmt.Sprintf("BROKEN on the broker: %v", c.Err)
	case c.Checked:
		return "checked: the broker's bindings route it exactly this way"
	}
	return c.Unchecked
}

// DryRunText is replay --dry-run's text: each previewed message's verdict.
func DryRunText(source string, dry ops.ReplayDryRun) string {
	rows := make([][]string, 0, len(dry.Verdicts))
	for _, v := range dry.Verdicts {
		rows = append(rows, []string{fmt.Sprintf("#%d", v.Position+1), orHyphen(v.MessageID), verdictText(v)})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "dry run: the first %d of %d ready message(s) of %s; nothing was moved\n", len(rows), dry.Ready, source)
	for _, l := range AlignRows(rows) {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// orHyphen is s, or an ASCII "-" for nothing: the CLI's text stays ASCII
// in its columns where the console draws "–" (orDash).
func orHyphen(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// verdictText is where a previewed message goes, and the queues it
// reaches when the vhost was read, or why it stays.
func verdictText(v ops.ReplayVerdict) string {
	if !v.Moves {
		return "stays: " + v.Stays
	}
	dest := "→ " + v.Route()
	if len(v.Reaches) > 0 {
		dest += " (reaches " + strings.Join(v.Reaches, ", ") + ")"
	}
	return dest
}

// ReplayProgressLine is a replay's progress as it runs, on stderr.
func ReplayProgressLine(p broker.MoveProgress) string {
	return fmt.Sprintf("replay: %d moved, %d parked, %d kept, %.0f/s", p.Moved, p.Parked, p.Kept, p.Rate())
}

// WarningsText is warnings as the CLI prints them on stderr, a line each.
func WarningsText(warnings []string) string {
	var b strings.Builder
	for _, w := range warnings {
		b.WriteString("rungs: warning: " + w + "\n")
	}
	return b.String()
}

// WarningText is one warning as WarningsText prints it, or nothing when
// there is none.
func WarningText(warning string) string {
	if warning == "" {
		return ""
	}
	return WarningsText([]string{warning})
}

// RetryPolicy is a retry policy as the demo worker describes it: plain
// values, so that ui need not know the retry library.
type RetryPolicy struct {
	Steps           []time.Duration
	Initial, Max    time.Duration
	Multiplier      float64
	Jitter          float64
	MaxAttempts     int
	DefaultMultiply float64 // the library's multiplier when Multiplier is 0
}

// PolicyText describes a retry policy in one phrase.
func PolicyText(p RetryPolicy) string {
	var d string
	if len(p.Steps) > 0 {
		steps := make([]string, len(p.Steps))
		for i, s := range p.Steps {
			steps[i] = topology.FormatDelay(s)
		}
		d = "steps " + strings.Join(steps, ", ")
	} else {
		m := p.Multiplier
		if m == 0 {
			m = p.DefaultMultiply
		}
		d = fmt.Sprintf("backoff %s ×%v up to %s", topology.FormatDelay(p.Initial), m, topology.FormatDelay(p.Max))
	}
	if p.Jitter > 0 {
		d += fmt.Sprintf(" +%.0f%% jitter", p.Jitter*100)
	}
	return fmt.Sprintf("%s, %d attempts", d, p.MaxAttempts)
}

// Job is one job the demo worker handled, as plain values: Err is the
// attempt's failure, RetryErr why it could not be sent back, Parked
// whether it ran out of attempts.
type Job struct {
	At       time.Time
	ID       string
	Attempt  int
	Err      error
	RetryErr error
	Action   string
	Parked   bool
	Delay    time.Duration
	Key      string
	Queue    string
}

// id names a job that has no message id "job".
func (j Job) id() string {
	if j.ID == "" {
		return "job"
	}
	return j.ID
}

// JobLine is the worker's text line for one job.
func JobLine(j Job) string {
	var what string
	switch {
	case j.RetryErr != nil:
		what = fmt.Sprintf("failed: %v; could not retry it (%v), handed it back", j.Err, j.RetryErr)
	case j.Err == nil:
		what = "ok"
	case j.Parked:
		what = fmt.Sprintf("failed: %v; parked in %s", j.Err, j.Queue)
	default:
		what = fmt.Sprintf("failed: %v; retry in %s (key %s)", j.Err, topology.FormatDelay(j.Delay), j.Key)
	}
	return fmt.Sprintf("%s  %s  attempt %d  %s", j.At.Format("15:04:05.000"), j.id(), j.Attempt, what)
}

// JobJSON is the worker's --json line for one job.
func JobJSON(j Job) map[string]any {
	line := map[string]any{"time": j.At.UTC().Format(time.RFC3339Nano), "job": j.id(), "attempt": j.Attempt, "ok": j.Err == nil}
	if j.Err != nil {
		line["error"] = j.Err.Error()
		line["action"] = j.Action
		line["delay_ms"] = j.Delay.Milliseconds()
		line["routing_key"] = j.Key
		line["queue"] = j.Queue
	}
	if j.RetryErr != nil {
		line["retry_error"] = j.RetryErr.Error()
	}
	return line
}

// PeekNoticeText is the line a peek that goes ahead says on stderr: a
// warning when the queue could not be checked, a note when the peek
// changes the broker, nothing otherwise.
func PeekNoticeText(g ops.PeekGate) string {
	switch {
	case g.Note == "":
		return ""
	case !g.Checked:
		return "rungs: warning: " + g.Note + "\n"
	}
	return "rungs: note: " + g.Note + "\n"
}

// ReplayReportText is rungs replay's closing report (ReplayReport), with
// --where as the filter it names.
func ReplayReportText(res broker.MoveProgress, from, describe, park string) string {
	return strings.Join(ReplayReport(res, from, describe, park, "--where"), "\n") + "\n"
}

// PublishText is rungs publish's report: what the broker confirmed of
// asked messages, and, when any were, where and when they arrive.
func PublishText(tr topology.Trace, r broker.PublishResult, asked int, took time.Duration) string {
	s := fmt.Sprintf("published %d of %d to %s with key %s: %d confirmed, %d returned, %d nacked, %d failed (%s)\n",
		r.Confirmed, asked, tr.Exchange, tr.Key, r.Confirmed, r.Returned, r.Nacked, r.Failed, took.Round(time.Millisecond))
	if r.Confirmed > 0 {
		s += fmt.Sprintf("they reach %s in %s, after %s\n", tr.Target, topology.FormatDelay(tr.Delay), topology.Counted(len(tr.Hops), "rung", "rungs"))
	}
	return s
}
