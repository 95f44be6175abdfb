// Package model holds the console's Bubble Tea models: App, the root that
// owns the broker clients, the refresh loop and the routing of keys, and
// the children it routes to: the screens (ladder list, ladder view, peek),
// the input line and the dialogs over them, all under one contract (see
// component.go). Rendering is left to package ui, operations shared with
// the CLI to package ops; all I/O happens in tea.Cmds, so the UI never
// blocks.
package model

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// Options configure the console.
type Options struct {
	// Backends are the clients the console starts with and where they
	// point; `:ctx` swaps them for another context's.
	Backends
	// Refresh is the refresh interval; 0 follows the broker's statistics
	// interval (5s until the broker says otherwise).
	Refresh time.Duration
	// Ladder opens that ladder as soon as it is found.
	Ladder string
	// Now is the clock; nil means time.Now. Tests pin it.
	Now func() time.Time
	// Contexts are the named brokers `:ctx` offers, Context the one in
	// use ("" when none). Connect opens a context's clients for `:ctx
	// NAME`; nil switches :ctx off.
	Contexts []string
	Context  string
	Connect  func(ctx context.Context, name string) (Backends, error)
}

type screen int

const (
	screenList screen = iota
	screenLadder
	screenPeek
	screenScheduled
)

// App is the root model: it routes messages to the screen in front and
// owns everything shared between screens.
type App struct {
	insp Inspector
	// reach is how far refreshes read (Backends.Reach).
	reach ops.Reach
	// capacity is the drain capacities saved on the broker, for the
	// publish form's lateness forecast; nil when none could be read.
	capacity    map[string]broker.DrainCapacity
	pub         broker.Publisher
	purger      broker.Purger
	peeker      Peeker
	mover       Mover
	scheduler   Scheduler
	limits      PeekFacter
	vhost       string
	brokerLabel string
	readOnly    bool
	openName    string
	now         func() time.Time

	styles ui.Styles
	keys   keyMap
	width  int
	height int

	// What the broker holds, as the refresh loop's observer saw it;
	// found, loaded and refreshed are its Found, Loaded and At as of the
	// last reading.
	found     []topology.Found
	overview  broker.Overview
	loaded    bool
	refreshed time.Time

	// The refresh loop.
	loop refreshLoop

	// The AMQP connection, and a one-second clock that runs only while
	// something on screen counts (a reconnect countdown, a slow request).
	amqp amqpWatch

	// The screens, the one in front, the input line and the dialog open
	// over them (nil: none). See component.go.
	screen screen
	list   ladderList
	ladder ladderView
	peek   peekView
	sched  scheduled
	prompt prompt
	dialog dialog
	// replays is the replay running, if any.
	replays replays

	result ui.Result
	busy   string

	// The command log, and the contexts :ctx switches between.
	log           commandLog
	contexts      []string
	context       string
	connect       func(context.Context, string) (Backends, error)
	closeBackends func()
}

// New builds the console. Nothing talks to the broker until the program
// runs Init's commands.
func New(opts Options) App {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	st := ui.NewStyles(true)
	a := App{
		openName: opts.Ladder, now: now, styles: st,
		loop:   refreshLoop{now: now, interval: opts.Refresh, timeout: defaultTimeout},
		prompt: newPrompt(st),

		contexts: opts.Contexts, context: opts.Context, connect: opts.Connect,
	}
	a.use(opts.Backends)
	a.list = newLadderList(a.vhost, st, defaultNavKeys())
	if a.loop.interval <= 0 {
		a.loop.interval, a.loop.followBroker = health.DefaultInterval, true
	}
	a.loop.obs = newObserver(a.vhost, a.reach, a.loop.interval)
	if a.amqp.conn != nil {
		a.amqp.state = a.amqp.conn.State()
	}
	// The first snapshot is requested by Init; record it here because
	// Init cannot change the model.
	a.loop.seq = 1
	a.loop.pending = &request{read: a.loop.obs.Next(), seq: 1, started: now()}
	return a
}

