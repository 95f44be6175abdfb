package model

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// The scheduled screen is a child of the App, as the dialogs are: the App
// opens it, hands it its keys, its reports and its dialogs' answers, and
// does what each step asks (a schedOutcome). A scan reads every rung
// through ops.PlanScan and ScanPlan.Run in a tea.Cmd; its progress comes
// back as messages, so the console answers keys while it runs and esc
// stops it. Actions (cancel, reschedule, fire now) plan through
// ops.PlanAction, confirm, then run ActionPlan.Run the same way.

// Scheduler reads and acts on a ladder's scheduled messages
// (*broker.Conn is one).
type Scheduler interface {
	ops.Scanner
	ops.DepthMover
}

// scanTimeout bounds planning a scan or an action (reading quorum rungs'
// delivery limits); the scan itself runs until done or cancelled.
const scanTimeout = 15 * time.Second

// scheduled is the scheduled screen: the view, and the scan or action it
// runs. Its run outlives a change of ladder, so that a late report is
// still told from the next run's.
type scheduled struct {
	scheduledView
	// run is the scan or the action running, if any; seq numbers them,
	// so that the reports of one that ended are told from the current
	// one's.
	run *scanRun
	seq int
	// reschedule is a reschedule waiting for its new time on the input
	// line.
	reschedule *pendingAction
	// status is the header's busy line for what the screen runs.
	status string
}

// schedEnv is what a step of the scheduled screen reads from the App: the
// clients and what the console holds at that moment.
type schedEnv struct {
	sched    Scheduler
	facts    ops.PeekFacter
	snap     topology.Snapshot
	ladders  []topology.Ladder
	readOnly bool
	// front: the screen is in front, so an action's end scans again.
	front bool
	now   time.Time
}

// schedOutcome is what a step of the scheduled screen asks of the App,
// which alone holds the header's result line, the dialogs, the input line
// and the command log. The zero value asks nothing.
type schedOutcome struct {
	result *ui.Result
	// open is a dialog to show (a confirmation, the force refusal),
	// init its first command.
	open dialog
	init tea.Cmd
	// askDue opens the input line for a reschedule's new due time.
	askDue bool
	log    *logCmd
}

// logCmd is an operation to record in the command log as it starts; cmd's
// reply records its outcome.
type logCmd struct {
	op   string
	sent []string
	cmd  tea.Cmd
}

// What the App hands the scheduled screen besides keys and reports.
type (
	// scanAgain scans with the filter in use (opening the screen).
	scanAgain struct{}
	// filterTyped is a filter submitted on the input line.
	filterTyped struct{ text string }
	// dueTyped is a reschedule's new due time submitted on the input line.
	dueTyped struct{ text string }
	// dueCancelled is the input line closed without a due time.
	dueCancelled struct{}
)

// For is the screen on ladder f: the same screen if it lists f already,
// else a new view of f, the run and its numbering kept.
func (s scheduled) For(f topology.Found, st ui.Styles, keys scheduledKeys) scheduled {
	if !ops.SameLadder(s.Ladder().Ladder, f.Ladder) {
		s.scheduledView = newScheduledView(f, st, keys)
	}
	return s
}

// Working reports whether a scan or an action runs, so that esc and
// ctrl+c stop it rather than leave or quit.
func (s scheduled) Working() bool { return s.run != nil }

// Status is the header's busy line for the screen: "" when idle.
func (s scheduled) Status() string { return s.status }

// Stop cancels the scan or action running; its end reports what it did.
func (s scheduled) Stop() scheduled {
	if s.run == nil {
		return s
	}
	s.run.cancel()
	s.status = "cancelling the scan …"
	if s.run.action {
		s.status = "stopping: waiting for the confirms of copies in flight …"
	}
	return s
}

