package model

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// Mover moves messages off a queue, republishing each with confirms
// before removing it (broker.Conn does).
type Mover interface {
	Move(ctx context.Context, o broker.MoveOptions) (broker.MoveProgress, error)
}

// Where a replay sends messages.
type replayTo int

const (
	toOrigin replayTo = iota
	toLadder
	toQueue
	numReplayTo
)

// Replay form fields, in tab order. Which are shown depends on where the
// messages go.
const (
	rfTo = iota
	rfDelay
	rfDest
	rfQueue
	rfLimit
	rfRate
	rfPark
	numReplayFields
)

// replayRun is a Move in flight: the channel its progress comes on and the
// cancel that stops it.
type replayRun struct {
	id       int
	stopping bool // the operator asked it to stop
	progress chan broker.MoveProgress
	cancel   context.CancelFunc
}

// replayStarted is the replay dialog's outcome when the operator starts
// the Move; the dialog stays open to show its progress.
type replayStarted struct{ plan ops.ReplayPlan }

// replayStopping asks the App to cancel the running Move; the dialog
// stays open until the Move has stopped.
type replayStopping struct{ source string }

// replayClosed is the replay dialog closing; nothingMoved if it closed
// before a Move started.
type replayClosed struct{ nothingMoved bool }

// replayDialog replays a queue's messages: a form (where to, limit, rate,
// parking queue), a confirmation naming the source, the count and the
// destination, then the progress of the Move and its outcome.
type replayDialog struct {
	keys replayKeys
	frame
	source string
	ready  int // the source's depth when the dialog opened; -1 unknown
	// ladder is the ladder the messages can be sent back into (the one
	// open); nil when there is none.
	ladder *topology.Ladder
	// scope is what ops checks the form against: the queues, ladders and
	// bindings on screen when the dialog opened, and the destination
	// queues read by name since.
	scope *ops.BrokerView
	// lookup reads a destination queue the scope does not hold (nil: none
	// is read, and such a queue is absent); looked holds the names it
	// answered for, asking those it is reading.
	lookup func(name string) tea.Cmd
	looked map[string]bool
	asking map[string]bool
	// reviewing is set when enter came while the destination was still
	// being read: the review opens as soon as its answer allows it, so
	// that typing a queue and pressing enter at once just works.
	reviewing bool

	to     replayTo
	inputs [numReplayFields]textinput.Model
	focus  int
	err    string

	form  bool // the form is shown; else phase says what is
	phase ui.ReplayPhase
	// plan is the form worked out, or planErr why it cannot be: planned
	// again whenever the form changes, never while drawing.
	plan    ops.ReplayPlan
	planErr error
	counts  broker.MoveProgress
	// cancelled is set once the operator stopped the Move; runErr is why
	// it stopped early otherwise.
	cancelled bool
	runErr    string
}

func newReplayDialog(source string, ready int, l *topology.Ladder, scope *ops.BrokerView, lookup func(string) tea.Cmd, st ui.Styles) replayDialog {
	d := replayDialog{keys: defaultReplayKeys(), source: source, ready: ready, ladder: l, form: true, scope: scope,
		lookup: lookup, looked: map[string]bool{}, asking: map[string]bool{}}
	placeholders := [numReplayFields]string{
		rfDelay: "90s, 5m, 1h30m",
		rfQueue: "the queue to move them to",
		rfLimit: "all (or 0): until the source is empty",
		rfRate:  "no cap; e.g. 200/s or 6000/m",
		rfPark:  "none: unroutable messages stay on " + source,
	}
	if l != nil {
		placeholders[rfDest] = destPlaceholder(*l)
	}
	newFormInputs(d.inputs[:], placeholders[:], 255)
	d.setStyles(st)
	d.replan()
	return d
}

func (d *replayDialog) setStyles(st ui.Styles) {
	d.st = st
	styleFormInputs(d.inputs[:], st)
}

