package model

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// ladderView is one ladder: its rungs and the queues around them, with a
// trace and a drift pane.
type ladderView struct {
	keys     navKeys
	drift    key.Binding
	fold     key.Binding
	cost     key.Binding
	forecast key.Binding
	st       ui.Styles
	found    topology.Found
	rows     []health.Row // all rows, untraced and unfiltered
	totals   health.Totals
	fc       topology.Forecast
	drain    health.Drain
	place    health.Placement
	gone     bool
	filter   string
	trace    *ui.TraceState
	traced   *ui.MessageTrace // set while the trace is a peeked message's
	// bindings are the vhost's, to check a trace's route as rungs trace
	// does; nil until a snapshot is in.
	bindings  *topology.Graph
	showDrift bool
	showCost  bool // the radix cost pane instead of the table
	// costs are what the cost pane shows, worked out when the ladder
	// changes rather than on every frame.
	costs []topology.RadixCost
	// showForecast: the forecast of arrivals instead of the table.
	showForecast bool
	// unfold shows every rung of a radix > 2 ladder; by default its idle
	// rungs are folded away (health.FoldIdleRungs). keep is the queue under
	// the cursor, which folding never hides.
	unfold bool
	keep   string
	// moved is set once the operator has put the cursor somewhere; until
	// then it stays on the first row, so that rungs whose statistics
	// arrive after the ladder opened do not leave it on the done queue.
	moved    bool
	sel      int // index into the shown rows
	offset   int
	driftOff int
	w, h     int
}

func newLadderView(f topology.Found, st ui.Styles, keys navKeys, drift, fold, cost, forecast key.Binding) ladderView {
	return ladderView{keys: keys, drift: drift, fold: fold, cost: cost, forecast: forecast, st: st, found: f, costs: f.Ladder.RadixCosts()}
}

// SetSize gives the view its body size.
func (v *ladderView) SetSize(w, h int) {
	v.w, v.h = w, h
	v.clamp()
}

// SetStyles restyles the view.
func (v *ladderView) SetStyles(st ui.Styles) { v.st = st }

// Found is the ladder shown.
func (v ladderView) Found() topology.Found { return v.found }

// Rows are the ladder's rows, all of them: untraced, unfolded, unfiltered.
func (v ladderView) Rows() []health.Row { return v.rows }

// Filter is the filter typed, "" for none.
func (v ladderView) Filter() string { return v.filter }

// HasTrace reports whether the trace pane is open.
func (v ladderView) HasTrace() bool { return v.trace != nil }

// TracesMessage reports whether the trace is a peeked message's.
func (v ladderView) TracesMessage() bool { return v.traced != nil }

// Panel names the pane shown instead of the table ("drift", "cost",
// "forecast"), "" for none.
func (v ladderView) Panel() string {
	switch {
	case v.showDrift:
		return "drift"
	case v.showCost:
		return "cost"
	case v.showForecast:
		return "forecast"
	}
	return ""
}

// TogglePanel shows the named pane ("drift", "cost" or "forecast") in the
// table's place, or hides it if it is shown.
func (v *ladderView) TogglePanel(name string) {
	show := v.Panel() != name
	v.showDrift, v.showCost, v.showForecast = show && name == "drift", show && name == "cost", show && name == "forecast"
	v.driftOff = 0
	v.clamp()
}

// ClosePanel hides the drift, cost or forecast pane; it reports whether
// one was shown.
func (v *ladderView) ClosePanel() bool {
	if v.Panel() == "" {
		return false
	}
	v.showDrift, v.showCost, v.showForecast = false, false, false
	v.clamp()
	return true
}

// KeepRows marks the ladder gone from the broker, keeping what was last
// known on screen rather than yanking it away.
func (v *ladderView) KeepRows() {
	v.SetRows(health.LadderReport{Found: v.found, Rows: v.rows, Totals: v.totals, Forecast: v.fc}, true)
}

