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

// The scheduled view lists the messages waiting in the open ladder's
// rungs by when they are due (issue 24). A scan reads every rung through
// ops.PlanScan and ScanPlan.Run in a tea.Cmd; its progress comes back as
// messages, so the console answers keys while it runs and esc stops it.
// Actions (cancel, reschedule, fire now) plan through ops.PlanAction,
// confirm, then run ActionPlan.Run the same way.

// Scheduler reads and acts on a ladder's scheduled messages
// (*broker.Conn is one).
type Scheduler interface {
	ops.Scanner
	ops.DepthMover
}

// scanTimeout bounds planning a scan or an action (reading quorum rungs'
// delivery limits); the scan itself runs until done or cancelled.
const scanTimeout = 15 * time.Second

// scheduledKeys drive the scheduled view.
type scheduledKeys struct {
	Up, Down, Top, Bottom                     key.Binding
	Cancel, Reschedule, Fire                  key.Binding
	CancelAll, RescheduleAll, FireAll, Rescan key.Binding
	Refused                                   key.Binding
}

func defaultScheduledKeys(readOnly bool) scheduledKeys {
	k := scheduledKeys{
		Up:            key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/↓", "message")),
		Down:          key.NewBinding(key.WithKeys("down", "j")),
		Top:           key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/G", "first/last")),
		Bottom:        key.NewBinding(key.WithKeys("end", "G")),
		Cancel:        key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "cancel")),
		Reschedule:    key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "reschedule")),
		Fire:          key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "fire now")),
		CancelAll:     key.NewBinding(key.WithKeys("X"), key.WithHelp("X/M/N", "all")),
		RescheduleAll: key.NewBinding(key.WithKeys("M")),
		FireAll:       key.NewBinding(key.WithKeys("N")),
		Rescan:        key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "scan again")),
		Refused:       key.NewBinding(key.WithKeys("x", "m", "n", "X", "M", "N"), key.WithHelp("x m n", "off (read-only)")),
	}
	for _, b := range []*key.Binding{&k.Cancel, &k.Reschedule, &k.Fire, &k.CancelAll, &k.RescheduleAll, &k.FireAll} {
		b.SetEnabled(!readOnly)
	}
	k.Refused.SetEnabled(readOnly)
	return k
}

// scheduledHelp is the footer of the scheduled view.
func (k keyMap) scheduledHelp() []key.Binding {
	s := k.sched
	return []key.Binding{k.global.Back, s.Cancel, s.Reschedule, s.Fire, s.CancelAll, s.Refused, k.global.Filter, s.Rescan, s.Up, k.global.Quit, k.global.Help}
}

// scheduledHelpDialog is the help overlay on the scheduled view: its own
// keys in place of the ladder's.
func (k keyMap) scheduledHelpDialog(d helpDialog, readOnly bool) helpDialog {
	s := k.sched
	quit := key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q/^c", "quit/now"))
	stop := key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "stop a scan, back"))
	d.groups = []ui.HelpGroup{
		{Title: "move", Keys: []key.Binding{s.Up, s.Top, stop}},
		{Title: "act", Keys: []key.Binding{s.Cancel, s.Reschedule, s.Fire, s.CancelAll}},
		{Title: "console", Keys: []key.Binding{k.global.Filter, s.Rescan, k.global.Command, k.global.Log, k.global.Help, quit}},
	}
	if readOnly {
		d.note = "read-only: cancel, reschedule and fire now are off"
	}
	return d
}

// scheduledView is the scheduled messages of one ladder: the last scan's
// result, or the one running.
type scheduledView struct {
	keys  scheduledKeys
	st    ui.Styles
	found topology.Found
	// filterText is the filter as typed, filter as read.
	filterText string
	filter     ops.Filter
	phase      ui.ScanPhase
	progress   ops.ScanProgress
	plan       ops.ScanPlan
	res        ops.ScanResult
	err        string
	forecast   topology.Forecast
	// force reads rungs the peek rules refuse, once the operator typed
	// "force" for this ladder.
	force    bool
	sel, off int
	w, h     int
}

func newScheduledView(f topology.Found, st ui.Styles, keys scheduledKeys) scheduledView {
	return scheduledView{keys: keys, st: st, found: f}
}