// Init asks the terminal for its background (to pick a palette), loads the
// first snapshot and the broker overview, starts the refresh loop and
// starts watching the connection.
func (a App) Init() tea.Cmd {
	cmds := []tea.Cmd{
		tea.RequestBackgroundColor,
		fetch(a.insp, a.loop.pending.read, a.loop.pending.seq, a.loop.timeout, a.now),
		fetchOverview(a.insp, a.loop.timeout),
		fetchDelays(a.insp, a.vhost, a.loop.timeout),
		fetchCapacity(a.insp, a.loop.timeout),
		a.loop.poll(),
	}
	if a.amqp.conn != nil {
		cmds = append(cmds, watchConn(a.amqp.conn.Changes()))
	}
	return tea.Batch(cmds...)
}

// Update routes a message, then points the refreshes at whatever screen
// it left in front.
func (a App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := a.route(msg)
	next, ok := m.(App)
	if !ok {
		return m, cmd
	}
	if follow := next.followScreen(); follow != nil {
		return next, tea.Batch(cmd, follow)
	}
	return next, cmd
}

// route handles a message: sizes, colours and broker replies are handled
// here, keys go to the overlay, the input line or the screen in front.
func (a App) route(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.width, a.height = msg.Width, msg.Height
		a.resize()
		return a, nil
	case tea.BackgroundColorMsg:
		a.setStyles(ui.NewStyles(msg.IsDark()))
		return a, nil
	case tea.KeyPressMsg:
		return a.updateKey(msg)
	case tea.MouseWheelMsg:
		if a.dialog == nil {
			return a.updateScreen(msg)
		}
		return a, nil
	case tea.PasteMsg:
		return a.updateFocused(msg)
	case delaysMsg:
		a.list.SetDelays(msg.snap, msg.delayed)
		return a, nil
	case capacityMsg:
		a.capacity = msg
		return a, nil
	case pollMsg, readMsg, unroutedMsg, overviewMsg:
		a, cmd := a.updateRefresh(msg)
		a.resize() // the stale-data banner may have come or gone
		return a, cmd
	case connMsg, connClosedMsg, clockMsg:
		cmd := a.amqp.update(msg, a.loop.slow(a.now()))
		return a, cmd
	case publishedMsg:
		a.busy = ""
		a.result = publishResult(msg)
		a.showPublished(msg)
		restart := a.loop.restart()
		return a, restart
	case purgedMsg:
		a.busy = ""
		a.result = purgeResult(msg)
		restart := a.loop.restart()
		return a, restart
	case peekFactsMsg, peekedMsg:
		return a.updatePeekReply(msg)
	case queueLookedUpMsg:
		return a.queueLookedUp(msg)
	case replayProgressMsg, replayDoneMsg:
		return a.updateMove(msg)
	case scanProgressMsg, scanDoneMsg, actionProgressMsg, actionPlannedMsg, actionDoneMsg:
		return a.updateSched(msg)
	case loggedMsg:
		text, failed := logResult(msg.msg)
		a.log.Finish(msg.id, text, failed)
		a.toDialog(logUpdated{a.log.Entries()})
		return a.Update(msg.msg)
	case contextMsg:
		return a.switchContext(msg)
	}
	return a.updateFocused(msg)
}

// updateKey routes a key press by focus: overlay, then input line, then
// global keys, then the screen.
func (a App) updateKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if key.Matches(msg, a.keys.global.ForceQuit) && a.sched.Working() && a.dialog == nil {
		a.sched = a.sched.Stop() // a scan or an action stops cleanly first; ctrl+c again quits
		return a, nil
	}
	if key.Matches(msg, a.keys.global.ForceQuit) && !a.replays.stoppable() {
		return a, tea.Quit
	}
	if a.dialog != nil || a.prompt.Active() {
		return a.updateFocused(msg)
	}
	g := a.keys.global
	switch {
	case key.Matches(msg, g.Quit):
		return a, tea.Quit
	case key.Matches(msg, g.Help):
		return a, a.openHelp()
	case key.Matches(msg, g.Log):
		return a, a.openLog()
	case key.Matches(msg, g.Bridges):
		return a, a.openSide(sideBridges)
	case key.Matches(msg, g.Retry):
		return a, a.openSide(sideRetry)
	case key.Matches(msg, g.Command):
		return a, a.prompt.Open(promptCommand, "", a.suggestions())
	case key.Matches(msg, g.Filter):
		if a.screen == screenPeek {
			return a, nil // a peek has nothing to filter
		}
		if a.screen == screenScheduled {
			// A scan per keystroke would hold the rungs again and again:
			// the filter applies when submitted.
			return a, a.prompt.Open(promptScheduled, a.currentFilter(), ops.FilterTermNames)
		}
		return a, a.prompt.Open(promptFilter, a.currentFilter(), nil)
	case key.Matches(msg, g.Refresh):
		restart := a.loop.restart()
		return a, restart
	case key.Matches(msg, g.Back):
		a.back()
		return a, nil
	}
	return a.updateScreen(msg)
}