// Update takes a key or the wheel, a report of the scan or action
// running, a dialog's answer or what was typed on the input line.
func (s scheduled) Update(msg tea.Msg, env schedEnv) (scheduled, tea.Cmd, schedOutcome) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return s.key(msg, env)
	case scanAgain:
		return s.startScan(s.filterText, s.filter, env)
	case filterTyped:
		return s.applyFilter(msg.text, env)
	case scanForced:
		if !msg.forced {
			return s, nil, schedOutcome{}
		}
		s.force = true
		return s.startScan(s.filterText, s.filter, env)
	case scanProgressMsg:
		if s.run == nil || msg.id != s.run.id {
			return s, nil, schedOutcome{}
		}
		s.progress = msg.p
		return s, s.run.next, schedOutcome{}
	case scanDoneMsg:
		return s.scanEnded(msg, env)
	}
	return s.updateAction(msg, env)
}

// key does what a key on the screen asks; others move the cursor.
func (s scheduled) key(km tea.KeyPressMsg, env schedEnv) (scheduled, tea.Cmd, schedOutcome) {
	k := s.keys
	switch {
	case key.Matches(km, k.Rescan):
		return s.startScan(s.filterText, s.filter, env)
	case key.Matches(km, k.Cancel):
		return s.openAction(ops.ActCancel, true, env)
	case key.Matches(km, k.CancelAll):
		return s.openAction(ops.ActCancel, false, env)
	case key.Matches(km, k.Fire):
		return s.openAction(ops.ActFire, true, env)
	case key.Matches(km, k.FireAll):
		return s.openAction(ops.ActFire, false, env)
	case key.Matches(km, k.Reschedule), key.Matches(km, k.RescheduleAll):
		return s.askReschedule(key.Matches(km, k.Reschedule), env)
	case key.Matches(km, k.Refused):
		return s.refuseOrFail(readOnlyErr(actionWords(km.String())), env)
	}
	var cmd tea.Cmd
	s.scheduledView, cmd = s.scheduledView.Update(km)
	return s, cmd, schedOutcome{}
}

// fail says in the header why a step did nothing.
func (s scheduled) fail(text string) (scheduled, tea.Cmd, schedOutcome) {
	return s, nil, schedOutcome{result: &ui.Result{Kind: ui.ResultError, Text: text}}
}

// refuseOrFail words a refusal: read-only as a warning, others as errors.
func (s scheduled) refuseOrFail(err error, env schedEnv) (scheduled, tea.Cmd, schedOutcome) {
	if env.readOnly {
		return s, nil, schedOutcome{result: &ui.Result{Kind: ui.ResultWarn, Text: err.Error()}}
	}
	return s.fail(err.Error())
}

// The scheduled feature's parsing, for the console: a filter typed on the
// screen and a reschedule's new due time, both read by ops as `rungs
// scheduled` reads them.

// applyFilter reads a filter typed on the screen and scans with it; a bad
// filter is one line and changes nothing.
func (s scheduled) applyFilter(text string, env schedEnv) (scheduled, tea.Cmd, schedOutcome) {
	terms, err := ops.ParseFilterLine(text)
	var f ops.Filter
	if err == nil {
		f, err = terms.Filter(env.now)
	}
	if err != nil {
		return s.fail("filter: " + err.Error())
	}
	return s.startScan(strings.TrimSpace(text), f, env)
}

// dueTyped takes the new due time typed for a pending reschedule.
func (s scheduled) dueTyped(text string, env schedEnv) (scheduled, tea.Cmd, schedOutcome) {
	p := s.reschedule
	s.reschedule = nil
	if p == nil {
		return s, nil, schedOutcome{}
	}
	d, at, err := ops.ParseNewDue(text, env.now)
	if err != nil {
		return s.fail("reschedule: " + err.Error())
	}
	p.delay, p.at = d, at
	return s.planAction(*p, env)
}

// scanRun is the scan or action under way: its id, to tell its reports
// from an older one's, and how to stop it.
type scanRun struct {
	id     int
	cancel context.CancelFunc
	action bool
	// then is the scan to start once this one has ended.
	then *queuedScan
	// keepResult leaves the header's result alone: the scan that follows
	// an action must not hide what the action did.
	keepResult bool
	// next waits for the next progress report; re-armed after each.
	next tea.Cmd
}

// queuedScan is a scan asked for while another was stopping.
type queuedScan struct {
	text   string
	filter ops.Filter
}