// Init focuses the first field.
func (d *replayDialog) Init() tea.Cmd { return d.setFocus(rfTo) }

// fields are the form's fields for the destination chosen.
func (d replayDialog) fields() []int {
	fs := []int{rfTo}
	switch d.to {
	case toLadder:
		fs = append(fs, rfDelay, rfDest)
	case toQueue:
		fs = append(fs, rfQueue)
	}
	return append(fs, rfLimit, rfRate, rfPark)
}

func (d *replayDialog) setFocus(f int) tea.Cmd {
	d.focus = f
	if f == rfTo {
		return focusFormInput(d.inputs[:], -1) // the destination switch
	}
	return focusFormInput(d.inputs[:], f)
}

// move shifts the focus by step among the fields shown.
func (d *replayDialog) move(step int) tea.Cmd {
	fs := d.fields()
	at := 0
	for i, f := range fs {
		if f == d.focus {
			at = i
		}
	}
	return d.setFocus(fs[(at+step+len(fs))%len(fs)])
}

// toggle switches where the messages go; into a ladder only when there is
// one.
func (d *replayDialog) toggle(step int) {
	for {
		d.to = (d.to + replayTo(step) + numReplayTo) % numReplayTo
		if d.to != toLadder || d.ladder != nil {
			return
		}
	}
}

// running reports whether a Move is under way.
func (d replayDialog) running() bool {
	return !d.form && (d.phase == ui.ReplayRunning || d.phase == ui.ReplayCancelling)
}

// Update steps through the dialog, and follows the Move it started.
func (d replayDialog) Update(msg tea.Msg) (dialog, tea.Cmd, outcome) {
	switch msg := msg.(type) {
	case replayProgressMsg:
		if d.running() {
			d.counts = msg.p
		}
		return d, nil, nil
	case destLookedUpMsg:
		return d.destLookedUp(msg), nil, nil
	case replayDoneMsg:
		d.phase, d.counts = ui.ReplayDone, msg.p
		if errors.Is(msg.err, context.Canceled) || msg.p.Stopped == broker.StopCancelled {
			d.cancelled = true
		} else if msg.err != nil {
			d.runErr = msg.err.Error()
		}
		return d, nil, nil
	}
	km, isKey := msg.(tea.KeyPressMsg)
	if !d.form {
		if !isKey {
			return d, nil, nil
		}
		return d.phaseKey(km)
	}
	if isKey {
		k := d.keys
		switch {
		case key.Matches(km, k.Cancel):
			return d, nil, replayClosed{nothingMoved: true}
		case key.Matches(km, k.Review):
			if d.planErr != nil {
				d.err = d.planErr.Error()
				d.reviewing = d.asking[d.unread()]
				return d, nil, nil
			}
			d.form, d.phase = false, ui.ReplayConfirm
			return d, nil, nil
		case key.Matches(km, k.Next):
			return d, d.move(1), nil
		case key.Matches(km, k.Prev):
			return d, d.move(-1), nil
		case d.focus == rfTo && key.Matches(km, k.Toggle):
			step := 1
			if km.String() == "left" {
				step = -1
			}
			d.toggle(step)
			d.err = ""
			d.replan()
			return d, d.checkDest(), nil
		}
	}
	if d.focus == rfTo {
		return d, nil, nil
	}
	before := d.inputs[d.focus].Value()
	cmd := typeInto(&d.inputs[d.focus], msg, &d.err)
	if d.inputs[d.focus].Value() != before {
		d.reviewing = false
		d.replan()
		cmd = tea.Batch(cmd, d.checkDest())
	}
	return d, cmd, nil
}

