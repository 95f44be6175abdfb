package model

import (
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/ui"
)

// The contract between the App and its children, in the spirit of
// soft-serve's common.Component. Every child has the same four parts:
//
//   - Update takes a message and returns the child and a command;
//   - View draws it;
//   - a size and styles, given by the App on every resize and change of
//     background (SetSize and SetStyles for a screen, WithFrame for a
//     dialog).
//
// The App routes messages to the child in front and otherwise reads a
// child only through its exported methods, never its fields. There are
// two kinds of child:
//
//   - screens (ladderList, ladderView, peekView, scheduled) live side by
//     side in the App and keep their state while another is in front; the
//     App sizes and styles them all at once (see App.screens). The
//     scheduled screen runs scans and actions of its own: each step
//     answers with a schedOutcome the App carries out (App.updateSched).
//   - dialogs (help, the command log, publish, purge, the forced-peek
//     refusal, replay, the bridges, the delayed retry) are drawn over
//     the screen, one at a time. The App holds the open one as a dialog; when the operator answers, it tells
//     the App what to do with an outcome.

// sized is what the App sizes and styles: every screen.
type sized interface {
	SetSize(w, h int)
	SetStyles(st ui.Styles)
}

// dialog is a child drawn over the screen. While open it takes every key
// and every message the App does not handle itself. Its methods return
// the dialog rather than change it in place, as Bubble Tea models do, so
// that an App value never shares state with an older one.
type dialog interface {
	// Update handles a message. A non-nil outcome asks the App to act;
	// every outcome but replayStarted and replayStopping closes the
	// dialog.
	Update(msg tea.Msg) (dialog, tea.Cmd, outcome)
	View() string
	// WithFrame gives the dialog the screen's size and the styles.
	WithFrame(f frame) dialog
}

// frame is what the App gives every dialog: the whole screen's size (a
// dialog picks its own, smaller, box) and the styles.
type frame struct {
	st   ui.Styles
	w, h int
}

// outcome is what a dialog asks of the App: closed, publishSubmitted,
// purgeAnswered, forceAnswered, scanForced, actionAnswered, replayStarted,
// replayStopping, replayClosed or peekAsked. App.act does it (the
// scheduled screen's two through App.updateSched).
type outcome any

// closed means the dialog closed with nothing left to do.
type closed struct{}
