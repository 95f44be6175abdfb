package model

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/rungs-dev/rungs/ui"
)

// promptKind is what the input line is for.
type promptKind int

const (
	promptNone       promptKind = iota
	promptCommand               // `:` commands, with history
	promptFilter                // `/` filter, applied as it is typed
	promptTrace                 // `t` trace, traced as it is typed
	promptScheduled             // `/` on the scheduled view, applied when submitted
	promptReschedule            // a reschedule's new delay or time
)

// historySize bounds the command history.
const historySize = 50

// prompt is the input line at the bottom of the screen, k9s and vim style.
type prompt struct {
	kind    promptKind
	input   textinput.Model
	keys    promptKeys
	history []string // oldest first
	// recall indexes history while browsing it with ↑/↓; len(history)
	// means the line being typed, which draft keeps.
	recall int
	draft  string
}

func newPrompt(st ui.Styles) prompt {
	in := textinput.New()
	// ↑/↓ browse history here; completion cycles with ctrl+n/ctrl+p.
	in.KeyMap.NextSuggestion = key.NewBinding(key.WithKeys("ctrl+n"))
	in.KeyMap.PrevSuggestion = key.NewBinding(key.WithKeys("ctrl+p"))
	in.ShowSuggestions = true
	p := prompt{input: in, keys: defaultPromptKeys()}
	p.SetStyles(st)
	return p
}

// SetStyles restyles the input for the terminal's background.
func (p *prompt) SetStyles(st ui.Styles) {
	s := textinput.DefaultStyles(st.IsDark)
	s.Focused.Prompt = st.Prompt
	s.Blurred.Prompt = st.Prompt
	s.Focused.Suggestion = st.Faint
	s.Cursor.Color = st.AccentColor
	p.input.SetStyles(s)
}

// active reports whether the input line has the focus.
func (p prompt) Active() bool { return p.kind != promptNone }

// open focuses the input line for kind, starting from value.
// Kind is what the line is for; promptNone when it is closed.
func (p prompt) Kind() promptKind { return p.kind }

func (p *prompt) Open(kind promptKind, value string, suggestions []string) tea.Cmd {
	p.kind = kind
	p.input.Prompt = map[promptKind]string{promptCommand: ":", promptFilter: "/", promptTrace: "trace› ", promptScheduled: "/", promptReschedule: "reschedule to› "}[kind]
	p.input.Placeholder = map[promptKind]string{
		promptCommand:    "ladder NAME · trace 90s · publish · purge QUEUE · refresh 10s · q",
		promptFilter:     "part of a name",
		promptTrace:      "DELAY [DEST], e.g. 90s or 1h30m orders.work",
		promptScheduled:  "ID, or id= correlation-id= where=H=V body= dest= within=1h due-before= due-after=",
		promptReschedule: "a delay (90s, 2h) or a time (09:00, 2026-01-02T15:04:05Z); enter, esc keeps it",
	}[kind]
	// Without a width the input shows only the placeholder's first
	// letter; the scheduled view's two spell out their language.
	p.input.SetWidth(0)
	if kind == promptScheduled || kind == promptReschedule {
		p.input.SetWidth(lipgloss.Width(p.input.Placeholder) + 1)
	}
	p.input.SetValue(value)
	p.input.CursorEnd()
	p.input.SetSuggestions(suggestions)
	p.recall, p.draft = len(p.history), ""
	return p.input.Focus()
}

// close blurs the input line.
func (p *prompt) Close() {
	p.kind = promptNone
	p.input.Blur()
	p.input.SetValue("")
}

// remember appends a command to the history, skipping repeats.
func (p *prompt) Remember(line string) {
	if line == "" || len(p.history) > 0 && p.history[len(p.history)-1] == line {
		return
	}
	p.history = append(p.history, line)
	if len(p.history) > historySize {
		p.history = p.history[len(p.history)-historySize:]
	}
}

// promptEvent is what a key did to the input line, so that the app can act
// on the text when it is submitted or cancelled.
type promptEvent int

const (
	promptTyping promptEvent = iota
	promptSubmitted
	promptCancelled
)

// Update edits the line. It reports whether the line was submitted or
// cancelled; the caller reads Value before closing.
func (p prompt) Update(msg tea.Msg) (prompt, promptEvent, tea.Cmd) {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(km, p.keys.Submit):
			return p, promptSubmitted, nil
		case key.Matches(km, p.keys.Cancel):
			return p, promptCancelled, nil
		case p.kind == promptCommand && key.Matches(km, p.keys.Prev):
			p.browse(-1)
			return p, promptTyping, nil
		case p.kind == promptCommand && key.Matches(km, p.keys.Next):
			p.browse(1)
			return p, promptTyping, nil
		case km.String() == "backspace" && p.input.Value() == "":
			// Backspace on an empty line leaves it, as in vim.
			return p, promptCancelled, nil
		}
	}
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(msg)
	return p, promptTyping, cmd
}

// browse moves through the history; the line being typed is kept as the
// newest entry.
func (p *prompt) browse(step int) {
	if p.recall == len(p.history) {
		p.draft = p.input.Value()
	}
	p.recall = max(0, min(len(p.history), p.recall+step))
	if p.recall == len(p.history) {
		p.input.SetValue(p.draft)
	} else {
		p.input.SetValue(p.history[p.recall])
	}
	p.input.CursorEnd()
}

// Value is the text on the line.
func (p prompt) Value() string { return strings.TrimSpace(p.input.Value()) }

// View renders the line. The input has no fixed width: a width makes it
// pad to the right edge without counting the completion it shows, which
// would overflow the line; the footer cuts a line too long instead.
func (p prompt) View() string { return p.input.View() }