// updateFocused sends a message to whatever has the focus: the dialog
// open or the input line. Other messages (cursor blinks) go there too.
func (a App) updateFocused(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch {
	case a.dialog != nil:
		d, cmd, o := a.dialog.Update(msg)
		a.dialog = d
		if o != nil {
			return a.act(o)
		}
		return a, cmd
	case a.prompt.Active():
		return a.updatePrompt(msg)
	}
	return a, nil
}

// act does what a dialog's outcome asks. Every outcome closes the dialog
// but those of a replay under way, whose dialog shows its progress.
func (a App) act(o outcome) (tea.Model, tea.Cmd) {
	switch o := o.(type) {
	case replayStarted:
		return a.startReplay(o.plan)
	case replayStopping:
		a.replays.stop()
		a.busy = "stopping the replay from " + o.source
		return a, nil
	}
	a.dialog = nil
	switch o := o.(type) {
	case publishSubmitted:
		req, err := o.request(a.now())
		if err != nil {
			return a.fail(err.Error())
		}
		a.busy = fmt.Sprintf("publishing %d to %s", req.count, req.trace.Exchange)
		return a, logged(a.log.Add(a.now(), "publish", publishSent(req)...), publish(a.pub, o.ladder, req))
	case purgeAnswered:
		if !o.confirmed {
			a.result = ui.Result{Kind: ui.ResultInfo, Text: "purge cancelled"}
			return a, nil
		}
		n := len(o.plan.Queues)
		a.busy = fmt.Sprintf("purging %d %s", n, topology.Plural(n, "queue", "queues"))
		return a, logged(a.log.Add(a.now(), "purge", purgeSent(o.plan)...), purge(a.purger, o.plan))
	case forceAnswered:
		return a.forceAnswered(o)
	case peekAsked:
		return a.openPeek(o.queue, peekCount)
	case scanForced, actionAnswered:
		return a.updateSched(o)
	case replayClosed:
		if o.nothingMoved {
			a.result = ui.Result{Kind: ui.ResultInfo, Text: "replay cancelled: nothing was moved"}
		}
	}
	return a, nil
}

// open shows a dialog over the screen; init is its first command.
func (a *App) open(d dialog, init tea.Cmd) tea.Cmd {
	a.dialog = d.WithFrame(a.frame())
	return init
}

// frame is the size and styles every dialog is given.
func (a App) frame() frame { return frame{st: a.styles, w: a.width, h: a.height} }

// toDialog hands the open dialog a message that is news to it (a Move's
// progress, a change to the log) rather than an answer from the operator.
func (a *App) toDialog(msg tea.Msg) {
	if a.dialog != nil {
		a.dialog, _, _ = a.dialog.Update(msg)
	}
}

func (a *App) openHelp() tea.Cmd {
	d := newHelpDialog(a.keys, a.readOnly, a.styles)
	if a.screen == screenScheduled {
		d = a.keys.scheduledHelpDialog(d, a.readOnly)
	}
	return a.open(d, nil)
}

func (a *App) openLog() tea.Cmd {
	return a.open(newLogDialog(a.keys, a.log.Entries(), a.context, a.styles), nil)
}

