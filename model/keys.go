package model

import (
	"charm.land/bubbles/v2/key"

	"github.com/rungs-dev/rungs/ui"
)

// globalKeys work on every screen when no overlay or input has the focus.
type globalKeys struct {
	Help, Command, Filter, Refresh, Back, Quit, ForceQuit, Log key.Binding
	// Bridges and Retry open the views of the vhost's bridges and of
	// RabbitMQ 4.3's delayed retry over the screen.
	Bridges, Retry key.Binding
}

func defaultGlobalKeys() globalKeys {
	return globalKeys{
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Command:   key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "command")),
		Filter:    key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Refresh:   key.NewBinding(key.WithKeys("r", "ctrl+r"), key.WithHelp("r", "refresh")),
		Back:      key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
		Quit:      key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),
		ForceQuit: key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit now")),
		Log:       key.NewBinding(key.WithKeys("L"), key.WithHelp("L", "command log (:log)")),
		Bridges:   key.NewBinding(key.WithKeys("B"), key.WithHelp("B", "bridges")),
		Retry:     key.NewBinding(key.WithKeys("D"), key.WithHelp("D", "delayed retry")),
	}
}

// navKeys move a selection; the list and the ladder view share them.
type navKeys struct {
	Up, Down, Top, Bottom, PageUp, PageDown, Open key.Binding
}

func defaultNavKeys() navKeys {
	return navKeys{
		Up:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down: key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		// Pairs share one help line: the second of each has no help text.
		Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/G", "top/bottom")),
		Bottom:   key.NewBinding(key.WithKeys("end", "G")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b", "ctrl+u"), key.WithHelp("pgup/dn", "page")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f", "ctrl+d")),
		Open:     key.NewBinding(key.WithKeys("enter", "l", "right"), key.WithHelp("enter", "open")),
	}
}

// actionKeys act on a ladder and its queues. Those that change the broker
// are switched off in read-only mode, and Refused takes their keys so that
// pressing one says why nothing happens.
type actionKeys struct {
	Trace, Drift, Fold, Cost, Forecast, Publish, Purge, PurgeAll, Peek, Replay, Refused key.Binding
	Scheduled                                                                           key.Binding
}

func defaultActionKeys(readOnly bool) actionKeys {
	k := actionKeys{
		Trace:    key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "trace")),
		Drift:    key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "drift")),
		Fold:     key.NewBinding(key.WithKeys("z"), key.WithHelp("z", "fold idle")),
		Cost:     key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "radix cost")),
		Forecast: key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "forecast")),
		Publish:  key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "publish")),
		Purge:    key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "purge")),
		PurgeAll: key.NewBinding(key.WithKeys("X"), key.WithHelp("X", "purge all")),
		Peek:     key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "peek")),
		Replay:   key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "replay")),
		// Scheduled lists the messages in flight; reading is allowed
		// read-only, as peeking is.
		Scheduled: key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "scheduled")),
		Refused:   key.NewBinding(key.WithKeys("p", "x", "X", "R"), key.WithHelp("p x X R", "off (read-only)")),
	}
	k.Publish.SetEnabled(!readOnly)
	k.Purge.SetEnabled(!readOnly)
	k.PurgeAll.SetEnabled(!readOnly)
	k.Replay.SetEnabled(!readOnly)
	k.Refused.SetEnabled(readOnly)
	return k
}

// peekKeys drive the peek view: the message list, the detail pane and what
// can be done with the selected message.
type peekKeys struct {
	Up, Down, Top, Bottom, ScrollUp, ScrollDown, Trace, Again, Replay key.Binding
}

func defaultPeekKeys(readOnly bool) peekKeys {
	k := peekKeys{
		Up:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/↓", "message")),
		Down: key.NewBinding(key.WithKeys("down", "j")),
		// Pairs share one help line: the second of each has no help text.
		Top:        key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g/G", "first/last")),
		Bottom:     key.NewBinding(key.WithKeys("end", "G")),
		ScrollUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b", "ctrl+u", "K"), key.WithHelp("pgup/dn", "scroll")),
		ScrollDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f", "ctrl+d", "J", "space")),
		Trace:      key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "trace message")),
		Again:      key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "peek again")),
		Replay:     key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "replay")),
	}
	k.Replay.SetEnabled(!readOnly)
	return k
}

// replayKeys drive the replay dialog through its steps: the form, the
// confirmation, the progress and the outcome.
type replayKeys struct {
	Next, Prev, Toggle, Review, Cancel key.Binding
	Start, Back                        key.Binding
	Stop                               key.Binding
	Close                              key.Binding
}

func defaultReplayKeys() replayKeys {
	return replayKeys{
		Next:   key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab", "next")),
		Prev:   key.NewBinding(key.WithKeys("shift+tab", "up"), key.WithHelp("shift+tab", "previous")),
		Toggle: key.NewBinding(key.WithKeys("space", "left", "right"), key.WithHelp("space", "where to")),
		Review: key.NewBinding(key.WithKeys("enter", "ctrl+s"), key.WithHelp("enter", "review")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		Start:  key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "replay")),
		Back:   key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", "back to the form")),
		Stop:   key.NewBinding(key.WithKeys("esc", "ctrl+c"), key.WithHelp("esc", "stop")),
		Close:  key.NewBinding(key.WithKeys("enter", "esc", "q"), key.WithHelp("enter", "close")),
	}
}

// promptKeys drive the input line (command, filter, trace).
type promptKeys struct {
	Submit, Cancel, Prev, Next, Complete key.Binding
}

func defaultPromptKeys() promptKeys {
	return promptKeys{
		Submit:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run")),
		Cancel:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		Prev:     key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "older")),
		Next:     key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "newer")),
		Complete: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "complete")),
	}
}

