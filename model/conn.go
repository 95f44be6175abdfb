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

// amqpWatch follows the AMQP connection's state and runs a one-second
// clock only while something on screen counts by itself (a reconnect
// countdown, a slow request).
type amqpWatch struct {
	conn    broker.StateWatcher
	state   broker.ConnState
	clockOn bool
}

// needClock reports whether anything on screen changes by itself; slow
// says a refresh is taking longer than its interval.
func (w amqpWatch) needClock(slow bool) bool {
	return w.conn != nil && w.state.Status == broker.Reconnecting || slow
}

// ensureClock starts the clock if it is needed and not running.
func (w *amqpWatch) ensureClock(slow bool) tea.Cmd {
	if w.clockOn || !w.needClock(slow) {
		return nil
	}
	w.clockOn = true
	return tickClock()
}

// update takes a change of the connection's state or a tick of the clock.
func (w *amqpWatch) update(msg tea.Msg, slow bool) tea.Cmd {
	switch msg := msg.(type) {
	case connMsg:
		if w.conn == nil || msg.from != w.conn.Changes() {
			return nil // a connection the console has left
		}
		w.state = msg.state
		return tea.Batch(watchConn(w.conn.Changes()), w.ensureClock(slow))
	case clockMsg:
		if !w.needClock(slow) {
			w.clockOn = false
			return nil
		}
		return tickClock()
	}
	return nil
}

// view words the AMQP connection for the header. Without a watched
// connection, the management API's health stands in: failed is the last
// refresh error, loaded whether one has succeeded.
func (w amqpWatch) view(now time.Time, failed *fetchFailure, loaded bool) ui.Conn {
	if w.conn == nil {
		switch {
		case failed != nil:
			return ui.Conn{Kind: ui.ConnDown, Text: "unreachable since " + failed.at.Format("15:04:05"), Short: "unreachable"}
		case loaded:
			return ui.Conn{Kind: ui.ConnUp, Text: "connected"}
		}
		return ui.Conn{Kind: ui.ConnWaiting, Text: "connecting"}
	}
	s := w.state
	switch s.Status {
	case broker.Connected:
		return ui.Conn{Kind: ui.ConnUp, Text: "connected"}
	case broker.Connecting:
		return ui.Conn{Kind: ui.ConnWaiting, Text: "connecting"}
	case broker.Reconnecting:
		when := "now"
		if wait := s.NextAttempt.Sub(now); wait > 0 {
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
