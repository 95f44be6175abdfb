package model

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/ui"
)

// helpDialog is the key and command reference. Its own key, esc or q
// closes it.
type helpDialog struct {
	frame
	close  []key.Binding
	groups []ui.HelpGroup
	note   string
}

func newHelpDialog(k keyMap, readOnly bool, st ui.Styles) helpDialog {
	d := helpDialog{close: []key.Binding{k.global.Help, k.global.Back, k.global.Quit}, groups: k.helpGroups(), frame: frame{st: st}}
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

func (d helpDialog) WithFrame(f frame) dialog {
	d.frame = f
	return d
}

// logDialog shows the command log. Outcomes that arrive while it is open
// come in as logUpdated, so that it shows them at once.
type logDialog struct {
	frame
	close   []key.Binding
	entries []ui.LogEntry
	context string
}

// logUpdated carries the command log after a change.
type logUpdated struct{ entries []ui.LogEntry }

func newLogDialog(k keyMap, entries []ui.LogEntry, context string, st ui.Styles) logDialog {
	return logDialog{close: []key.Binding{k.global.Log, k.global.Back, k.global.Quit}, entries: entries, context: context, frame: frame{st: st}}
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

func (d logDialog) WithFrame(f frame) dialog {
	d.frame = f
	return d
}