// SetStyles restyles the view.
func (v *scheduledView) SetStyles(st ui.Styles) { v.st = st }

// SetSize gives the view its body size.
func (v *scheduledView) SetSize(w, h int) {
	v.w, v.h = w, h
	v.clamp()
}

// SetForecast keeps the depth-based forecast shown beside the counts.
func (v *scheduledView) SetForecast(fc topology.Forecast) { v.forecast = fc }

// Ladder is the ladder the view lists.
func (v scheduledView) Ladder() topology.Found { return v.found }

// Filter is the filter as typed.
func (v scheduledView) Filter() string { return v.filterText }

// Running reports whether a scan is under way.
func (v scheduledView) Running() bool { return v.phase == ui.ScanRunning && v.found.Ladder.Name != "" }

// Selected is the message under the cursor.
func (v scheduledView) Selected() (ops.ScheduledMessage, bool) {
	if v.sel < 0 || v.sel >= len(v.res.Messages) {
		return ops.ScheduledMessage{}, false
	}
	return v.res.Messages[v.sel], true
}

func (v *scheduledView) clamp() {
	n := len(v.res.Messages)
	v.sel = max(0, min(v.sel, n-1))
	s := ui.ScheduledState{Rows: make([]ui.ScheduledRow, n)}
	v.off = ui.Scroll(v.sel, v.off, min(n, s.ListHeight(v.h)), n)
}

// Update moves the cursor.
func (v scheduledView) Update(msg tea.Msg) (scheduledView, tea.Cmd) {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(km, v.keys.Up):
			v.sel--
		case key.Matches(km, v.keys.Down):
			v.sel++
		case key.Matches(km, v.keys.Top):
			v.sel = 0
		case key.Matches(km, v.keys.Bottom):
			v.sel = len(v.res.Messages) - 1
		}
	}
	if wm, ok := msg.(tea.MouseWheelMsg); ok {
		switch wm.Button {
		case tea.MouseWheelUp:
			v.sel--
		case tea.MouseWheelDown:
			v.sel++
		}
	}
	v.clamp()
	return v, nil
}

// state is the view as ui draws it.
func (v scheduledView) state(now time.Time) ui.ScheduledState {
	s := ui.ScheduledState{
		Ladder: v.found.Ladder.Name, Phase: v.phase, Filter: v.filterText, Err: v.err,
		Selected: v.sel, Offset: v.off, Now: now,
	}
	if v.phase == ui.ScanRunning {
		p := v.progress
		s.Scanned, s.Total, s.Matched, s.Elapsed = int64(p.Seen), int64(p.Total), int64(p.Matched), p.Elapsed
		if s.Total == 0 {
			s.Total = int64(v.plan.Ready)
		}
		return s
	}
	r := v.res
	s.Scanned, s.Total, s.Matched, s.Elapsed = int64(r.Seen), int64(r.Seen), int64(r.Matched), r.Elapsed
	for _, m := range r.Messages {
		s.Rows = append(s.Rows, scheduledRow(m))
	}
	if v.phase == ui.ScanDone || v.phase == ui.ScanCancelled {
		s.Horizons = horizons(r.Horizons, v.forecast)
	}
	return s
}

// scheduledRow is a scanned message as the list shows it.
func scheduledRow(m ops.ScheduledMessage) ui.ScheduledRow {
	id := m.MessageID
	if id == "" {
		id = m.TaskID
	}
	r := ui.ScheduledRow{
		Due: m.Earliest, Latest: m.Latest, Exact: m.Exact, Basis: string(m.Basis),
		Rung: m.Rung, Dest: m.Dest, MessageID: id, Correlation: m.CorrelationID,
		Preview: strings.Join(strings.Fields(m.Preview), " "),
	}
	if m.Stacked > 0 {
		r.Warning = fmt.Sprintf("key stacked %d×: %s left (kombu#2556)", m.Stacked, topology.Counted(m.RetriesLeft, "delayed retry", "delayed retries"))
	}
	return r
}

