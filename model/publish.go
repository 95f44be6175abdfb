package model

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// publishTimeout bounds a publish, confirms included.
const publishTimeout = 30 * time.Second

// Form fields, in tab order.
const (
	fieldDelay = iota
	fieldDest
	fieldBody
	fieldHeaders
	fieldCount
	fieldPersistent
	numFields
)

// publishForm publishes test messages into a ladder.
type publishForm struct {
	keys formKeys
	frame
	ladder     topology.Ladder
	inputs     [fieldPersistent]textinput.Model
	persistent bool
	// graph is the broker's bindings a trace is checked against, as rungs
	// publish checks it (TTLs included), so that the form refuses a
	// message that would not reach its destination instead of publishing
	// it into the unroutable queue; nil checks nothing.
	graph *topology.Graph
	focus int
	err   string
}

// publishSubmitted is the publish form's outcome when the operator sends
// a valid form: request builds the messages, stamped with the App's clock.
type publishSubmitted struct {
	ladder  topology.Ladder
	request func(now time.Time) (publishRequest, error)
}

// publishRequest is a validated form.
type publishRequest struct {
	trace   topology.Trace
	msgs    []broker.Message
	count   int
	persist bool
}

func newPublishForm(l topology.Ladder, st ui.Styles, delay, dest string, count int, g *topology.Graph) publishForm {
	f := publishForm{keys: defaultFormKeys(), ladder: l, persistent: true, graph: g}
	placeholders := [fieldPersistent]string{
		fieldDelay:   "90s, 1500ms, 1h30m",
		fieldDest:    destPlaceholder(l),
		fieldBody:    `{"hello":"rungs"}`,
		fieldHeaders: "key=value, key=value",
		fieldCount:   "1",
	}
	newFormInputs(f.inputs[:], placeholders[:], 4096)
	f.inputs[fieldDelay].SetValue(delay)
	f.inputs[fieldDest].SetValue(dest)
	if count > 0 {
		f.inputs[fieldCount].SetValue(strconv.Itoa(count))
	}
	f.setStyles(st)
	return f
}

// destPlaceholder says what an empty destination means for the layout.
func destPlaceholder(l topology.Ladder) string {
	if _, err := l.Trace(0, ""); err != nil {
		return "required: the destination queue"
	}
	if _, err := l.Trace(0, "any.queue"); errors.Is(err, topology.ErrNoDest) {
		return "none: every message ends in " + defaultTarget(l)
	}
	return "empty: " + defaultTarget(l)
}

func defaultTarget(l topology.Ladder) string {
	tr, err := l.Trace(0, "")
	if err != nil {
		return "?"
	}
	return tr.Target
}

// newFormInputs fills ins with the empty fields of a console form
// (publish, replay), each with its placeholder and a length limit.
func newFormInputs(ins []textinput.Model, placeholders []string, limit int) {
	for i := range ins {
		in := textinput.New()
		in.Prompt = ""
		in.Placeholder = placeholders[i]
		in.CharLimit = limit
		ins[i] = in
	}
}

// styleFormInputs styles a form's fields: faint placeholders, so an
// example never reads as a typed value.
func styleFormInputs(ins []textinput.Model, st ui.Styles) {
	s := textinput.DefaultStyles(st.IsDark)
	s.Focused.Placeholder = st.Faint
	s.Blurred.Placeholder = st.Faint
	s.Cursor.Color = st.AccentColor
	for i := range ins {
		ins[i].SetStyles(s)
	}
}

// focusFormInput focuses field i and blurs the others; an i that is not
// a text field (a switch, a checkbox) blurs them all.
func focusFormInput(ins []textinput.Model, i int) tea.Cmd {
	var cmd tea.Cmd
	for j := range ins {
		if j == i {
			cmd = ins[j].Focus()
		} else {
			ins[j].Blur()
		}
	}
	return cmd
}

// WithFrame sizes and styles the form; it is as tall as it needs.
func (f publishForm) WithFrame(fr frame) dialog {
	f.frame = fr
	f.setStyles(fr.st)
	return f
}

func (f *publishForm) setStyles(st ui.Styles) {
	f.st = st
	styleFormInputs(f.inputs[:], st)
}

// Init focuses the first field.
func (f *publishForm) Init() tea.Cmd { return f.setFocus(0) }

func (f *publishForm) setFocus(i int) tea.Cmd {
	f.focus = (i + numFields) % numFields
	return focusFormInput(f.inputs[:], f.focus)
}

// Update edits the form; enter with a valid form submits it.
func (f publishForm) Update(msg tea.Msg) (dialog, tea.Cmd, outcome) {
	km, ok := msg.(tea.KeyPressMsg)
	if ok {
		switch {
		case key.Matches(km, f.keys.Cancel):
			return f, nil, closed{}
		case key.Matches(km, f.keys.Submit):
			if _, err := f.request(time.Time{}); err != nil {
				f.err = err.Error()
				return f, nil, nil
			}
			return f, nil, publishSubmitted{ladder: f.ladder, request: f.request}
		case key.Matches(km, f.keys.Next):
			return f, f.setFocus(f.focus + 1), nil
		case key.Matches(km, f.keys.Prev):
			return f, f.setFocus(f.focus - 1), nil
		case f.focus == fieldPersistent && key.Matches(km, f.keys.Toggle):
			f.persistent = !f.persistent
			return f, nil, nil
		}
	}
	if f.focus == fieldPersistent {
		return f, nil, nil
	}
	return f, typeInto(&f.inputs[f.focus], msg, &f.err), nil
}

