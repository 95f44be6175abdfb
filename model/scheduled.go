package model

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// The scheduled view lists the messages waiting in the open ladder's
// rungs by when they are due (issue 24). This file is what it shows; the
// screen as a child of the App, with the scan it runs, is in
// scheduled_scan.go, and the actions on the messages in
// scheduled_act.go.

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

// openScheduled shows the open ladder's scheduled messages and scans.
func (a App) openScheduled() (App, tea.Cmd) {
	if a.sched.Running() {
		a.screen = screenScheduled
		return a, nil
	}
	if a.scheduler == nil {
		return a.fail("listing scheduled messages needs an AMQP connection, and this console has none")
	}
	a.sched = a.sched.For(a.ladder.Found(), a.styles, a.keys.sched)
	a.screen = screenScheduled
	a.resize()
	a.rebuild()
	return a.updateSched(scanAgain{})
}

// updateSched hands msg to the scheduled screen and does what it asks.
func (a App) updateSched(msg tea.Msg) (App, tea.Cmd) {
	env := schedEnv{
		sched: a.scheduler, facts: a.limits, snap: a.merged(), ladders: a.ladders(),
		readOnly: a.readOnly, front: a.screen == screenScheduled, now: a.now(),
	}
	s, cmd, o := a.sched.Update(msg, env)
	a.sched = s
	if o.result != nil {
		a.result = *o.result
	}
	if o.log != nil {
		cmd = tea.Batch(logged(a.log.Add(env.now, o.log.op, o.log.sent...), o.log.cmd), cmd)
	}
	if o.open != nil {
		cmd = tea.Batch(cmd, a.open(o.open, o.init))
	}
	if o.askDue {
		cmd = tea.Batch(cmd, a.prompt.Open(promptReschedule, "", nil))
	}
	return a, cmd
}