// horizons sets the scan's counts (what the messages say) beside the
// live forecast's estimates (what the rungs' depths say), bucket by bucket.
func horizons(h ops.Horizons, fc topology.Forecast) []ui.Horizon {
	est := ops.ForecastHorizons(fc)
	return []ui.Horizon{
		{Label: "<1m", Found: int64(h.Minute), Estimate: int64(est.Minute)},
		{Label: "<1h", Found: int64(h.Hour), Estimate: int64(est.Hour)},
		{Label: "<1d", Found: int64(h.Day), Estimate: int64(est.Day)},
		{Label: "later", Found: int64(h.Later), Estimate: int64(est.Later)},
	}
}

// View renders the view.
func (v scheduledView) View(now time.Time) string {
	return ui.ScheduledView(v.state(now), v.st, v.w, v.h)
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

// forwardLatest is a progress callback that never blocks: it keeps only
// the newest report in a one-slot channel, as forwardProgress does.
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

// waitReport blocks for the next report on ch; the App re-arms it after each.
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

// rungFacts is the peek-facts reader PlanScan weighs quorum rungs with,
// nil without one.
func (a App) rungFacts() ops.PeekFacter {
	if a.limits == nil {
		return nil
	}
	return a.limits
}

// openScheduled shows the open ladder's scheduled messages and scans.
func (a App) openScheduled() (App, tea.Cmd) {
	if a.sched.Running() {
		a.screen = screenScheduled
		return a, nil
	}
	if a.scheduler == nil {
		return a.fail("listing scheduled messages needs an AMQP connection, and this console has none")
	}
	f := a.ladder.Found()
	if !ops.SameLadder(a.sched.Ladder().Ladder, f.Ladder) {
		a.sched = newScheduledView(f, a.styles, a.keys.sched)
	}
	a.screen = screenScheduled
	a.resize()
	a.rebuild()
	return a.startScan(a.sched.filterText, a.sched.filter)
}

// startScan scans the ladder with filter f (typed as text), replacing a
// scan running; an action running is left to finish.
func (a App) startScan(text string, f ops.Filter) (App, tea.Cmd) {
	if a.scan != nil && a.scan.action {
		return a.fail("an action is running: wait for it, or esc to stop it")
	}
	if a.scan != nil {
		// The scan running holds the messages it read until it hands them
		// back; a scan started now would find them missing and list a
		// partial ladder as whole. This one starts when that one ended.
		a.scan.cancel()
		a.scan.then = &queuedScan{text: text, filter: f}
		a.sched.filterText = text
		a.busy = "stopping the scan running, then scanning again …"
		return a, nil
	}
	a.scanSeq++
	ctx, cancel := context.WithCancel(context.Background())
	a.scan = &scanRun{id: a.scanSeq, cancel: cancel}
	v := &a.sched
	v.filterText, v.filter, v.phase, v.err = text, f, ui.ScanRunning, ""
	v.progress, v.res, v.sel, v.off = ops.ScanProgress{}, ops.ScanResult{}, 0, 0
	v.plan = ops.ScanPlan{Ready: ladderReady(a.merged(), v.found.Ladder)}
	req := ops.ScanRequest{Ladder: v.found.Ladder, Snap: a.merged(), Ladders: a.ladders(), Filter: f, ReadOnly: a.readOnly, Force: v.force}
	ch := make(chan ops.ScanProgress, 1)
	id := a.scanSeq
	logID := a.log.Add(a.now(), "scan", "ladder="+v.found.Ladder.Name, "filter="+f.String(), "consume no-ack=false, then basic.nack requeue=true per rung")
	a.scan.next = waitReport(ch, func(p ops.ScanProgress) tea.Msg { return scanProgressMsg{id: id, p: p} })
	return a, tea.Batch(logged(logID, runScan(ctx, a.rungFacts(), a.scheduler, req, id, ch)), a.scan.next)
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

// stopScan cancels the scan or action running; its end reports what it
// did.
func (a *App) stopScan() {
	if a.scan != nil {
		a.scan.cancel()
		if a.scan.action {
			a.busy = "stopping: waiting for the confirms of copies in flight …"
		} else {
			a.busy = "cancelling the scan …"
		}
	}
}

// scanning reports whether a scan or an action runs, so that esc and
// ctrl+c stop it rather than leave or quit.
func (a App) scanning() bool { return a.scan != nil }

// updateScan takes a scan's or an action's reports.
func (a App) updateScan(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case scanProgressMsg:
		if a.scan == nil || msg.id != a.scan.id {
			return a, nil
		}
		a.sched.progress = msg.p
		return a, a.scan.next
	case scanDoneMsg:
		if a.scan == nil || msg.id != a.scan.id {
			return a, nil
		}
		keep, then := a.scan.keepResult, a.scan.then
		a.scan, a.busy = nil, ""
		if then != nil {
			return a.startScan(then.text, then.filter)
		}
		result := a.result
		a = a.scanDone(msg)
		if keep {
			a.result = result
		}
		var refused *ops.ScanRefusal
		if errors.As(msg.err, &refused) && refused.Gate.Verdict == ops.PeekNeedsForce && !a.readOnly {
			c := newScanForce(refused, a.styles)
			return a, a.open(c, c.Init())
		}
		return a, nil
	case actionProgressMsg:
		if a.scan == nil || msg.id != a.scan.id {
			return a, nil
		}
		a.busy = actionBusy(msg.p)
		return a, a.scan.next
	case actionPlannedMsg:
		return a.actionPlanned(msg)
	case actionDoneMsg:
		if a.scan == nil || msg.id != a.scan.id {
			return a, nil
		}
		a.scan, a.busy = nil, ""
		a.result = actionResult(msg)
		if a.screen == screenScheduled {
			a, cmd := a.startScan(a.sched.filterText, a.sched.filter)
			a.scan.keepResult = true
			return a, cmd
		}
		return a, nil
	}
	return a, nil
}

// scanDone shows a scan's result, or why it failed, in one line.
func (a App) scanDone(m scanDoneMsg) App {
	v := &a.sched
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
	var refused *ops.ScanRefusal
	switch {
	case errors.As(m.err, &refused) && refused.Gate.Verdict == ops.PeekReadOnly:
		v.phase, v.err = ui.ScanFailed, "read-only: not scanned: "+refused.Gate.Why
		a.result = ui.Result{Kind: ui.ResultWarn, Text: "read-only: scanning " + refused.Rung + " is refused"}
	case errors.As(m.err, &refused):
		v.phase, v.err = ui.ScanFailed, "not scanned: "+refused.Gate.Why
		a.result = ui.Result{Kind: ui.ResultWarn, Text: "not scanned: " + refused.Rung + " needs force"}
	case m.res.Stopped == broker.StopCancelled:
		v.phase = ui.ScanCancelled
		a.result = ui.Result{Kind: ui.ResultWarn, Text: fmt.Sprintf("scan cancelled after %s: showing what it found", topology.Counted(m.res.Seen, "message", "messages"))}
	case m.err != nil:
		v.phase, v.err = ui.ScanFailed, m.err.Error()
		a.result = ui.Result{Kind: ui.ResultError, Text: "scan of " + v.found.Ladder.Name + " failed: " + m.err.Error()}
	default:
		v.phase = ui.ScanDone
		a.result = ui.Result{Kind: ui.ResultOK, Text: scanDoneText(m.res, !v.filter.Empty())}
	}
	v.clamp()
	return a
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

// updateScheduled handles a key or wheel event on the scheduled view.
func (a App) updateScheduled(msg tea.Msg) (tea.Model, tea.Cmd) {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		k := a.keys.sched
		switch {
		case key.Matches(km, k.Rescan):
			return a.startScan(a.sched.filterText, a.sched.filter)
		case key.Matches(km, k.Cancel):
			return a.openAction(ops.ActCancel, true)
		case key.Matches(km, k.CancelAll):
			return a.openAction(ops.ActCancel, false)
		case key.Matches(km, k.Fire):
			return a.openAction(ops.ActFire, true)
		case key.Matches(km, k.FireAll):
			return a.openAction(ops.ActFire, false)
		case key.Matches(km, k.Reschedule), key.Matches(km, k.RescheduleAll):
			return a.askReschedule(key.Matches(km, k.Reschedule))
		case key.Matches(km, k.Refused):
			return a.refuseOrFail(readOnlyErr(actionWords(km.String())))
		}
	}
	var cmd tea.Cmd
	a.sched, cmd = a.sched.Update(msg)
	return a, cmd
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

// applyScheduledFilter reads a filter typed on the scheduled view and
// scans with it; a bad filter is one line and changes nothing.
func (a App) applyScheduledFilter(text string) (App, tea.Cmd) {
	terms, err := ops.ParseFilterLine(text)
	var f ops.Filter
	if err == nil {
		f, err = terms.Filter(a.now())
	}
	if err != nil {
		return a.fail("filter: " + err.Error())
	}
	return a.startScan(strings.TrimSpace(text), f)
}

// pendingAction is an action chosen but not yet planned: which, and on
// the selected message or on every match.
type pendingAction struct {
	act      ops.Action
	selected bool
	delay    time.Duration
	at       time.Time
}

// actionFilter is what an action selects: the scan's filter, narrowed to
// the selected message's id when it acts on one.
func (a App) actionFilter(selected bool) (ops.Filter, string, error) {
	f := a.sched.filter
	if !selected {
		return f, "", nil
	}
	m, ok := a.sched.Selected()
	if !ok {
		return f, "", errors.New("no message selected: scan first, or act on all matched (X/M/N)")
	}
	id := m.MessageID
	if id == "" {
		id = m.TaskID
	}
	if id == "" {
		return f, "", errors.New("the selected message has no message-id to pick it by: narrow the filter (/) and act on all matched (X/M/N)")
	}
	f.MessageID = id
	return f, id, nil
}

// checkAction refuses an action before anything is asked: read-only, no
// connection, a scan running.
func (a App) checkAction(act ops.Action) error {
	switch {
	case a.readOnly:
		return readOnlyErr(actionWords(map[ops.Action]string{ops.ActReschedule: "m", ops.ActFire: "n"}[act]))
	case a.scheduler == nil:
		return errors.New("acting on scheduled messages needs an AMQP connection, and this console has none")
	case a.scan != nil:
		return errors.New("a scan or an action is running: wait for it, or esc to stop it")
	}
	return nil
}

// askReschedule opens the input line for the new due time.
func (a App) askReschedule(selected bool) (App, tea.Cmd) {
	if err := a.checkAction(ops.ActReschedule); err != nil {
		return a.refuseOrFail(err)
	}
	if _, _, err := a.actionFilter(selected); err != nil {
		return a.fail(err.Error())
	}
	a.reschedule = &pendingAction{act: ops.ActReschedule, selected: selected}
	return a, a.prompt.Open(promptReschedule, "", nil)
}

// readOnlyErr is the refusal of an action in read-only mode, short
// enough to stay whole in the header at 80 columns.
func readOnlyErr(what string) error { return fmt.Errorf("read-only: %s is off (--read-only)", what) }

// refuseOrFail words a refusal: read-only as a warning, others as errors.
func (a App) refuseOrFail(err error) (App, tea.Cmd) {
	if a.readOnly {
		a.result = ui.Result{Kind: ui.ResultWarn, Text: err.Error()}
		return a, nil
	}
	return a.fail(err.Error())
}

// rescheduleTyped takes the new due time typed for a pending reschedule.
func (a App) rescheduleTyped(text string) (App, tea.Cmd) {
	p := a.reschedule
	a.reschedule = nil
	if p == nil {
		return a, nil
	}
	d, at, err := ops.ParseNewDue(text, a.now())
	if err != nil {
		return a.fail("reschedule: " + err.Error())
	}
	p.delay, p.at = d, at
	return a.planAction(*p)
}

// openAction starts cancel or fire now on the selected message or every
// match.
func (a App) openAction(act ops.Action, selected bool) (App, tea.Cmd) {
	if err := a.checkAction(act); err != nil {
		return a.refuseOrFail(err)
	}
	return a.planAction(pendingAction{act: act, selected: selected})
}

// actionPlannedMsg is an action checked by ops, ready to confirm.
type actionPlannedMsg struct {
	plan    ops.ActionPlan
	matched int
	err     error
}

// planAction plans the action off the UI goroutine: PlanScan reads
// quorum rungs' facts, then PlanAction checks the request.
func (a App) planAction(p pendingAction) (App, tea.Cmd) {
	f, id, err := a.actionFilter(p.selected)
	if err != nil {
		return a.fail(err.Error())
	}
	matched := a.sched.res.Matched
	if id != "" {
		matched = 0
		for _, m := range a.sched.res.Messages {
			if m.MessageID == id || m.TaskID == id {
				matched++
			}
		}
	}
	req := ops.ScanRequest{Ladder: a.sched.found.Ladder, Snap: a.merged(), Ladders: a.ladders(), Filter: f, Force: a.sched.force}
	facts, now := a.rungFacts(), a.now()
	a.busy = "checking the " + string(p.act)
	return a, func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), scanTimeout)
		defer cancel()
		sp, err := ops.PlanScan(ctx, facts, req)
		if err != nil {
			return actionPlannedMsg{err: err}
		}
		ap, err := ops.PlanAction(ops.ActionRequest{Scan: sp, Action: p.act, All: f.Empty(), Delay: p.delay, At: p.at}, now)
		return actionPlannedMsg{plan: ap, matched: matched, err: err}
	}
}