// scanProgressMsg is a scan's progress, forwarded from its goroutine.
type scanProgressMsg struct {
	id int
	p  ops.ScanProgress
}

// scanDoneMsg is a scan's end.
type scanDoneMsg struct {
	id   int
	plan ops.ScanPlan
	res  ops.ScanResult
	err  error
}

// forwardLatest is a progress callback that never blocks (Move and the
// scheduled scans and actions must not wait for the UI): it keeps only the
// newest report in a one-slot channel, replacing one the UI has not read.
func forwardLatest[T any](ch chan T) func(T) {
	return func(p T) {
		for {
			select {
			case ch <- p:
				return
			default:
			}
			select {
			case <-ch:
			default:
			}
		}
	}
}

// waitReport blocks for the next report on ch; the screen re-arms it after
// each.
func waitReport[T any](ch <-chan T, wrap func(T) tea.Msg) tea.Cmd {
	return func() tea.Msg {
		p, ok := <-ch
		if !ok {
			return nil
		}
		return wrap(p)
	}
}

// runScan plans and runs a scan off the UI goroutine, closing ch when
// done.
func runScan(ctx context.Context, facts ops.PeekFacter, sc ops.Scanner, req ops.ScanRequest, id int, ch chan ops.ScanProgress) tea.Cmd {
	return func() tea.Msg {
		defer close(ch)
		pctx, cancel := context.WithTimeout(ctx, scanTimeout)
		plan, err := ops.PlanScan(pctx, facts, req)
		cancel()
		if err != nil {
			return scanDoneMsg{id: id, plan: plan, err: err}
		}
		res, err := plan.Run(ctx, sc, forwardLatest(ch))
		return scanDoneMsg{id: id, plan: plan, res: res, err: err}
	}
}

// startScan scans the ladder with filter f (typed as text), replacing a
// scan running; an action running is left to finish.
func (s scheduled) startScan(text string, f ops.Filter, env schedEnv) (scheduled, tea.Cmd, schedOutcome) {
	if s.run != nil && s.run.action {
		return s.fail("an action is running: wait for it, or esc to stop it")
	}
	if s.run != nil {
		// The scan running holds the messages it read until it hands them
		// back; a scan started now would find them missing and list a
		// partial ladder as whole. This one starts when that one ended.
		s.run.cancel()
		s.run.then = &queuedScan{text: text, filter: f}
		s.filterText = text
		s.status = "stopping the scan running, then scanning again …"
		return s, nil, schedOutcome{}
	}
	s.seq++
	ctx, cancel := context.WithCancel(context.Background())
	s.run = &scanRun{id: s.seq, cancel: cancel}
	v := &s.scheduledView
	v.filterText, v.filter, v.phase, v.err = text, f, ui.ScanRunning, ""
	v.progress, v.res, v.sel, v.off = ops.ScanProgress{}, ops.ScanResult{}, 0, 0
	v.plan = ops.ScanPlan{Ready: ladderReady(env.snap, v.found.Ladder)}
	req := ops.ScanRequest{Ladder: v.found.Ladder, Snap: env.snap, Ladders: env.ladders, Filter: f, ReadOnly: env.readOnly, Force: v.force}
	ch := make(chan ops.ScanProgress, 1)
	id := s.seq
	s.run.next = waitReport(ch, func(p ops.ScanProgress) tea.Msg { return scanProgressMsg{id: id, p: p} })
	log := &logCmd{op: "scan", cmd: runScan(ctx, env.facts, env.sched, req, id, ch),
		sent: []string{"ladder=" + v.found.Ladder.Name, "filter=" + f.String(), "consume no-ack=false, then basic.nack requeue=true per rung"}}
	return s, s.run.next, schedOutcome{log: log}
}

// ladderReady is how many ready messages the ladder's rungs hold, for the
// bar's total before the plan says.
func ladderReady(snap topology.Snapshot, l topology.Ladder) int {
	n := 0
	for _, r := range l.Rungs() {
		if q, ok := snap.Queue(r.Queue); ok {
			n += int(q.Stats.Ready)
		}
	}
	return n
}

