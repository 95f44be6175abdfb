package model

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// ladderList is the first screen: every ladder discovery found.
type ladderList struct {
	keys   navKeys
	st     ui.Styles
	vhost  string
	items  []health.LadderReport // every ladder
	shown  []health.LadderReport // after the filter
	totals health.Totals         // the shown ones
	filter string
	sel    int
	offset int
	w, h   int
	// delays are the vhost's delays outside the ladders listed, shown
	// under them; ops takes them from delaySnap against the ladders on
	// every change of either.
	delays    topology.Inventory
	delaySnap *topology.Snapshot
	delayed   map[string]int64
}

func newLadderList(vhost string, st ui.Styles, keys navKeys) ladderList {
	return ladderList{keys: keys, st: st, vhost: vhost}
}

// SetSize gives the list its body size.
func (l *ladderList) SetSize(w, h int) {
	l.w, l.h = w, h
	l.clamp()
}

// SetDelays gives the list the snapshot its delay inventory is taken from.
func (l *ladderList) SetDelays(snap topology.Snapshot, delayed map[string]int64) {
	l.delaySnap, l.delayed = &snap, delayed
	l.takeDelays()
	l.clamp()
}

func (l *ladderList) takeDelays() {
	if l.delaySnap == nil {
		return
	}
	found := make([]topology.Found, 0, len(l.items))
	for _, it := range l.items {
		found = append(found, it.Found)
	}
	l.delays = ops.DelayInventory(l.vhost, *l.delaySnap, l.delayed, found)
}

// rowsH is the list's height without the delays under it.
func (l ladderList) rowsH() int { return l.h - ui.DelayStripHeight(l.delays, l.h) }

// SetStyles restyles the list.
func (l *ladderList) SetStyles(st ui.Styles) { l.st = st }

// Filter is the filter typed, "" for none.
func (l ladderList) Filter() string { return l.filter }

// SetItems replaces the ladders, keeping the selection on the same ladder.
func (l *ladderList) SetItems(items []health.LadderReport) {
	cur, ok := l.Selected()
	l.items = items
	l.takeDelays()
	l.apply()
	if ok {
		l.SelectLadder(cur.Ladder)
	}
}

// SetFilter filters the list by ladder name and layout.
func (l *ladderList) SetFilter(f string) {
	cur, ok := l.Selected()
	l.filter = f
	l.apply()
	if ok {
		l.SelectLadder(cur.Ladder)
	}
}

func (l *ladderList) apply() {
	l.shown = health.FilterLadders(l.items, l.filter)
	l.totals = health.Sum(l.shown)
	l.clamp()
}

func (l *ladderList) SelectLadder(ld topology.Ladder) {
	for i, it := range l.shown {
		if ops.SameLadder(it.Found.Ladder, ld) {
			l.sel = i
			break
		}
	}
	l.clamp()
}

// Selected returns the ladder under the cursor.
func (l ladderList) Selected() (topology.Found, bool) {
	if l.sel < 0 || l.sel >= len(l.shown) {
		return topology.Found{}, false
	}
	return l.shown[l.sel].Found, true
}

func (l *ladderList) clamp() {
	l.sel = max(0, min(l.sel, len(l.shown)-1))
	l.offset = ui.Scroll(l.sel, l.offset, ui.ListHeight(l.rowsH()), len(l.shown))
}

// Update moves the selection.
func (l ladderList) Update(msg tea.Msg) (ladderList, tea.Cmd) {
	page := max(1, ui.ListHeight(l.rowsH())-1)
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, l.keys.Up):
			l.sel--
		case key.Matches(msg, l.keys.Down):
			l.sel++
		case key.Matches(msg, l.keys.Top):
			l.sel = 0
		case key.Matches(msg, l.keys.Bottom):
			l.sel = len(l.shown) - 1
		case key.Matches(msg, l.keys.PageUp):
			l.sel -= page
		case key.Matches(msg, l.keys.PageDown):
			l.sel += page
		}
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			l.sel--
		case tea.MouseWheelDown:
			l.sel++
		}
	}
	l.clamp()
	return l, nil
}

// View renders the list.
func (l ladderList) View() string {
	list := ui.LadderList(ui.ListState{
		Items: l.shown, Totals: l.totals, Total: len(l.items), Selected: l.sel, Offset: l.offset,
		Filter: l.filter, Vhost: l.vhost,
	}, l.st, l.w, l.rowsH())
	if strip := ui.DelayStripHeight(l.delays, l.h); strip > 0 {
		return list + "\n" + ui.DelayStrip(l.delays, l.st, l.w, strip)
	}
	return list
}