// actionPlanned opens the confirmation of a planned action.
func (a App) actionPlanned(m actionPlannedMsg) (App, tea.Cmd) {
	a.busy = ""
	if m.err != nil {
		return a.fail(oneLine(m.err.Error()))
	}
	c := newActionConfirm(m.plan, m.matched, a.styles)
	return a, a.open(c, c.Init())
}

// oneLine keeps the first line of an error.
func oneLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// actionConfirm asks before acting on scheduled messages. Acting on every
// message of the ladder (no filter) asks for its name typed.
type actionConfirm struct {
	typedConfirm
	plan    ops.ActionPlan
	matched int
}

func newActionConfirm(p ops.ActionPlan, matched int, st ui.Styles) actionConfirm {
	verb := map[ops.Action]string{ops.ActCancel: "cancel", ops.ActReschedule: "reschedule", ops.ActFire: "fire now"}[p.Action]
	keys := confirmKeys{
		Yes: key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", verb)),
		No:  key.NewBinding(key.WithKeys("n", "N", "esc", "q"), key.WithHelp("n/esc", "keep them")),
	}
	if p.All {
		name := p.Scan.Ladder.Name
		keys = confirmKeys{
			Yes: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", verb)),
			No:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "keep them")),
		}
		return actionConfirm{typedConfirm: newTypedConfirm(keys, st, name, "Type "+name+" to act on every message:", "type "+name+" exactly"), plan: p, matched: matched}
	}
	return actionConfirm{typedConfirm: newTypedConfirm(keys, st, "", "", ""), plan: p, matched: matched}
}