// phaseKey is a key pressed past the form: start or go back at the
// confirmation, stop a running replay, close a finished one.
func (d replayDialog) phaseKey(km tea.KeyPressMsg) (dialog, tea.Cmd, outcome) {
	k := d.keys
	switch d.phase {
	case ui.ReplayConfirm:
		switch {
		case key.Matches(km, k.Start):
			d.phase, d.counts, d.cancelled, d.runErr = ui.ReplayRunning, broker.MoveProgress{SourceReady: -1}, false, ""
			return d, nil, replayStarted{plan: d.plan}
		case key.Matches(km, k.Back):
			d.form = true
			return d, d.setFocus(d.focus), nil
		}
	case ui.ReplayRunning:
		if key.Matches(km, k.Stop) {
			d.phase = ui.ReplayCancelling
			d.cancelled = true
			return d, nil, replayStopping{source: d.source}
		}
	case ui.ReplayDone:
		if key.Matches(km, k.Close) {
			return d, nil, replayClosed{}
		}
	}
	return d, nil, nil
}

// WithFrame sizes and styles the dialog; it is as tall as it needs.
func (d replayDialog) WithFrame(f frame) dialog {
	d.frame = f
	d.setStyles(f.st)
	return d
}

func (d replayDialog) value(f int) string { return strings.TrimSpace(d.inputs[f].Value()) }

// replan works the form out again, after it changed.
func (d *replayDialog) replan() { d.plan, d.planErr = d.makePlan() }

// unread is the destination queue typed when the scope does not hold it
// and it has not been read by name yet ("" otherwise).
func (d replayDialog) unread() string {
	name := d.value(rfQueue)
	if d.to != toQueue || name == "" || d.lookup == nil || d.scope == nil || d.looked[name] {
		return ""
	}
	if _, ok := d.scope.Snap.Queue(name); ok {
		return ""
	}
	return name
}

// checkDest reads the destination queue by name when the scope does not
// hold it: the console's snapshot holds only the ladders' queues, and a
// replay may go to any queue. Each name is read once.
func (d *replayDialog) checkDest() tea.Cmd {
	name := d.unread()
	if name == "" || d.asking[name] {
		return nil
	}
	d.asking[name] = true
	return d.lookup(name)
}

// destLookedUp takes in a destination read by name: a queue that exists
// joins the scope; one that does not stays out, so the plan refuses it.
// A failed read is said, and tried again when the name is typed again.
func (d replayDialog) destLookedUp(msg destLookedUpMsg) replayDialog {
	delete(d.asking, msg.name)
	if msg.err != nil {
		d.reviewing = false
		if msg.name == d.value(rfQueue) {
			d.err = msg.err.Error()
		}
		return d
	}
	d.looked[msg.name] = true
	if msg.found {
		d.scope = d.scope.WithQueues(msg.q)
	}
	d.replan()
	if d.reviewing && msg.name == d.value(rfQueue) {
		// Enter came while this was read: go on as it asked.
		d.reviewing = false
		if d.planErr != nil {
			d.err = d.planErr.Error()
			return d
		}
		d.err = ""
		d.form, d.phase = false, ui.ReplayConfirm
	}
	return d
}

// makePlan reads the form into the request rungs replay builds from its
// flags, and has ops check and plan it through the CLI's entry point,
// ops.Replay, against the scope the dialog holds: it reads nothing, so
// that the form can be planned again at every key.
func (d replayDialog) makePlan() (ops.ReplayPlan, error) {
	req := ops.ReplayRequest{Source: d.source, Park: d.value(rfPark), Scope: d.scope}
	var err error
	if req.Limit, err = ops.ParseLimit(d.value(rfLimit)); err != nil {
		return ops.ReplayPlan{}, err
	}
	if s := d.value(rfRate); s != "" {
		if req.Rate, err = topology.ParseRate(s); err != nil {
			return ops.ReplayPlan{}, fmt.Errorf("rate: %v", err)
		}
	}
	switch d.to {
	case toOrigin:
		req.To.Origin = true
	case toQueue:
		if req.To.Queue = d.value(rfQueue); req.To.Queue == "" {
			return ops.ReplayPlan{}, errors.New("queue: type the queue to move them to")
		}
		if name := d.unread(); name != "" {
			return ops.ReplayPlan{}, fmt.Errorf("queue: looking up %s …", name)
		}
	case toLadder:
		delay, err := ops.LadderDelay(d.value(rfDelay))
		if err != nil {
			return ops.ReplayPlan{}, err
		}
		req.To.Ladder, req.To.Delay, req.To.Dest = d.ladder, delay, d.value(rfDest)
	}
	return ops.Replay(context.Background(), nil, req)
}