// updateScreen handles a key or wheel event for the screen in front.
func (a App) updateScreen(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch a.screen {
	case screenLadder:
		return a.updateLadder(msg)
	case screenPeek:
		return a.updatePeek(msg)
	case screenScheduled:
		return a.updateSched(msg)
	}
	return a.updateList(msg)
}

func (a App) updateList(msg tea.Msg) (tea.Model, tea.Cmd) {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		k := a.keys
		switch {
		case key.Matches(km, k.nav.Open):
			if f, ok := a.list.Selected(); ok {
				a.openLadder(f)
			}
			return a, nil
		case key.Matches(km, k.actions.Publish):
			if f, ok := a.list.Selected(); ok {
				return a, a.openPublish(f.Ladder, "", "", 0)
			}
			return a, nil
		case key.Matches(km, k.actions.Refused):
			return a.refuse(refusedAction(km))
		}
	}
	var cmd tea.Cmd
	a.list, cmd = a.list.Update(msg)
	return a, cmd
}

func (a App) updateLadder(msg tea.Msg) (tea.Model, tea.Cmd) {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		k := a.keys.actions
		switch {
		case key.Matches(km, k.Trace):
			// The prompt opens empty so that typing a delay replaces the
			// last one instead of appending to it ("40s45s" is 85s); the
			// last trace stays on screen until the first keystroke.
			return a, a.prompt.Open(promptTrace, "", nil)
		case key.Matches(km, k.Publish):
			delay, dest := "", ""
			if tr, ok := a.ladder.Trace(); ok {
				delay, dest = topology.FormatSpan(tr.Requested), tr.Dest
			}
			return a, a.openPublish(a.ladder.Found().Ladder, delay, dest, 0)
		case key.Matches(km, k.Purge):
			row, ok := a.ladder.Selected()
			if !ok || row.Missing {
				return a.fail("nothing to purge: select a queue that exists")
			}
			return a.openPurge(ops.PurgeRequest{Queue: row.Queue})
		case key.Matches(km, k.PurgeAll):
			return a.openPurge(ops.PurgeRequest{Ladder: a.ladder.Found().Ladder})
		case key.Matches(km, k.Peek), key.Matches(km, k.Replay):
			row, ok := a.ladder.Selected()
			if !ok || row.Missing {
				return a.fail("nothing to " + km.String() + ": select a queue that exists")
			}
			if key.Matches(km, k.Peek) {
				return a.openPeek(row.Queue, peekCount)
			}
			return a.openReplay(row.Queue)
		case key.Matches(km, k.Scheduled):
			return a.openScheduled()
		case key.Matches(km, k.Refused):
			return a.refuse(refusedAction(km))
		}
	}
	var cmd tea.Cmd
	a.ladder, cmd = a.ladder.Update(msg)
	return a, cmd
}

// refusedAction names what a key refused in read-only mode would have done.
func refusedAction(km tea.KeyPressMsg) string {
	switch km.String() {
	case "p":
		return "publishing"
	case "R":
		return "replaying"
	}
	return "purging"
}

// updatePrompt edits the input line and applies filters and traces as
// they are typed, so the screen answers every keystroke.
func (a App) updatePrompt(msg tea.Msg) (tea.Model, tea.Cmd) {
	var ev promptEvent
	var cmd tea.Cmd
	a.prompt, ev, cmd = a.prompt.Update(msg)
	kind, value := a.prompt.Kind(), a.prompt.Value()
	switch ev {
	case promptSubmitted:
		a.prompt.Close()
		if kind == promptCommand {
			a.prompt.Remember(value)
			return a.runCommand(value)
		}
		if kind == promptTrace && value == "" {
			a.ladder.ClearTrace()
		}
		switch kind {
		case promptScheduled:
			return a.updateSched(filterTyped{value})
		case promptReschedule:
			return a.updateSched(dueTyped{value})
		}
		return a, nil
	case promptCancelled:
		a.prompt.Close()
		if kind == promptReschedule {
			return a.updateSched(dueCancelled{})
		}
		switch kind {
		case promptFilter:
			a.setFilter("")
		case promptTrace:
			a.ladder.ClearTrace()
		}
		return a, nil
	}
	switch kind {
	case promptFilter:
		a.setFilter(value)
	case promptTrace:
		a.ladder.SetTrace(value)
	}
	return a, cmd
}