// actionAnswered is the confirmation's outcome.
type actionAnswered struct {
	confirmed bool
	plan      ops.ActionPlan
}

// Update answers the dialog.
func (c actionConfirm) Update(msg tea.Msg) (dialog, tea.Cmd, outcome) {
	cmd, ans := c.answer(msg)
	if ans == unanswered {
		return c, cmd, nil
	}
	return c, nil, actionAnswered{confirmed: ans == answeredYes, plan: c.plan}
}

// WithFrame sizes and styles the dialog.
func (c actionConfirm) WithFrame(f frame) dialog {
	c.frame = f
	return c
}

// View renders the dialog.
func (c actionConfirm) View() string {
	p, st := c.plan, c.st
	title := map[ops.Action]string{ops.ActCancel: "Cancel", ops.ActReschedule: "Reschedule", ops.ActFire: "Fire now"}[p.Action] + " scheduled messages?"
	lines := []string{strings.ToUpper(p.Describe[:1]) + p.Describe[1:] + "."}
	lines = append(lines, st.Muted.Render(fmt.Sprintf("The last scan found %s; the action reads the rungs again and takes exactly what the filter selects then.", topology.Counted(c.matched, "such message", "such messages"))))
	switch p.Action {
	case ops.ActCancel:
		lines = append(lines, st.Muted.Render("Parked, not deleted: replay "+p.Park+" undoes it."))
	case ops.ActReschedule, ops.ActFire:
		lines = append(lines, st.Muted.Render("Each keeps its properties, headers and body, and records where it was rescheduled from."))
	}
	lines = append(lines, st.Muted.Render("Every other message keeps its due time; each copy is confirmed before its source is removed."))
	return c.view(title, lines, 76)
}

