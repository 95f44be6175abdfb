package model

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// maxLog bounds the command log: a console left open for a week keeps
// the last operations, not all of them.
const maxLog = 200

// commandLog remembers what the console sent to the broker: every
// operation that changes it (publish, purge) and every connection it opens
// (:ctx), with the exact parameters and the outcome, so that an operator
// can say precisely what was done. Oldest first; ids are never reused.
type commandLog struct {
	entries []ui.LogEntry
	ids     []int
	next    int
}

// Add records an operation as sent and returns its id, to attach the
// outcome when it comes.
func (l *commandLog) Add(at time.Time, op string, sent ...string) int {
	l.next++
	l.entries = append(l.entries, ui.LogEntry{At: at, Op: op, Sent: sent})
	l.ids = append(l.ids, l.next)
	if len(l.entries) > maxLog {
		l.entries = append([]ui.LogEntry(nil), l.entries[len(l.entries)-maxLog:]...)
		l.ids = append([]int(nil), l.ids[len(l.ids)-maxLog:]...)
	}
	return l.next
}

// Finish records the outcome of operation id, if it is still in the log.
func (l *commandLog) Finish(id int, result string, failed bool) {
	for i := range l.ids {
		if l.ids[i] == id {
			l.entries[i].Result, l.entries[i].Failed = result, failed
			return
		}
	}
}

// Entries are the operations logged, oldest first.
func (l commandLog) Entries() []ui.LogEntry { return l.entries }

// loggedMsg carries a reply to a logged operation: the outcome goes into
// the log, then the reply is handled as usual.
type loggedMsg struct {
	id  int
	msg tea.Msg
}

// logged wraps the command of a logged operation.
func logged(id int, cmd tea.Cmd) tea.Cmd {
	if cmd == nil {
		return nil
	}
	return func() tea.Msg { return loggedMsg{id, cmd()} }
}

// publishSent is a publish as the command log records it: exactly as it
// goes out.
func publishSent(req publishRequest) []string {
	tr := req.trace
	sent := []string{
		"exchange=" + tr.Exchange, "routing_key=" + tr.Key, fmt.Sprintf("count=%d", req.count),
		"mandatory=true", "publisher_confirms=on", deliveryMode(req.persist),
	}
	if len(req.msgs) > 0 {
		m := req.msgs[0]
		sent = append(sent, fmt.Sprintf("body=%dB", len(m.Body)), "content_type="+m.ContentType)
		keys := make([]string, 0, len(m.Headers))
		for k := range m.Headers {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sent = append(sent, fmt.Sprintf("header %s=%v", k, m.Headers[k]))
		}
	}
	return append(sent, fmt.Sprintf("(delay %s → %s)", topology.FormatSpan(tr.Delay), tr.Target))
}

func deliveryMode(persistent bool) string {
	if persistent {
		return "delivery_mode=2"
	}
	return "delivery_mode=1"
}

// purgeSent is a purge as the command log records it: its queues, in the
// order they are purged.
func purgeSent(p ops.PurgePlan) []string {
	sent := make([]string, 0, len(p.Queues))
	for _, q := range p.Queues {
		sent = append(sent, "queue="+q.Queue)
	}
	return sent
}

// logResult words a logged reply for the log.
func logResult(msg tea.Msg) (string, bool) {
	switch m := msg.(type) {
	case publishedMsg:
		r := publishResult(m)
		return r.Text, r.Kind == ui.ResultError || r.Kind == ui.ResultWarn
	case purgedMsg:
		r := purgeResult(m)
		return r.Text, r.Kind == ui.ResultError || r.Kind == ui.ResultWarn
	case peekedMsg:
		r := peekResult(m)
		return r.Text, r.Kind == ui.ResultError
	case replayDoneMsg:
		r := replayResult(m)
		return r.Text, r.Kind == ui.ResultError
	case scanDoneMsg:
		if m.err != nil {
			return m.err.Error(), true
		}
		return fmt.Sprintf("read %d, %d matched", m.res.Seen, m.res.Matched), false
	case actionDoneMsg:
		r := actionResult(m)
		return r.Text, r.Kind == ui.ResultError
	case contextMsg:
		if m.err != nil {
			return m.err.Error(), true
		}
		return "connected: " + m.b.BrokerLabel + " · vhost " + m.b.Vhost, false
	}
	return "done", false
}

// Inspector is what the console reads the broker through: the overview
// and vhosts, whole vhosts, and ladders and queues by name (what a lookup
// reads, ops.ScopedInspector).
type Inspector interface {
	broker.Inspector
	broker.LadderInspector
}