// openPublish opens the publish form.
func (a *App) openPublish(l topology.Ladder, delay, dest string, count int) tea.Cmd {
	if a.readOnly {
		a.result = ui.Result{Kind: ui.ResultWarn, Text: "read-only: publishing is switched off (--read-only)"}
		return nil
	}
	f := newPublishForm(l, a.styles, delay, dest, count, topology.NewGraph(a.merged()))
	f.capacity = a.capacity
	init := f.Init()
	return a.open(f, init)
}

// openPurge plans a purge and opens its confirmation.
func (a App) openPurge(req ops.PurgeRequest) (App, tea.Cmd) {
	return a.openPurgeIn(a.merged(), a.found, req)
}

// openPurgeIn asks ops what a purge deletes, from snap and the ladders
// found there (what the console holds, or what ops read by name), and
// opens its confirmation.
func (a App) openPurgeIn(snap topology.Snapshot, found []topology.Found, req ops.PurgeRequest) (App, tea.Cmd) {
	if a.readOnly {
		return a.refuse("purging")
	}
	v, _ := topology.ParseVersion(a.overview.RabbitMQVersion)
	p, err := ops.PlanPurge(snap, found, v, req)
	if err != nil {
		return a.fail(err.Error())
	}
	c := newPurgeConfirm(p, a.styles)
	cmd := a.open(c, c.Init())
	return a, cmd
}

// showPublished traces the published delay on its ladder, so that the
// operator watches the messages take the path the trace shows.
func (a *App) showPublished(m publishedMsg) {
	if m.err != nil && m.res.Confirmed == 0 {
		return
	}
	if a.screen != screenLadder || !ops.SameLadder(a.ladder.Found().Ladder, m.ladder) {
		for _, f := range a.found {
			if ops.SameLadder(f.Ladder, m.ladder) {
				a.openLadder(f)
			}
		}
	}
	input := topology.FormatSpan(m.trace.Requested)
	if m.trace.Dest != "" {
		input += " " + m.trace.Dest
	}
	a.ladder.SetTrace(input)
}

// back is esc: close the innermost thing open.
func (a *App) back() {
	switch {
	case a.screen == screenScheduled && a.sched.Working():
		a.sched = a.sched.Stop()
	case a.screen == screenScheduled:
		a.screen = screenLadder
	case a.screen == screenPeek:
		a.screen = a.peek.Back()
	case a.screen == screenLadder && a.ladder.TracesMessage() && a.peek.Queue() != "":
		// A traced message: back to the peek it was picked from.
		a.ladder.ClearTrace()
		a.screen = screenPeek
	case a.screen == screenLadder && a.ladder.ClosePanel():
	case a.screen == screenLadder && a.ladder.HasTrace():
		a.ladder.ClearTrace()
	case a.currentFilter() != "":
		a.setFilter("")
	case a.screen == screenLadder:
		a.leaveLadder()
	}
}

func (a App) currentFilter() string {
	if a.screen == screenScheduled {
		return a.sched.Filter()
	}
	if a.screen == screenLadder {
		return a.ladder.Filter()
	}
	return a.list.Filter()
}

func (a *App) setFilter(f string) {
	if a.screen == screenLadder {
		a.ladder.SetFilter(f)
		return
	}
	a.list.SetFilter(f)
}

// openLadder switches to a ladder's view.
func (a *App) openLadder(f topology.Found) {
	a.ladder = newLadderView(f, a.styles, a.keys.nav, a.keys.actions.Drift, a.keys.actions.Fold, a.keys.actions.Cost, a.keys.actions.Forecast)
	a.screen = screenLadder
	a.resize()
	a.rebuild()
}

func (a *App) leaveLadder() {
	a.screen = screenList
	a.list.SelectLadder(a.ladder.Found().Ladder)
}

