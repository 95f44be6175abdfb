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

// The CLI's text output of `rungs scheduled`, `rungs migrate` and
// `rungs config contexts`: pure functions of what the operation returned.

// WriteScheduled prints a scan: a listing, or what a dry run of action
// would take ("" for a listing).
func WriteScheduled(w io.Writer, plan ops.ScanPlan, res ops.ScanResult, action string, now time.Time) {
	l := res.Ladder
	head := fmt.Sprintf("%s: %s in flight, %s match %s", shortLadder(l), topology.FormatCount(int64(res.Seen)), topology.FormatCount(int64(res.Matched)), plan.Filter)
	if action != "" {
		head = fmt.Sprintf("dry run: would %s %s message(s) of %s (%s); nothing was changed", action, topology.FormatCount(int64(res.Matched)), l.Name, plan.Filter)
	}
	fmt.Fprintln(w, head)
	h, est := res.Horizons, res.FromDepths
	fmt.Fprintf(w, "due  next minute %s · next hour %s · next day %s · later %s   (estimate from depths: %s · %s · %s · %s)\n",
		topology.FormatCount(int64(h.Minute)), topology.FormatCount(int64(h.Hour)), topology.FormatCount(int64(h.Day)), topology.FormatCount(int64(h.Later)),
		topology.FormatCount(int64(est.Minute)), topology.FormatCount(int64(est.Hour)), topology.FormatCount(int64(est.Day)), topology.FormatCount(int64(est.Later)))
	fmt.Fprintf(w, "read in %s; a rung was held at most %s\n", topology.FormatSpan(res.Elapsed.Round(time.Millisecond)), topology.FormatSpan(res.Held.Round(time.Millisecond)))
	if res.Recounted > 0 {
		fmt.Fprintf(w, "%s message(s) moved down the ladder while it was read and were counted once, in the rung they left\n", topology.FormatCount(int64(res.Recounted)))
	}
	if res.Foreign > 0 {
		fmt.Fprintf(w, "%s message(s) carry a routing key of no path of %s and were left out\n", topology.FormatCount(int64(res.Foreign)), l.Name)
	}
	if note := res.StackedNote(); note != "" {
		fmt.Fprintln(w, "warning: "+note)
	}
	if len(res.Messages) == 0 {
		return
	}
	if len(res.Messages) < res.Matched {
		fmt.Fprintf(w, "the %d earliest due:\n", len(res.Messages))
	}
	rows := [][]string{{"DUE (UTC)", "LEFT", "BASIS", "RUNG", "DEST", "MESSAGE-ID", "CORRELATION-ID", "BODY"}}
	for _, m := range res.Messages {
		id := m.MessageID
		if m.TaskID != "" {
			id = m.TaskID
		}
		rows = append(rows, []string{scheduledDue(m), topology.FormatDelay(m.Left(now).Round(time.Second)), string(m.Basis), m.Rung, orHyphen(m.Dest), orHyphen(id), orHyphen(m.CorrelationID), clipped(m.Preview, 30)})
	}
	for _, line := range AlignRows(rows) {
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

// shortLadder names a ladder in a scan's first line.
func shortLadder(l topology.Ladder) string {
	return fmt.Sprintf("%s ladder %s (%s unit, %s)", l.Layout, l.Name, topology.FormatDelay(l.Unit), l.QueueType)
}

// scheduledDue names one time for an exact due, a window otherwise. The
// CLI prints UTC dates in full, unlike the console's DueText.
func scheduledDue(m ops.ScheduledMessage) string {
	const layout = "2006-01-02 15:04:05"
	if m.Exact {
		return m.Earliest.UTC().Format(layout)
	}
	return m.Earliest.UTC().Format(layout) + " … " + m.Latest.UTC().Format("15:04:05")
}

// clipped is s on one line of at most n runes, its whitespace collapsed.
func clipped(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// ScanProgressText is the line a scan's bar rewrites on a terminal; "" once
// the scan is done.
func ScanProgressText(p ops.ScanProgress) string {
	if p.Done {
		return ""
	}
	return fmt.Sprintf("\r\033[Kscanning %s %s %s/%s read, %s matched, rung %d of %d",
		HashBar(p.Seen, max(p.Total, 1), 24), fmt.Sprintf("%3.0f%%", 100*p.Fraction()),
		topology.FormatCount(int64(p.Seen)), topology.FormatCount(int64(p.Total)), topology.FormatCount(int64(p.Matched)), p.Index+1, p.Rungs)
}

// ActionProgressText is the line a scheduled action's bar rewrites.
func ActionProgressText(a ops.Action, p ops.ActionProgress) string {
	acted := p.Result.Acted + p.Move.Moved + p.Move.Parked + p.Move.Dropped
	return fmt.Sprintf("\r\033[K%s: rung %d of %d (%s): %s done, %s left in place", a, p.Index+1, p.Rungs, p.Rung,
		topology.FormatCount(int64(acted)), topology.FormatCount(int64(p.Result.Left+p.Move.Skipped)))
}

// WriteAction says what a scheduled action did.
func WriteAction(w io.Writer, p ops.ActionPlan, res ops.ActionResult) {
	verb := map[ops.Action]string{ops.ActCancel: "parked in " + p.Park, ops.ActDiscard: "discarded", ops.ActReschedule: "rescheduled", ops.ActFire: "fired"}[p.Action]
	fmt.Fprintf(w, "%s message(s) %s; %s left in place (held at most %s); %s\n", topology.FormatCount(int64(res.Acted)), verb,
		topology.FormatCount(int64(res.Left)), topology.FormatSpan(res.Held.Round(time.Millisecond)), topology.FormatSpan(res.Elapsed.Round(time.Millisecond)))
	if res.Unknown > 0 {
		fmt.Fprintf(w, "%d possible duplicate(s): copies confirmed whose original may have stayed (they carry x-rungs-replay-id)\n", res.Unknown)
	}
	for k, n := range res.Reasons {
		if k != ops.CancelReason {
			fmt.Fprintf(w, "  %d stayed: %s\n", n, k)
		}
	}
	if p.Action == ops.ActCancel && res.Acted > 0 {
		fmt.Fprintf(w, "undo: rungs replay --from %s --to-origin\n", p.Park)
	}
}

// HashBar is [#####-----], w cells inside the brackets; more than total
// (messages that moved between rungs while they were drained) fills it.
func HashBar(n, total, w int) string {
	fill := w
	if total > 0 && n < total {
		fill = n * w / total
	}
	return "[" + strings.Repeat("#", fill) + strings.Repeat("-", w-fill) + "]"
}

// MigrateProgressText is the line migrate's bar rewrites: rung i of the
// plan, done the rungs before it, p the current rung's move, cut to a
// terminal width wide and padded to clear what it overwrites.
func MigrateProgressText(mp ops.MigratePlan, i int, queue string, done ops.MigrateResult, p broker.MoveProgress, width int) string {
	total := int(mp.Ready)
	n := done.Moved + done.Parked + p.Moved + p.Parked
	line := fmt.Sprintf("migrate %s %d/%d  rung %d/%d %s  moved %d · parked %d · %s/s",
		HashBar(n, total, 24), n, total, i+1, len(mp.Rungs), queue,
		done.Moved+p.Moved, done.Parked+p.Parked, topology.FormatRate(p.Rate()))
	if len(line) > width-1 {
		line = line[:width-1]
	}
	return fmt.Sprintf("\r%-*s", width-1, line)
}

// WriteMigrate says what a migration did, per rung (or delay queue) and
// in all.
func WriteMigrate(w io.Writer, mp ops.MigratePlan, res ops.MigrateResult) {
	column := "rung"
	if mp.Group != nil {
		column = "queue"
		fmt.Fprintf(w, "migrated %d message(s) from the delay queues of %s into %s %q in %s; stopped: %s\n",
			res.Moved, mp.Source(), mp.Migration.To.Layout, mp.Migration.To.Name, res.Elapsed.Round(time.Millisecond), res.Stopped)
	} else {
		rate := 0.0
		if s := res.Elapsed.Seconds(); s > 0 {
			rate = float64(res.Moved+res.Parked) / s
		}
		fmt.Fprintf(w, "migrated %d message(s) from %s %q into %s %q in %s (%.0f/s); stopped: %s\n",
			res.Moved, mp.Migration.From.Layout, mp.Migration.From.Name, mp.Migration.To.Layout, mp.Migration.To.Name, res.Elapsed.Round(time.Millisecond), rate, res.Stopped)
	}
	t := TextTable(w)
	fmt.Fprintf(t, "  %s\tmoved\tparked\tstayed\tleft\n", column)
	for _, r := range res.Rungs {
		left := "?"
		if r.Left >= 0 {
			left = fmt.Sprint(r.Left)
		}
		note := ""
		if mp.Group == nil && r.Stopped != "" && r.Stopped != broker.StopEmpty {
			note = "\tstopped: " + r.Stopped
		}
		fmt.Fprintf(t, "  %s\t%d\t%d\t%d\t%s%s\n", r.Queue, r.Moved, r.Parked, r.Stayed, left, note)
	}
	fmt.Fprintf(t, "  total\t%d\t%d\t%d\n", res.Moved, res.Parked, res.Stayed)
	_ = t.Flush()
	if res.Parked > 0 {
		fmt.Fprintf(w, "  %d parked in %s, the reason in x-rungs-reason\n", res.Parked, mp.Park)
	}
	if res.Unknown > 0 || res.Reconnects > 0 {
		fmt.Fprintf(w, "  %d possibly duplicated (in flight when the connection dropped %s)\n", res.Unknown, topology.Counted(res.Reconnects, "time", "times"))
	}
	for _, l := range ReasonLines(res.Reasons) {
		fmt.Fprintln(w, l)
	}
	for _, l := range res.HeldElsewhere() {
		fmt.Fprintln(w, "  warning: "+l)
	}
}

// WriteMigratePreview shows a dry run: per rung (or delay queue), where
// each of its first messages would go.
func WriteMigratePreview(w io.Writer, mp ops.MigratePlan, out []ops.MigrateRungPreview) {
	if mp.Group != nil {
		writeDelaysPreview(w, mp, out)
		return
	}
	fmt.Fprintf(w, "dry run: nothing was moved\n  from %s\n  into %s\n", mp.Migration.From.Describe(), mp.Migration.To.Describe())
	for _, rp := range out {
		head := previewHead(rp)
		switch {
		case rp.Skipped != "":
			fmt.Fprintf(w, "%s; not previewed: %s\n", head, rp.Skipped)
			continue
		case rp.Ready == 0 && len(rp.Messages) == 0:
			continue
		}
		fmt.Fprintf(w, "%s, the first %d:\n", head, len(rp.Messages))
		t := TextTable(w)
		for i, m := range rp.Messages {
			est := rp.Estimates[i]
			was := "?"
			if est.Rung.Queue != "" {
				was = fmt.Sprintf("%s, ≥%s spent (%s)", topology.FormatDelay(est.Total), topology.FormatDelay(est.Spent.Truncate(time.Millisecond)), est.Basis)
			}
			fmt.Fprintf(t, "  #%d\t%s\t%s\t%s\n", m.Position+1, orHyphen(m.MessageID), was, previewWhere(m))
		}
		_ = t.Flush()
	}
}

// writeDelaysPreview is the dry run of a migration of delays
// (--from-delays): per delay queue, where each of its first messages
// would go and what is left of its delay.
func writeDelaysPreview(w io.Writer, mp ops.MigratePlan, out []ops.MigrateRungPreview) {
	fmt.Fprintf(w, "dry run: nothing was moved\n  from the delay queues of %s\n  into %s\n", mp.Source(), mp.Migration.To.Describe())
	for _, rp := range out {
		head := previewHead(rp)
		if rp.Skipped != "" {
			fmt.Fprintf(w, "%s; not previewed: %s\n", head, rp.Skipped)
			continue
		}
		fmt.Fprintf(w, "%s, the first %d:\n", head, len(rp.Messages))
		t := TextTable(w)
		for _, m := range rp.Messages {
			fmt.Fprintf(t, "  #%d\t%s\t%s left of %s (%s)\t%s\n", m.Position+1, orHyphen(m.MessageID), topology.FormatDelay(time.Duration(m.RemainingMS)*time.Millisecond), topology.FormatDelay(time.Duration(m.DelayMS)*time.Millisecond), m.Basis, previewWhere(m))
		}
		_ = t.Flush()
	}
}

func previewHead(rp ops.MigrateRungPreview) string {
	return fmt.Sprintf("%s (%s): %d ready", rp.Queue, topology.FormatDelay(time.Duration(rp.TTLMS)*time.Millisecond), rp.Ready)
}

// previewWhere is where a previewed message would go.
func previewWhere(m ops.MigrateMessagePreview) string {
	if m.Park != "" {
		return "→ park: " + m.Park
	}
	return fmt.Sprintf("→ %s via %s key %s → %s", topology.FormatDelay(time.Duration(m.TargetDelayMS)*time.Millisecond), m.Exchange, m.RoutingKey, m.Target)
}

// WriteContexts lists the config file's contexts, the current one marked.
func WriteContexts(w io.Writer, l ops.ContextList) error {
	if len(l.Contexts) == 0 {
		fmt.Fprintf(w, "no contexts in %s\n", l.Path)
		return nil
	}
	t := TextTable(w)
	fmt.Fprintln(t, "\tcontext\turl\tvhost\tread-only\tpassword")
	for _, c := range l.Contexts {
		mark, ro, vh := "", "", c.Vhost
		if c.Current {
			mark = "*"
		}
		if c.ReadOnly {
			ro = "yes"
		}
		if vh == "" {
			vh = "(url's)"
		}
		fmt.Fprintf(t, "%s\t%s\t%s\t%s\t%s\t%s\n", mark, c.Name, c.URL, vh, ro, c.Credentials)
	}
	return t.Flush()
}
