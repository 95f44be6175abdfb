package model

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/ui"
)

// typedConfirm is the answering part of a confirmation dialog: yes, no and,
// for what cannot be undone, a word to type before yes counts (a ladder's
// name before purging it, "force" before a peek that counts as a delivery).
// A "y" is too easy to give by reflex when thousands of delayed jobs are at
// stake. The dialogs that embed it say what is at stake.
type typedConfirm struct {
	keys confirmKeys
	frame
	// typed is the word to type; "" for a plain yes/no. prompt asks for it
	// and wrong says what to do when yes comes without it.
	typed, prompt, wrong string
	input                textinput.Model
	err                  string
}

// answer is how the operator answered a confirmation, if at all.
type answer int

const (
	unanswered answer = iota
	answeredNo
	answeredYes
)

func newTypedConfirm(keys confirmKeys, st ui.Styles, typed, prompt, wrong string) typedConfirm {
	c := typedConfirm{keys: keys, frame: frame{st: st}, typed: typed, prompt: prompt, wrong: wrong}
	if typed != "" {
		c.input = textinput.New()
		c.input.Prompt = ""
		c.input.Placeholder = typed
		c.input.SetStyles(textinput.DefaultStyles(st.IsDark))
	}
	return c
}

// Init focuses the input of a typed confirmation.
func (c *typedConfirm) Init() tea.Cmd {
	if c.typed == "" {
		return nil
	}
	return c.input.Focus()
}

// answer takes a message: yes (with the typed word, if one is asked
// for), no, or typing.
func (c *typedConfirm) answer(msg tea.Msg) (tea.Cmd, answer) {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(km, c.keys.No):
			return nil, answeredNo
		case key.Matches(km, c.keys.Yes):
			if c.typed != "" && strings.TrimSpace(c.input.Value()) != c.typed {
				c.err = c.wrong
				return nil, unanswered
			}
			return nil, answeredYes
		}
	}
	if c.typed == "" {
		return nil, unanswered
	}
	return typeInto(&c.input, msg, &c.err), unanswered
}

// typeInto hands a message to an input of a dialog. Typing clears the
// dialog's error; a cursor blink must not.
func typeInto(in *textinput.Model, msg tea.Msg, err *string) tea.Cmd {
	var cmd tea.Cmd
	*in, cmd = in.Update(msg)
	if editing(msg) {
		*err = ""
	}
	return cmd
}

// editing reports whether a message changes what an input holds.
func editing(msg tea.Msg) bool {
	switch msg.(type) {
	case tea.KeyPressMsg, tea.PasteMsg:
		return true
	}
	return false
}

// view renders the dialog at most maxW cells wide.
func (c typedConfirm) view(title string, lines []string, maxW int) string {
	s := ui.ConfirmState{Title: title, Lines: lines, Err: c.err, Keys: []key.Binding{c.keys.Yes, c.keys.No}}
	if c.typed != "" {
		c.input.SetWidth(max(8, len(c.typed)+2))
		s.Prompt = c.prompt
		s.Input = c.input.View()
	}
	return ui.Confirm(s, c.st, min(c.w, maxW))
}
