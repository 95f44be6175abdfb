package model

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/ui"
)

// helpDialog is the key and command reference. Its own key, esc or q
// closes it.
type helpDialog struct {
	close  []key.Binding
	groups []ui.HelpGroup
	note   string
	st     ui.Styles
	w, h   int
}

func newHelpDialog(k keyMap, readOnly bool, st ui.Styles) helpDialog {
	d := helpDialog{close: []key.Binding{k.global.Help, k.global.Back, k.global.Quit}, groups: k.helpGroups(), st: st}
	if readOnly {
		d.note = "read-only: publish, purge and replay are off"
	}
	return d
}

func (d helpDialog) Update(msg tea.Msg) (dialog, tea.Cmd, outcome) {
	if km, ok := msg.(tea.KeyPressMsg); ok && key.Matches(km, d.close...) {
		return d, nil, closed{}
	}
	return d, nil, nil
}

func (d helpDialog) View() string {
	return ui.HelpOverlay(d.groups, commandHelp(), d.note, d.st, min(d.w, 100), d.h)
}

func (d helpDialog) WithSize(w, h int) dialog {
	d.w, d.h = w, h
	return d
}

func (d helpDialog) WithStyles(st ui.Styles) dialog {
	d.st = st
	return d
}

// logDialog shows the command log. Outcomes that arrive while it is open
// come in as logUpdated, so that it shows them at once.
type logDialog struct {
	close   []key.Binding
	entries []ui.LogEntry
	context string
	st      ui.Styles
	w, h    int
}

// logUpdated carries the command log after a change.
type logUpdated struct{ entries []ui.LogEntry }

func newLogDialog(k keyMap, entries []ui.LogEntry, context string, st ui.Styles) logDialog {
	return logDialog{close: []key.Binding{k.global.Log, k.global.Back, k.global.Quit}, entries: entries, context: context, st: st}
}

func (d logDialog) Update(msg tea.Msg) (dialog, tea.Cmd, outcome) {
	switch msg := msg.(type) {
	case logUpdated:
		d.entries = msg.entries
	case tea.KeyPressMsg:
		if key.Matches(msg, d.close...) {
			return d, nil, closed{}
		}
	}
	return d, nil, nil
}

func (d logDialog) View() string {
	return ui.LogOverlay(d.entries, d.context, d.st, min(d.w, 100), d.h)
}

func (d logDialog) WithSize(w, h int) dialog {
	d.w, d.h = w, h
	return d
}

func (d logDialog) WithStyles(st ui.Styles) dialog {
	d.st = st
	return d
}