// scanEnded takes a scan's end: the scan queued behind it starts, or the
// result shows, with the force refusal where the peek rules ask for it.
func (s scheduled) scanEnded(m scanDoneMsg, env schedEnv) (scheduled, tea.Cmd, schedOutcome) {
	if s.run == nil || m.id != s.run.id {
		return s, nil, schedOutcome{}
	}
	keep, then := s.run.keepResult, s.run.then
	s.run, s.status = nil, ""
	if then != nil {
		return s.startScan(then.text, then.filter, env)
	}
	var out schedOutcome
	res := s.scanDone(m)
	if !keep {
		out.result = &res
	}
	var refused *ops.ScanRefusal
	if errors.As(m.err, &refused) && refused.Gate.Verdict == ops.PeekNeedsForce && !env.readOnly {
		c := newScanForce(refused, s.st)
		out.open, out.init = c, c.Init()
	}
	return s, nil, out
}

// scanDone shows a scan's result, or why it failed, and words it in one
// line for the header.
func (s *scheduled) scanDone(m scanDoneMsg) ui.Result {
	v := &s.scheduledView
	v.plan, v.res = m.plan, m.res
	// Messages due together (published together) list in rung order, so
	// that the list does not reshuffle between scans.
	sort.SliceStable(v.res.Messages, func(i, j int) bool {
		a, b := v.res.Messages[i], v.res.Messages[j]
		if !a.Earliest.Equal(b.Earliest) {
			return a.Earliest.Before(b.Earliest)
		}
		if a.Rung != b.Rung {
			return a.Rung < b.Rung
		}
		return a.Position < b.Position
	})
	defer v.clamp()
	var refused *ops.ScanRefusal
	switch {
	case errors.As(m.err, &refused) && refused.Gate.Verdict == ops.PeekReadOnly:
		v.phase, v.err = ui.ScanFailed, "read-only: not scanned: "+refused.Gate.Why
		return ui.Result{Kind: ui.ResultWarn, Text: "read-only: scanning " + refused.Rung + " is refused"}
	case errors.As(m.err, &refused):
		v.phase, v.err = ui.ScanFailed, "not scanned: "+refused.Gate.Why
		return ui.Result{Kind: ui.ResultWarn, Text: "not scanned: " + refused.Rung + " needs force"}
	case m.res.Stopped == broker.StopCancelled:
		v.phase = ui.ScanCancelled
		return ui.Result{Kind: ui.ResultWarn, Text: fmt.Sprintf("scan cancelled after %s: showing what it found", topology.Counted(m.res.Seen, "message", "messages"))}
	case m.err != nil:
		v.phase, v.err = ui.ScanFailed, m.err.Error()
		return ui.Result{Kind: ui.ResultError, Text: "scan of " + v.found.Ladder.Name + " failed: " + m.err.Error()}
	}
	v.phase = ui.ScanDone
	return ui.Result{Kind: ui.ResultOK, Text: scanDoneText(m.res, !v.filter.Empty())}
}

// scanDoneText is a finished scan's result line. Messages that moved down
// a rung while the scan read are said, as `rungs scheduled` says them:
// otherwise a list shorter than the messages read looks like a loss.
func scanDoneText(res ops.ScanResult, filtered bool) string {
	verb := "scheduled"
	if filtered {
		verb = "match"
	}
	text := fmt.Sprintf("scanned %s: %d %s", topology.Counted(res.Seen, "message", "messages"), res.Matched, verb)
	if res.Recounted > 0 {
		text += fmt.Sprintf(" (%d moved down while read, counted once)", res.Recounted)
	}
	return text
}

// actionWords names what a refused key would have done.
func actionWords(k string) string {
	switch strings.ToLower(k) {
	case "m":
		return "rescheduling"
	case "n":
		return "firing now"
	}
	return "cancelling"
}

// readOnlyErr is the refusal of an action in read-only mode, short
// enough to stay whole in the header at 80 columns.
func readOnlyErr(what string) error { return fmt.Errorf("read-only: %s is off (--read-only)", what) }