// openInitial opens --ladder once the first snapshot is in.
func (a *App) openInitial() {
	if a.openName == "" {
		return
	}
	name := a.openName
	a.openName = ""
	f, err := a.findLadder(name)
	if err != nil {
		a.result = ui.Result{Kind: ui.ResultError, Text: err.Error()}
		return
	}
	a.openLadder(f)
}

// rebuild recomputes what the screens show from the data.
func (a *App) rebuild() {
	if !a.loaded {
		return
	}
	rep := a.loop.obs.Report(a.now())
	if a.loop.watchesAll() {
		// With a ladder open, the observer knows that ladder alone: the
		// list keeps what it last showed until it is in front again.
		a.found = a.loop.obs.Found()
		a.list.SetItems(rep.Ladders)
	}
	if a.screen != screenLadder && a.screen != screenScheduled {
		return
	}
	a.ladder.SetBindings(topology.NewGraph(a.loop.obs.Snapshot()))
	cur := a.ladder.Found().Ladder
	for _, lr := range rep.Ladders {
		if ops.SameLadder(lr.Found.Ladder, cur) {
			a.ladder.SetRows(lr, false)
			a.sched.SetForecast(lr.Forecast)
			return
		}
	}
	// The ladder is gone from the broker: keep showing what was last
	// known, marked, rather than yanking the screen away.
	a.ladder.KeepRows()
}

// screens are the App's screens, for what it does to all of them.
func (a *App) screens() []sized { return []sized{&a.list, &a.ladder, &a.peek, &a.sched} }

func (a *App) setStyles(st ui.Styles) {
	a.styles = st
	for _, c := range a.screens() {
		c.SetStyles(st)
	}
	a.prompt.SetStyles(st)
	if a.dialog != nil {
		a.dialog = a.dialog.WithFrame(a.frame())
	}
}

// bodyHeight is the height left for the screen between header and footer.
func (a App) bodyHeight() int {
	h := a.height - ui.HeaderHeight - 1
	if b := a.banner(); b != "" {
		h -= strings.Count(b, "\n") + 1
	}
	return max(1, h)
}

func (a *App) resize() {
	for _, c := range a.screens() {
		c.SetSize(a.width, a.bodyHeight())
	}
	if a.dialog != nil {
		a.dialog = a.dialog.WithFrame(a.frame())
	}
}

// View renders the screen. Terminal modes are set on every path: a view
// without AltScreen would drop the console out of the alternate screen.
func (a App) View() tea.View {
	v := tea.NewView(a.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "rungs · " + a.brokerLabel + " · " + a.vhost
	return v
}

func (a App) render() string {
	if a.width <= 0 || a.height <= 0 {
		return ""
	}
	st, w := a.styles, a.width
	parts := []string{ui.Header(a.headerState(), st, w)}
	if b := a.banner(); b != "" {
		parts = append(parts, b)
	}
	parts = append(parts, a.body(), a.footer())
	screen := strings.Join(parts, "\n")
	if a.dialog != nil {
		return ui.Overlay(screen, a.dialog.View(), w, a.height)
	}
	return screen
}

// body is the screen in front, or the loading and failure states.
func (a App) body() string {
	st, w, h := a.styles, a.width, a.bodyHeight()
	switch {
	case !a.loaded && a.loop.err != nil:
		return ui.Message("✗ cannot "+a.loop.err.op+" on "+a.brokerLabel,
			a.loop.err.err.Error()+"\n\nretrying every "+topology.FormatSpan(a.loop.interval)+" · r retries now · q quits", st.Danger, st, w, h)
	case !a.loaded:
		detail := ""
		if a.loop.pending != nil {
			if wait := a.now().Sub(a.loop.pending.started); wait > a.loop.interval {
				detail = "no answer yet after " + topology.FormatAge(wait) + "; the broker is slow or unreachable\nq quits"
			}
		}
		return ui.Message("Reading ladders from "+a.brokerLabel+", vhost "+a.vhost+" …", detail, st.Muted, st, w, h)
	case a.screen == screenLadder:
		return a.ladder.View()
	case a.screen == screenPeek:
		return a.peek.View(a.now())
	case a.screen == screenScheduled:
		return a.sched.View(a.now())
	}
	return a.list.View()
}

// banner is one or two lines above the body while refreshes fail on data
// already shown: the data stays, marked stale, with the whole reason.
func (a App) banner() string {
	if !a.loaded || a.loop.err == nil {
		return ""
	}
	text := fmt.Sprintf("✗ %s failed: %s · showing data from %s, retrying every %s",
		a.loop.err.op, causeFirst(a.loop.err.err), a.refreshed.Format("15:04:05"), topology.FormatSpan(a.loop.interval))
	return ui.Banner(text, a.styles.Danger, a.width, 2)
}

// causeFirst puts an operating system's refusal (connection refused,
// reset, no route) before the request that met it: a read by name names
// long URLs, and the banner's two lines would cut the cause off the end.
func causeFirst(err error) string {
	msg := err.Error()
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return msg
	}
	cause := errno.Error()
	if !strings.HasSuffix(msg, cause) || msg == cause {
		return msg
	}
	return cause + " (" + strings.TrimRight(strings.TrimSuffix(msg, cause), ": ") + ")"
}