// actionProgressMsg is an action's progress.
type actionProgressMsg struct {
	id int
	p  ops.ActionProgress
}

// actionDoneMsg is an action's end.
type actionDoneMsg struct {
	id   int
	plan ops.ActionPlan
	res  ops.ActionResult
	err  error
}

// startAction runs a confirmed action.
func (a App) startAction(p ops.ActionPlan) (App, tea.Cmd) {
	a.scanSeq++
	ctx, cancel := context.WithCancel(context.Background())
	a.scan = &scanRun{id: a.scanSeq, cancel: cancel, action: true}
	id := a.scanSeq
	ch := make(chan ops.ActionProgress, 1)
	a.busy = p.Describe
	logID := a.log.Add(a.now(), string(p.Action), p.Describe, "one confirmed move per rung; the source is acked only after the copy's confirm")
	sched := a.scheduler
	run := func() tea.Msg {
		defer close(ch)
		res, err := p.Run(ctx, sched, forwardLatest(ch))
		return actionDoneMsg{id: id, plan: p, res: res, err: err}
	}
	a.scan.next = waitReport(ch, func(ap ops.ActionProgress) tea.Msg { return actionProgressMsg{id: id, p: ap} })
	return a, tea.Batch(logged(logID, run), a.scan.next)
}

// actionBusy words an action's progress for the header.
func actionBusy(p ops.ActionProgress) string {
	done := p.Result.Acted + p.Move.Moved + p.Move.Parked + p.Move.Dropped
	return fmt.Sprintf("acting on rung %d of %d (%s): %d done · esc stops", p.Index+1, p.Rungs, p.Rung, done)
}