// View renders the dialog: the form, or the confirmation and progress.
func (d replayDialog) View() string {
	w := min(d.w, 76)
	if !d.form {
		s := ui.ReplayState{
			Phase: d.phase, Source: d.source, Describe: d.plan.Describe, Park: d.plan.Options.Park,
			Ready: d.ready, Limit: d.plan.Options.Limit, Rate: d.plan.Options.Rate,
			Counts: d.counts, Cancelled: d.cancelled, Err: d.runErr,
		}
		switch d.phase {
		case ui.ReplayConfirm:
			s.Keys = []key.Binding{d.keys.Start, d.keys.Back}
		case ui.ReplayRunning:
			s.Keys = []key.Binding{d.keys.Stop}
		case ui.ReplayDone:
			s.Keys = []key.Binding{d.keys.Close}
		}
		return ui.Replay(s, d.st, w)
	}
	labels := [numReplayFields]string{"Where to", "Delay", "Destination", "Queue", "Limit", "Rate", "Park in"}
	inputW := max(10, w-4-2-len("Destination")-2-1)
	var fields []ui.FormField
	for _, f := range d.fields() {
		in, hint := "", ""
		if f == rfTo {
			in, hint = d.choices(), "space switches"
		} else {
			d.inputs[f].SetWidth(inputW)
			in = d.inputs[f].View()
		}
		fields = append(fields, ui.FormField{Label: labels[f], Input: in, Focused: f == d.focus, Hint: hint})
	}
	state := ui.FormState{
		Title:  "Replay from " + d.source,
		Fields: fields,
		Keys:   []key.Binding{d.keys.Next, d.keys.Review, d.keys.Cancel},
	}
	p, err := d.plan, d.planErr
	switch {
	case d.err != "":
		state.PreviewErr = d.err
	case err != nil:
		state.Preview = []string{d.st.Muted.Render(err.Error())}
	default:
		n := "every message"
		if d.ready >= 0 {
			n = fmt.Sprintf("about %s %s", topology.FormatCount(int64(d.ready)), topology.Plural(d.ready, "message", "messages"))
		}
		state.Preview = []string{
			"replay " + n + " from " + d.st.Bold.Render(d.source) + " " + p.Describe,
			d.st.Muted.Render("each leaves the source only once its copy is confirmed; enter reviews, then y starts"),
		}
	}
	return ui.Form(state, d.st, w)
}

// choices draws the destination switch.
func (d replayDialog) choices() string {
	names := [numReplayTo]string{"origin", "this ladder", "a queue"}
	if d.ladder != nil {
		names[toLadder] = "ladder " + d.ladder.Name
	}
	var out []string
	for i, n := range names {
		switch {
		case replayTo(i) == d.to:
			out = append(out, d.st.Accent.Render("(•) "+n))
		case replayTo(i) == toLadder && d.ladder == nil:
			out = append(out, d.st.Faint.Render("( ) "+n))
		default:
			out = append(out, "( ) "+n)
		}
	}
	return strings.Join(out, "  ")
}

// replayProgressMsg is a Move's progress, forwarded from its goroutine.
type replayProgressMsg struct {
	id int
	p  broker.MoveProgress
}

// replayDoneMsg is a Move's end.
type replayDoneMsg struct {
	id       int
	p        broker.MoveProgress
	err      error
	source   string
	describe string
}