// Backends are the broker clients of one context: what the console reads
// from, publishes and purges through, and watches.
type Backends struct {
	Inspector Inspector
	// Reach is how far the console's refreshes read: the ladders on
	// screen alone (ops.ReachScoped, the zero value), or the whole vhost
	// (ops.ReachVhost, for an inspector whose reads by name are not the
	// broker's).
	Reach     ops.Reach
	Publisher broker.Publisher
	Purger    broker.Purger
	// Peeker reads messages without removing them and Mover moves them
	// (peek and replay); nil switches either off. Limits reads a quorum
	// queue's peek facts (delivery limit, delayed retry) before a peek;
	// nil leaves them unknown.
	Peeker Peeker
	Mover  Mover
	Limits PeekFacter
	// Scheduler scans and acts on scheduled messages; nil switches the
	// scheduled view off.
	Scheduler Scheduler
	// Conn is the AMQP connection to watch; nil shows the management
	// API's health instead.
	Conn broker.StateWatcher
	// Vhost is the vhost to show ("/" when empty).
	Vhost string
	// BrokerLabel names the broker in the header, e.g.
	// "guest@127.0.0.1:5672". It must not contain a password.
	BrokerLabel string
	// ReadOnly switches off publishing and purging, visibly.
	ReadOnly bool
	// Close releases the clients when the console leaves them (quits or
	// switches context); nil when there is nothing to release.
	Close func()
}

// use points the console at b's clients.
func (a *App) use(b Backends) {
	a.insp, a.pub, a.purger, a.amqp.conn, a.closeBackends = b.Inspector, b.Publisher, b.Purger, b.Conn, b.Close
	a.loop.insp = b.Inspector
	a.peeker, a.mover, a.limits, a.scheduler = b.Peeker, b.Mover, b.Limits, b.Scheduler
	a.vhost, a.reach = b.Vhost, b.Reach
	if a.vhost == "" {
		a.vhost = "/"
	}
	a.brokerLabel, a.readOnly = b.BrokerLabel, b.ReadOnly
	a.keys = defaultKeyMap(b.ReadOnly)
}

// connectTimeout bounds opening a context's clients.
const connectTimeout = 20 * time.Second

// contextMsg is the outcome of opening a context's clients.
type contextMsg struct {
	name string
	b    Backends
	err  error
}

// connectContext opens a context's clients off the UI loop.
func connectContext(connect func(context.Context, string) (Backends, error), name string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		defer cancel()
		b, err := connect(ctx, name)
		return contextMsg{name: name, b: b, err: err}
	}
}

// ctxCommand is `:ctx` (list the contexts) and `:ctx NAME` (switch).
func (a App) ctxCommand(args []string) (App, tea.Cmd) {
	if len(a.contexts) == 0 || a.connect == nil {
		return a.fail("no contexts: name brokers in the config file (rungs config path shows where)")
	}
	if len(args) == 0 {
		var names []string
		for _, n := range a.contexts {
			if n == a.context {
				n = "*" + n
			}
			names = append(names, n)
		}
		a.result = ui.Result{Kind: ui.ResultInfo, Text: "contexts: " + strings.Join(names, " · ") + " (:ctx NAME switches)"}
		return a, nil
	}
	if len(args) > 1 {
		return a.fail("usage: :ctx [NAME]")
	}
	name := args[0]
	known := false
	for _, n := range a.contexts {
		known = known || n == name
	}
	if !known {
		return a.fail(fmt.Sprintf("no context %q (known: %s)", name, strings.Join(a.contexts, ", ")))
	}
	a.busy = "connecting to " + name
	id := a.log.Add(a.now(), "connect", "context="+name)
	return a, logged(id, connectContext(a.connect, name))
}

// switchContext replaces the broker clients with a context's and starts
// over: the old clients are closed, the old refresh loop dies (its
// generation is past), and the ladders are read afresh.
func (a App) switchContext(m contextMsg) (App, tea.Cmd) {
	a.busy = ""
	if m.err != nil {
		a.result = ui.Result{Kind: ui.ResultError, Text: fmt.Sprintf("context %s: %v; still on %s", m.name, m.err, a.brokerLabel)}
		return a, nil
	}
	if a.closeBackends != nil {
		a.closeBackends()
	}
	b := m.b
	a.use(b)
	a.context = m.name
	a.overview, a.loaded, a.loop.err, a.loop.pending = broker.Overview{}, false, nil, nil
	a.screen, a.dialog = screenList, nil
	a.list = newLadderList(a.vhost, a.styles, a.keys.nav)
	a.ladder = ladderView{}
	a.peek = peekView{}
	a.loop.obs, a.found = newObserver(a.vhost, a.reach, a.loop.interval), nil // after the screens: it watches the list's scope
	a.loop.gen++
	a.loop.whyTried = "" // the new broker's unroutable queues are unread
	a.result = ui.Result{Kind: ui.ResultOK, Text: "context " + m.name + ": " + b.BrokerLabel + " · vhost " + a.vhost}
	a.resize()
	cmds := []tea.Cmd{a.loop.start(a.loop.obs.Next()), fetchOverview(a.insp, a.loop.timeout), a.loop.poll()}
	if a.amqp.conn != nil {
		a.amqp.state = a.amqp.conn.State()
		cmds = append(cmds, watchConn(a.amqp.conn.Changes()))
	}
	return a, tea.Batch(cmds...)
}

// Close releases the clients of the context the console ended on; the
// program calls it after Run.
func (a App) Close() {
	if a.closeBackends != nil {
		a.closeBackends()
	}
}