// TraceMessage traces a peeked message taken from queue: its x-death
// hops and where it is now, with the cursor on that queue. It replaces
// the trace set just before (SetTrace), which showed where it goes next.
func (v *ladderView) TraceMessage(mt *ui.MessageTrace, queue string) {
	v.traced = mt
	v.selectQueue(queue)
	v.moved = true
	v.clamp()
}

// SetRows replaces the ladder, its rows, totals and forecast after a
// refresh, keeping the cursor on the same queue.
func (v *ladderView) SetRows(lr health.LadderReport, gone bool) {
	cur, ok := v.Selected()
	if !sameShape(v.found.Ladder, lr.Found.Ladder) {
		v.costs = lr.Found.Ladder.RadixCosts()
	}
	v.found, v.rows, v.gone = lr.Found, lr.Rows, gone
	v.totals, v.fc, v.drain, v.place = lr.Totals, lr.Forecast, lr.Drain, lr.Placement
	if v.trace != nil {
		mt := v.traced
		v.SetTrace(v.trace.Input)
		v.traced = mt
	}
	switch {
	case ok && v.moved:
		v.keep = cur.Queue
		v.selectQueue(cur.Queue)
	default:
		v.sel, v.keep = 0, ""
	}
	v.clamp()
}

// SetFilter filters rows by queue name.
func (v *ladderView) SetFilter(f string) {
	cur, ok := v.Selected()
	v.filter = f
	if ok {
		v.selectQueue(cur.Queue)
	}
	v.clamp()
}

// SetBindings gives the view the vhost's bindings, to check traces over.
func (v *ladderView) SetBindings(g *topology.Graph) { v.bindings = g }

// SetTrace traces the delay and optional destination typed in input and
// checks the route over the broker's bindings, as rungs trace does. An
// empty input shows the trace pane with a hint; nothing clears it but
// ClearTrace.
func (v *ladderView) SetTrace(input string) {
	ts := &ui.TraceState{Input: input}
	if strings.TrimSpace(input) != "" {
		traced, err := v.traceInput(input)
		if err != nil {
			ts.Err = err
		} else {
			ts.Trace, ts.Checked, ts.Broken = &traced.Trace, traced.Check.Checked, traced.Check.Err
		}
	}
	v.trace, v.traced = ts, nil
	v.clamp()
}

// traceInput traces "DELAY [DEST]" and checks its route.
func (v *ladderView) traceInput(input string) (ops.Traced, error) {
	req, err := ops.ParseTraceInput(v.found.Ladder, input)
	if err != nil {
		return ops.Traced{}, err
	}
	return ops.Trace(req, v.bindings, nil)
}

// ClearTrace removes the trace.
func (v *ladderView) ClearTrace() {
	v.trace, v.traced = nil, nil
	v.clamp()
}

// Trace returns the pinned trace, if a valid one is shown.
func (v ladderView) Trace() (*topology.Trace, bool) {
	if v.trace == nil || v.trace.Trace == nil {
		return nil, false
	}
	return v.trace.Trace, true
}

func (v *ladderView) selectQueue(name string) {
	for i, r := range v.shown() {
		if r.Queue == name {
			v.sel = i
			return
		}
	}
}

// shown are the rows on screen: traced, folded, then filtered.
func (v ladderView) shown() []health.Row {
	rows, _ := v.visible()
	return rows
}

// visible is shown plus the number of rungs folded away. A filter unfolds:
// whoever types a rung's name wants to see it, idle or not.
func (v ladderView) visible() ([]health.Row, int) {
	rows, folded := v.traceRows(), 0
	if v.Folds() {
		rows, folded = health.FoldIdleRungs(rows, v.keep)
	}
	return health.FilterRows(rows, v.filter), folded
}

// Folds reports whether idle rungs are folded away: on ladders of radix
// above 2, unless unfolded or filtered.
func (v ladderView) Folds() bool {
	return !v.unfold && v.filter == "" && v.found.Ladder.Radix > 2
}

// traceRows are the rows with the trace's hops marked, and the queues a
// traced message has left.
func (v ladderView) traceRows() []health.Row {
	var tr *topology.Trace
	if v.trace != nil {
		tr = v.trace.Trace
	}
	var left []topology.DeathHop
	if v.traced != nil {
		left = v.traced.Hops
	}
	return health.MarkVisited(health.ApplyTrace(v.rows, tr), left)
}