// move runs the Move; it closes the progress channel when Move returns,
// which ends the progress reader.
func move(m Mover, ctx context.Context, o broker.MoveOptions, id int, ch chan broker.MoveProgress, describe string) tea.Cmd {
	return func() tea.Msg {
		p, err := m.Move(ctx, o)
		close(ch)
		return replayDoneMsg{id: id, p: p, err: err, source: o.Source, describe: describe}
	}
}

// waitProgress blocks for the next progress report; Update re-arms it
// after each one, as long as the Move runs.
func waitProgress(id int, ch <-chan broker.MoveProgress) tea.Cmd {
	return func() tea.Msg {
		p, ok := <-ch
		if !ok {
			return nil
		}
		return replayProgressMsg{id: id, p: p}
	}
}

// openReplay opens the replay form for a queue.
func (a App) openReplay(queue string) (App, tea.Cmd) {
	if a.readOnly {
		return a.refuse("replaying")
	}
	if a.mover == nil {
		return a.fail("replaying needs an AMQP connection, and this console has none")
	}
	return a.withQueue(queue, wantReplay, 0)
}

// replayQueue opens the replay form for q. The form checks its request
// against view: the snapshot with q in it, or, for a queue it does not
// hold, what ops.ReadReplay read (nil: the snapshot); it reads a
// destination queue neither holds by name.
func (a App) replayQueue(q topology.Queue, view *ops.BrokerView) (App, tea.Cmd) {
	if view == nil {
		snap := ops.WithQueues(a.merged(), q)
		view = &ops.BrokerView{Snap: snap, Found: a.found, Graph: topology.NewGraph(snap)}
	}
	var l *topology.Ladder
	if f, ok := a.replayLadder(q.Name); ok {
		l = &f.Ladder
	}
	d := newReplayDialog(q.Name, int(q.Stats.Ready), l, view, a.destLookup(), a.styles)
	init := d.Init()
	return a, a.open(d, init)
}

// replayLadder is the ladder a queue's messages can be sent back into: the
// one open, else the one the queue belongs to.
func (a App) replayLadder(queue string) (topology.Found, bool) {
	if a.screen == screenLadder || a.screen == screenPeek && a.peek.Back() == screenLadder {
		return a.ladder.Found(), true
	}
	for _, f := range a.found {
		if _, _, ok := f.Ladder.QueueRole(queue); ok {
			return f, true
		}
	}
	return topology.Found{}, false
}

// replays is the replay running, if any, and the numbering that tells its
// reports from those of one that ended.
type replays struct {
	run *replayRun
	seq int
}

// stoppable reports whether ctrl+c should stop a replay rather than quit:
// it stops a running replay first; pressed again while the replay stops,
// it quits (the broker returns every unconfirmed message then).
func (r replays) stoppable() bool { return r.run != nil && !r.run.stopping }

// stop cancels the running Move; its dialog stays open until the Move
// reports that it stopped.
func (r *replays) stop() {
	if r.run != nil {
		r.run.stopping = true
		r.run.cancel()
	}
}

// start runs the plan's Move through m: the command that runs it, and the
// one that reads its progress, one report at a time.
func (r *replays) start(m Mover, p ops.ReplayPlan) (run, wait tea.Cmd) {
	ctx, cancel := context.WithCancel(context.Background())
	r.seq++
	ch := make(chan broker.MoveProgress, 1)
	r.run = &replayRun{id: r.seq, progress: ch, cancel: cancel}
	o := p.Options
	o.Progress = forwardLatest(ch)
	return move(m, ctx, o, r.run.id, ch, p.Describe), waitProgress(r.run.id, ch)
}

