package model

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// connMsg is a change of the AMQP connection's state. from is the channel
// it came on: after a :ctx switch, the old connection's last words are
// told from the new one's by it.
type connMsg struct {
	state broker.ConnState
	from  <-chan broker.ConnState
}

// connClosedMsg says the watcher's channel closed: nothing more will come.
type connClosedMsg struct{}

// watchConn waits for the next connection state. It is re-armed after each
// one; the watcher only ever keeps the newest state, so a busy console
// never blocks the connection.
func watchConn(ch <-chan broker.ConnState) tea.Cmd {
	return func() tea.Msg {
		s, ok := <-ch
		if !ok {
			return connClosedMsg{}
		}
		return connMsg{s, ch}
	}
}

// clockMsg ticks once a second while a countdown is on screen.
type clockMsg struct{}

func tickClock() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return clockMsg{} })
}

// needClock reports whether anything on screen changes by itself.
func (a App) needClock() bool {
	return a.conn != nil && a.connState.Status == broker.Reconnecting ||
		a.loop.slow(a.now())
}

// ensureClock starts the clock if it is needed and not running.
func (a *App) ensureClock() tea.Cmd {
	if a.clockOn || !a.needClock() {
		return nil
	}
	a.clockOn = true
	return tickClock()
}

func (a App) updateConn(msg tea.Msg) (App, tea.Cmd) {
	switch msg := msg.(type) {
	case connMsg:
		if a.conn == nil || msg.from != a.conn.Changes() {
			return a, nil // a connection the console has left
		}
		a.connState = msg.state
		return a, tea.Batch(watchConn(a.conn.Changes()), a.ensureClock())
	case clockMsg:
		if !a.needClock() {
			a.clockOn = false
			return a, nil
		}
		return a, tickClock()
	}
	return a, nil
}

// connView words the AMQP connection for the header. Without a watched
// connection, the management API's health stands in.
func (a App) connView() ui.Conn {
	if a.conn == nil {
		switch {
		case a.loop.err != nil:
			return ui.Conn{Kind: ui.ConnDown, Text: "unreachable since " + a.loop.err.at.Format("15:04:05"), Short: "unreachable"}
		case a.loaded:
			return ui.Conn{Kind: ui.ConnUp, Text: "connected"}
		}
		return ui.Conn{Kind: ui.ConnWaiting, Text: "connecting"}
	}
	s := a.connState
	switch s.Status {
	case broker.Connected:
		return ui.Conn{Kind: ui.ConnUp, Text: "connected"}
	case broker.Connecting:
		return ui.Conn{Kind: ui.ConnWaiting, Text: "connecting"}
	case broker.Reconnecting:
		when := "now"
		if wait := s.NextAttempt.Sub(a.now()); wait > 0 {
			// Round up: "in 0s" would read as a reconnect that never comes.
			when = "in " + topology.FormatAge((wait + time.Second - 1).Truncate(time.Second))
		}
		text := "reconnecting " + when
		if s.Attempt > 0 {
			text += fmt.Sprintf(" (attempt %d)", s.Attempt+1)
		}
		return ui.Conn{Kind: ui.ConnWaiting, Text: text, Short: "retry " + when}
	case broker.Failed:
		text := "AMQP failed"
		if s.Err != nil {
			text += ": " + s.Err.Error()
		}
		return ui.Conn{Kind: ui.ConnDown, Text: text, Short: "AMQP failed"}
	case broker.Closed:
		return ui.Conn{Kind: ui.ConnNone, Text: "closed"}
	}
	return ui.Conn{}
}