// formKeys drive the publish form.
type formKeys struct {
	Next, Prev, Toggle, Submit, Cancel key.Binding
}

func defaultFormKeys() formKeys {
	return formKeys{
		Next:   key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab", "next")),
		Prev:   key.NewBinding(key.WithKeys("shift+tab", "up"), key.WithHelp("shift+tab", "previous")),
		Toggle: key.NewBinding(key.WithKeys("space"), key.WithHelp("space", "toggle")),
		Submit: key.NewBinding(key.WithKeys("enter", "ctrl+s"), key.WithHelp("enter", "publish")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}

// confirmKeys answer a confirmation.
type confirmKeys struct {
	Yes, No key.Binding
}

func defaultConfirmKeys(typed bool) confirmKeys {
	if typed {
		// A typed confirmation must not fire on "y" or "n": they are
		// letters of the name being typed.
		return confirmKeys{
			Yes: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "purge")),
			No:  key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		}
	}
	return confirmKeys{
		Yes: key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "purge")),
		No:  key.NewBinding(key.WithKeys("n", "N", "esc", "q"), key.WithHelp("n/esc", "cancel")),
	}
}

// keyMap is every binding of the console. Its methods build the footer and
// the help overlay for the screen in front, so that help always tells the
// truth about what a key does right now.
type keyMap struct {
	global  globalKeys
	nav     navKeys
	actions actionKeys
	prompt  promptKeys
	form    formKeys
	peek    peekKeys
	sched   scheduledKeys
}

func defaultKeyMap(readOnly bool) keyMap {
	return keyMap{
		global:  defaultGlobalKeys(),
		nav:     defaultNavKeys(),
		actions: defaultActionKeys(readOnly),
		prompt:  defaultPromptKeys(),
		form:    defaultFormKeys(),
		peek:    defaultPeekKeys(readOnly),
		sched:   defaultScheduledKeys(readOnly),
	}
}

// listHelp is the footer of the ladder list.
func (k keyMap) listHelp() []key.Binding {
	return []key.Binding{k.nav.Open, k.actions.Publish, k.actions.Refused, k.global.Filter, k.global.Command, k.global.Refresh, k.global.Quit, k.global.Help}
}

// ladderHelp is the footer of the ladder view.
func (k keyMap) ladderHelp() []key.Binding {
	return []key.Binding{k.global.Back, k.actions.Trace, k.actions.Peek, k.actions.Scheduled, k.actions.Replay, k.actions.Publish, k.actions.Purge, k.actions.PurgeAll, k.actions.Refused, k.actions.Drift, k.global.Filter, k.global.Command, k.global.Quit, k.global.Help}
}

// peekHelp is the footer of the peek view.
func (k keyMap) peekHelp() []key.Binding {
	return []key.Binding{k.global.Back, k.peek.Up, k.peek.ScrollUp, k.peek.Trace, k.peek.Replay, k.peek.Again, k.global.Command, k.global.Quit, k.global.Help}
}

// helpGroups is the help overlay's content. Disabled bindings are kept so
// the overlay can show them struck through.
func (k keyMap) helpGroups() []ui.HelpGroup {
	// Pairs share a line, as g/G does, so that the overlay fits 80×24.
	purge := key.NewBinding(key.WithKeys("x", "X"), key.WithHelp("x/X", "purge one/all"))
	purge.SetEnabled(k.actions.Purge.Enabled())
	quit := key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q/^c", "quit/now"))
	panes := key.NewBinding(key.WithKeys("c", "f"), key.WithHelp("c/f", "cost/forecast"))
	// The scheduled messages (what is due when), named short so that the
	// overlay keeps its four columns at 80×24.
	sched := key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "due"))
	// The vhost's bridges and 4.3's delayed retry, short for the same
	// reason.
	side := key.NewBinding(key.WithKeys("B", "D"), key.WithHelp("B/D", "bridge/retry"))
	log := key.NewBinding(key.WithKeys("L"), key.WithHelp("L", "command log"))
	return []ui.HelpGroup{
		{Title: "move", Keys: []key.Binding{k.nav.Up, k.nav.Down, k.nav.Top, k.nav.PageUp, k.nav.Open, k.global.Back}},
		{Title: "ladder", Keys: []key.Binding{k.actions.Trace, k.actions.Drift, k.actions.Fold, panes, k.actions.Publish, purge}},
		{Title: "queue", Keys: []key.Binding{k.actions.Peek, k.actions.Replay, sched, side}},
		{Title: "console", Keys: []key.Binding{k.global.Filter, k.global.Command, k.global.Refresh, log, k.global.Help, quit}},
	}
}

// commandHelp documents the `:` commands.
func commandHelp() []ui.HelpCommand {
	return []ui.HelpCommand{
		{Usage: ":ladder NAME", Desc: "open a ladder (:l, tab); :ladders lists"},
		{Usage: ":trace DELAY [DEST]", Desc: "show a delay's key and hops, e.g. :trace 90s orders.work"},
		{Usage: ":publish [DELAY [DEST [COUNT]]]", Desc: "open the publish form, pre-filled"},
		{Usage: ":purge QUEUE|LADDER", Desc: "purge a queue, or every queue of a ladder"},
		{Usage: ":refresh [EVERY]", Desc: "refresh now, or set the interval (10s)"},
		{Usage: ":peek|:replay [QUEUE]", Desc: "peek at its head (:peek Q 50), or replay it"},
		{Usage: ":ctx [NAME]", Desc: "list the contexts, or switch broker"},
		{Usage: ":q", Desc: "quit (↑/↓ recall earlier commands)"},
	}
}