// report takes a Move's report: ok when it is the running Move's (not one
// that already ended); next re-arms the progress reader while it runs.
func (r *replays) report(msg tea.Msg) (ok bool, next tea.Cmd) {
	switch msg := msg.(type) {
	case replayProgressMsg:
		if r.run == nil || msg.id != r.run.id {
			return false, nil
		}
		return true, waitProgress(r.run.id, r.run.progress)
	case replayDoneMsg:
		if r.run == nil || msg.id != r.run.id {
			return false, nil
		}
		r.run.cancel()
		r.run = nil
		return true, nil
	}
	return false, nil
}

// startReplay runs a confirmed replay, logged.
func (a App) startReplay(p ops.ReplayPlan) (App, tea.Cmd) {
	if a.mover == nil {
		return a.fail("replaying needs an AMQP connection, and this console has none")
	}
	run, wait := a.replays.start(a.mover, p)
	a.busy = "replaying from " + p.Options.Source
	id := a.log.Add(a.now(), "replay", replaySent(p)...)
	return a, tea.Batch(logged(id, run), wait)
}

// replaySent is a replay as the command log records it as it starts.
func replaySent(p ops.ReplayPlan) []string {
	o := p.Options
	sent := []string{"from=" + o.Source, "route: " + p.Describe, "publisher_confirms=on", "mandatory=true"}
	if o.Limit > 0 {
		sent = append(sent, fmt.Sprintf("limit=%d", o.Limit))
	}
	if o.Rate > 0 {
		sent = append(sent, "rate="+topology.FormatRate(o.Rate)+"/s")
	}
	if o.Park != "" {
		sent = append(sent, "park="+o.Park)
	}
	return sent
}

// updateMove handles a running Move's reports: the dialog shows them,
// the App re-arms the progress reader and, at the end, says how it went.
func (a App) updateMove(msg tea.Msg) (App, tea.Cmd) {
	ok, next := a.replays.report(msg)
	if !ok {
		return a, nil // a Move that already ended
	}
	a.toDialog(msg)
	done, ended := msg.(replayDoneMsg)
	if !ended {
		return a, next
	}
	a.busy = ""
	a.result = replayResult(done)
	if n := done.p.Moved + done.p.Parked; n > 0 {
		a.peek.MarkReplayed(done.source, n)
	}
	restart := a.loop.restart()
	return a, restart
}

// replayResult words a replay's end for the header and the command log.
func replayResult(m replayDoneMsg) ui.Result {
	c := m.p
	text := ui.ReplayReport(c, m.source, m.describe, "", "")[0]
	switch {
	case errors.Is(m.err, broker.ErrReadOnly):
		return ui.Result{Kind: ui.ResultWarn, Text: "refused: the broker client is read-only"}
	case errors.Is(m.err, context.Canceled) || m.p.Stopped == broker.StopCancelled:
		return ui.Result{Kind: ui.ResultWarn, Text: fmt.Sprintf("replay stopped: %d moved, the rest stay on %s", c.Moved+c.Parked, m.source)}
	case m.err != nil:
		return ui.Result{Kind: ui.ResultError, Text: fmt.Sprintf("replay from %s: %v (%d moved)", m.source, m.err, c.Moved+c.Parked)}
	case c.Kept > 0 || c.Unknown > 0:
		return ui.Result{Kind: ui.ResultWarn, Text: text + fmt.Sprintf("; %d stayed", c.Kept)}
	}
	return ui.Result{Kind: ui.ResultOK, Text: text}
}

// replayCommand is `:replay [QUEUE]`: the queue under the cursor (or the
// one being peeked) unless named.
func (a App) replayCommand(args []string) (App, tea.Cmd) {
	if a.readOnly {
		return a.refuse("replaying")
	}
	queue := a.currentQueue()
	switch len(args) {
	case 0:
	case 1:
		queue = args[0]
	default:
		return a.fail("usage: :replay [QUEUE]")
	}
	if queue == "" {
		return a.fail("no queue to replay from: select one in a ladder, or :replay QUEUE")
	}
	return a.openReplay(queue)
}