// Selected returns the row under the cursor.
func (v ladderView) Selected() (health.Row, bool) {
	rows := v.shown()
	if v.sel < 0 || v.sel >= len(rows) {
		return health.Row{}, false
	}
	return rows[v.sel], true
}

func (v ladderView) state() ui.LadderState {
	trace := v.trace
	if trace != nil && v.traced != nil {
		ts := *trace
		ts.Message = v.traced
		trace = &ts
	}
	rows, folded := v.visible()
	return ui.LadderState{
		Found: v.found, Rows: rows, Folded: folded, Totals: v.totals, Forecast: v.fc, Drain: v.drain, Placement: v.place,
		Selected: v.sel, Offset: v.offset, Filter: v.filter,
		Trace: trace, ShowDrift: v.showDrift, ShowCost: v.showCost && !v.showDrift, Costs: v.costs, Gone: v.gone,
		ShowForecast: v.showForecast && !v.showDrift && !v.showCost,
		// Of every row: the remedy is the ladder's, and a filter that
		// hides the held rung does not cure it.
		Remedies: health.LostRemedies(v.rows),
	}
}

func (v *ladderView) clamp() {
	rows := v.shown()
	v.sel = max(0, min(v.sel, len(rows)-1))
	if v.sel < len(rows) && rows[v.sel].Queue != v.keep {
		// The cursor moved to another queue: keep that one instead, and
		// find it again, since the idle rung kept before may fold away.
		v.keep = rows[v.sel].Queue
		v.selectQueue(v.keep)
		rows = v.shown()
	}
	if v.showDrift {
		v.driftOff = max(0, min(v.driftOff, v.maxDriftOffset()))
		v.offset = v.driftOff
		return
	}
	line, n := ui.SelectedLine(rows, v.sel)
	v.offset = ui.Scroll(line, v.offset, v.state().TableHeight(v.w, v.h), n)
}

// maxDriftOffset is the last useful scroll position of the drift pane.
func (v ladderView) maxDriftOffset() int {
	return max(0, ui.DriftLines(v.found, v.w)-v.state().TableHeight(v.w, v.h))
}

// Update moves the selection (or scrolls the drift pane) and toggles drift.
func (v ladderView) Update(msg tea.Msg) (ladderView, tea.Cmd) {
	step := 0
	page := max(1, v.state().TableHeight(v.w, v.h)-1)
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, v.drift):
			v.TogglePanel("drift")
		case key.Matches(msg, v.cost):
			v.TogglePanel("cost")
		case key.Matches(msg, v.forecast):
			v.TogglePanel("forecast")
		case key.Matches(msg, v.fold) && v.found.Ladder.Radix > 2:
			v.unfold = !v.unfold
			v.selectQueue(v.keep)
		case key.Matches(msg, v.keys.Up):
			step = -1
		case key.Matches(msg, v.keys.Down):
			step = 1
		case key.Matches(msg, v.keys.PageUp):
			step = -page
		case key.Matches(msg, v.keys.PageDown):
			step = page
		case key.Matches(msg, v.keys.Top):
			step = -1 << 20
		case key.Matches(msg, v.keys.Bottom):
			step = 1 << 20
		}
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			step = -1
		case tea.MouseWheelDown:
			step = 1
		}
	}
	if v.showDrift {
		v.driftOff += step
	} else {
		v.sel += step
		v.moved = v.moved || step != 0
	}
	v.clamp()
	return v, nil
}

// View renders the ladder view.
func (v ladderView) View() string {
	return ui.LadderView(v.state(), v.st, v.w, v.h)
}

// sameShape reports whether two ladders have the same range in the same
// radix and layout: what their radix costs follow.
func sameShape(a, b topology.Ladder) bool {
	return a.Layout == b.Layout && a.Unit == b.Unit && a.Radix == b.Radix && a.Levels == b.Levels
}