// footer is the key help, or the input line.
func (a App) footer() string {
	if a.prompt.Active() {
		return ui.Footer(a.prompt.View(), a.styles, a.width)
	}
	hints := a.keys.listHelp()
	switch a.screen {
	case screenLadder:
		hints = a.keys.ladderHelp()
	case screenPeek:
		hints = a.keys.peekHelp()
	case screenScheduled:
		hints = a.keys.scheduledHelp()
	}
	return ui.Footer(ui.KeyHints(hints, a.styles, a.width-2), a.styles, a.width)
}

// headerState gathers the header's content.
func (a App) headerState() ui.HeaderState {
	label := a.brokerLabel
	if a.context != "" {
		label = a.context + " · " + label
	}
	h := ui.HeaderState{
		Broker: label, Vhost: a.vhost, ReadOnly: a.readOnly,
		Refreshed: a.refreshed, Every: a.loop.interval,
		Busy: a.busy, Result: a.result,
		Crumbs: []string{"ladders"},
	}
	if h.Busy == "" {
		h.Busy = a.sched.Status() // a scan or an action on scheduled messages
	}
	if v := a.overview.RabbitMQVersion; v != "" {
		h.Version = "RabbitMQ " + v
	}
	h.AMQP = a.amqp.view(a.now(), a.loop.err, a.loaded)
	h.Refresh = a.refreshView()
	if a.screen == screenPeek {
		if a.peek.Back() == screenLadder {
			h.Crumbs = append(h.Crumbs, a.ladder.Found().Ladder.Name)
		}
		h.Crumbs = append(h.Crumbs, "peek "+a.peek.Queue())
	}
	if a.screen == screenScheduled {
		h.Crumbs = append(h.Crumbs, a.ladder.Found().Ladder.Name, "scheduled")
	}
	if a.screen == screenLadder {
		h.Crumbs = append(h.Crumbs, a.ladder.Found().Ladder.Name)
		if p := a.ladder.Panel(); p != "" {
			h.Crumbs = append(h.Crumbs, p)
		}
		if tr, ok := a.ladder.Trace(); ok {
			h.Chips = append(h.Chips, "trace "+topology.FormatSpan(tr.Requested))
		}
	}
	if f := a.currentFilter(); f != "" {
		h.Chips = append(h.Chips, "/"+f)
	}
	return h
}

// refreshView describes the refresh loop when it is not simply fine. A
// failure shows here only when the connection slot does not already say
// that the management API is unreachable.
func (a App) refreshView() ui.Conn {
	now := a.now()
	switch {
	case a.loop.pending != nil && now.Sub(a.loop.pending.started) > a.loop.interval:
		wait := topology.FormatAge(now.Sub(a.loop.pending.started))
		return ui.Conn{Kind: ui.ConnWaiting, Text: "waiting for broker " + wait, Short: "waiting " + wait}
	case a.loop.err != nil && a.amqp.conn != nil:
		return ui.Conn{Kind: ui.ConnDown, Text: "stale since " + a.refreshed.Format("15:04:05"), Short: "stale"}
	}
	return ui.Conn{}
}