// actionResult words an action's end for the header: one line.
func actionResult(m actionDoneMsg) ui.Result {
	r := m.res
	verb := map[ops.Action]string{ops.ActCancel: "cancelled (parked in " + m.plan.Park + ")", ops.ActReschedule: "rescheduled", ops.ActFire: "fired"}[m.plan.Action]
	text := fmt.Sprintf("%s %s", topology.Counted(r.Acted, "message", "messages"), verb)
	if r.Kept > 0 {
		text += fmt.Sprintf(", %d kept (%s)", r.Kept, strings.Join(ui.ReasonLines(r.Reasons), "; "))
	}
	if r.Unknown > 0 {
		text += fmt.Sprintf(", %d possible duplicates", r.Unknown)
	}
	switch {
	case errors.Is(m.err, broker.ErrReadOnly):
		return ui.Result{Kind: ui.ResultWarn, Text: "refused: the broker client is read-only"}
	case errors.Is(m.err, context.Canceled):
		return ui.Result{Kind: ui.ResultWarn, Text: "stopped: " + text + "; the rest keep their due times"}
	case m.err != nil:
		return ui.Result{Kind: ui.ResultError, Text: oneLine(text + "; then " + m.err.Error())}
	case r.Kept > 0 || r.Unknown > 0:
		return ui.Result{Kind: ui.ResultWarn, Text: text}
	}
	return ui.Result{Kind: ui.ResultOK, Text: text}
}

// scanForce is the refusal to scan a ladder where the peek rules say
// reading a rung can push messages on early (a quorum rung with a
// delivery limit before 4.3): it gives the reason and lets the operator
// insist by typing "force", as the peek does.
type scanForce struct {
	typedConfirm
	refused *ops.ScanRefusal
}

func newScanForce(r *ops.ScanRefusal, st ui.Styles) scanForce {
	keys := confirmKeys{
		Yes: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "scan anyway")),
		No:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
	return scanForce{
		typedConfirm: newTypedConfirm(keys, st, forceWord, "Type "+forceWord+" to scan anyway:", "type "+forceWord+" to scan anyway, or esc"),
		refused:      r,
	}
}

// scanForced is the refusal's outcome.
type scanForced struct{ forced bool }

// Update answers the dialog.
func (c scanForce) Update(msg tea.Msg) (dialog, tea.Cmd, outcome) {
	cmd, ans := c.answer(msg)
	if ans == unanswered {
		return c, cmd, nil
	}
	return c, nil, scanForced{forced: ans == answeredYes}
}

// WithFrame sizes and styles the dialog.
func (c scanForce) WithFrame(f frame) dialog {
	c.frame = f
	return c
}

// View renders the dialog.
func (c scanForce) View() string {
	lines := []string{c.refused.Gate.Why + ".", c.st.Muted.Render("A scan reads every message of every rung, as a peek does; forcing it holds for this ladder's scans and actions until the console closes.")}
	return c.view("Not scanning "+c.refused.Rung, lines, 76)
}