// request validates the form and builds the messages, stamped at now.
func (f publishForm) request(now time.Time) (publishRequest, error) {
	delayText := strings.TrimSpace(f.inputs[fieldDelay].Value())
	if delayText == "" {
		return publishRequest{}, errors.New("delay: type one, e.g. 90s")
	}
	d, err := topology.ParseDelay(delayText)
	if err != nil {
		return publishRequest{}, fmt.Errorf("delay: %w", err)
	}
	headers, err := topology.ParseHeaders(topology.SplitHeaders(f.inputs[fieldHeaders].Value()))
	if err != nil {
		return publishRequest{}, fmt.Errorf("headers: %w", err)
	}
	count := 1
	if c := strings.TrimSpace(f.inputs[fieldCount].Value()); c != "" {
		count, err = strconv.Atoi(c)
		// The form has no rate: ops' count rule caps it at MaxUnpaced.
		if err != nil || ops.CheckCount(count, 0) != nil {
			return publishRequest{}, fmt.Errorf("count: %q is not a number from 1 to %d (more: rungs publish --count N --rate max)", c, ops.MaxUnpaced)
		}
	}
	// The same request rungs publish makes: the delay header stamped, the
	// content type picked from the body, the route checked.
	req := ops.PublishRequest{Ladder: f.ladder, Delay: d, Dest: strings.TrimSpace(f.inputs[fieldDest].Value()), Count: count,
		Message: ops.Delayed{Body: []byte(f.inputs[fieldBody].Value()), Headers: headers, Persistent: f.persistent}}
	msg, err := req.Plan(f.graph)
	if err != nil {
		return publishRequest{}, err
	}
	return publishRequest{trace: msg.Trace, msgs: msg.Messages(1, count, now), count: count, persist: f.persistent}, nil
}

// View renders the form as a dialog.
func (f publishForm) View() string {
	w := min(f.w, 76)
	labels := [numFields]string{"Delay", "Destination", "Body", "Headers", "Count", "Persistent"}
	hints := [numFields]string{"", "", "", "", "", "space toggles"}
	// The dialog's frame, the focus mark, the label column and the
	// cursor cell leave this much for the text.
	inputW := max(10, w-4-2-len("Destination")-2-1)
	var fields []ui.FormField
	for i := 0; i < numFields; i++ {
		var in string
		if i == fieldPersistent {
			box := "[ ] no: lost if the broker restarts"
			if f.persistent {
				box = "[x] yes: delivery mode 2"
			}
			in = box
		} else {
			f.inputs[i].SetWidth(inputW)
			in = f.inputs[i].View()
		}
		fields = append(fields, ui.FormField{Label: labels[i], Input: in, Focused: i == f.focus, Hint: hints[i]})
	}
	state := ui.FormState{
		Title:  "Publish into " + f.ladder.Name,
		Fields: fields,
		Keys:   []key.Binding{f.keys.Next, f.keys.Submit, f.keys.Cancel},
	}
	req, err := f.request(time.Time{})
	switch {
	case f.err != "":
		state.PreviewErr = f.err
	case err != nil && strings.TrimSpace(f.inputs[fieldDelay].Value()) != "":
		state.PreviewErr = err.Error()
	case err != nil:
		state.Preview = []string{f.st.Muted.Render("type a delay to see the routing key and the path")}
	default:
		tr := req.trace
		kind := "transient"
		if req.persist {
			kind = "persistent"
		}
		state.Preview = []string{
			f.st.Muted.Render("key ") + f.st.Bold.Render(tr.Key),
			f.st.Muted.Render("to  ") + tr.Exchange + f.st.Muted.Render(fmt.Sprintf(" · %d %s · arrives in ", len(tr.Hops), topology.Plural(len(tr.Hops), "hop", "hops"))) + tr.Target + f.st.Muted.Render(" after "+topology.FormatSpan(tr.Total())),
			f.st.Muted.Render(fmt.Sprintf("%d %s %s, with publisher confirms", req.count, kind, topology.Plural(req.count, "message", "messages"))),
		}
	}
	return ui.Form(state, f.st, w)
}

// publishedMsg reports a publish.
type publishedMsg struct {
	res    broker.PublishResult
	err    error
	count  int
	ladder topology.Ladder
	trace  topology.Trace
}

// publish sends the request's messages with confirms.
func publish(pub broker.Publisher, l topology.Ladder, req publishRequest) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
		defer cancel()
		res, err := pub.Publish(ctx, req.msgs)
		return publishedMsg{res: res, err: err, count: req.count, ladder: l, trace: req.trace}
	}
}

// publishResult words a publish outcome for the header.
func publishResult(m publishedMsg) ui.Result {
	r := m.res
	text := fmt.Sprintf("published %d → %s in %s: %d confirmed", m.count, m.trace.Target, topology.FormatSpan(m.trace.Delay), r.Confirmed)
	if r.Returned > 0 {
		text += fmt.Sprintf(", %d returned (unroutable)", r.Returned)
	}
	if r.Nacked > 0 {
		text += fmt.Sprintf(", %d refused", r.Nacked)
	}
	if r.Failed > 0 {
		text += fmt.Sprintf(", %d unknown (connection lost)", r.Failed)
	}
	switch {
	case errors.Is(m.err, broker.ErrReadOnly):
		return ui.Result{Kind: ui.ResultWarn, Text: "refused: the broker client is read-only"}
	case m.err != nil && r.Confirmed+r.Returned+r.Nacked+r.Failed == 0:
		return ui.Result{Kind: ui.ResultError, Text: "publish failed: " + m.err.Error()}
	case m.err != nil || r.Returned+r.Nacked+r.Failed > 0:
		return ui.Result{Kind: ui.ResultWarn, Text: text}
	}
	return ui.Result{Kind: ui.ResultOK, Text: text}
}
