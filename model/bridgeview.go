package model

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// sideSource is what the bridge and delayed-retry views read with: the
// App's inspector and vhost, the release the header shows ("" before the
// overview came), and the App's refresh interval and timeout.
type sideSource struct {
	insp    broker.Inspector
	vhost   string
	reach   ops.Reach
	version string
	every   time.Duration
	timeout time.Duration
	now     func() time.Time
}

// sideKind names a view over the ladders' screen: the bridges or the
// delayed retry.
type sideKind int

const (
	sideBridges sideKind = iota
	sideRetry
)

// newSide builds the view kind; init is its first read.
func newSide(kind sideKind, src sideSource, st ui.Styles) (dialog, tea.Cmd) {
	if kind == sideRetry {
		v := newRetryView(src, st)
		return v, v.read(true)
	}
	v := newBridgeView(src, st)
	return v, v.read()
}

// sideKeys drive the bridge and delayed-retry views.
type sideKeys struct {
	Up, Down, Peek, Refresh, Close key.Binding
}

func defaultSideKeys() sideKeys {
	return sideKeys{
		Up:      key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/↓", "bridge")),
		Down:    key.NewBinding(key.WithKeys("down", "j")),
		Peek:    key.NewBinding(key.WithKeys("v"), key.WithHelp("v", "peek parked")),
		Refresh: key.NewBinding(key.WithKeys("r", "ctrl+r"), key.WithHelp("r", "read again")),
		Close:   key.NewBinding(key.WithKeys("esc", "q", "B", "D"), key.WithHelp("esc", "close")),
	}
}

// sideTickMsg asks a side view to read again. seq ties it to the view's
// current loop: a read the operator asked for starts a new loop, and the
// older one's ticks are dropped, as the App's pollMsg generations are.
type sideTickMsg struct {
	kind sideKind
	seq  int
}

// peekAsked asks the App to peek at a bridge's parked queue, through the
// console's peek (its gate, its log), where each message shows its reason.
type peekAsked struct{ queue string }

// bridgeView shows the vhost's bridges (rungs bridge) as rungs status
// does: ops.ReadBridges, one filtered listing of their queues, read when
// it opens and every refresh interval while it is open.
type bridgeView struct {
	frame
	src   sideSource
	keys  sideKeys
	seq   int
	state ui.BridgeState
}

// bridgesReadMsg is a reading of the vhost's bridges.
type bridgesReadMsg struct {
	bs  []topology.Bridge
	err error
	at  time.Time
}

func newBridgeView(src sideSource, st ui.Styles) bridgeView {
	return bridgeView{frame: frame{st: st}, src: src, keys: defaultSideKeys(),
		state: ui.BridgeState{Vhost: src.vhost, Every: src.every}}
}

// read reads the bridges once.
func (v bridgeView) read() tea.Cmd {
	src := v.src
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), src.timeout)
		defer cancel()
		bs, err := ops.ReadBridges(ctx, src.insp, src.vhost, src.reach)
		return bridgesReadMsg{bs: bs, err: err, at: src.now()}
	}
}

func (v bridgeView) Update(msg tea.Msg) (dialog, tea.Cmd, outcome) {
	switch msg := msg.(type) {
	case bridgesReadMsg:
		v.state.Read, v.state.At = true, msg.at
		v.state.Err = ""
		if msg.err != nil {
			v.state.Err = broker.Redact(msg.err.Error())
		} else {
			v.state.Bridges = msg.bs
		}
		v.state.Selected = min(v.state.Selected, max(0, len(v.state.Bridges)-1))
		v.seq++
		seq := v.seq
		return v, tea.Tick(v.src.every, func(time.Time) tea.Msg { return sideTickMsg{sideBridges, seq} }), nil
	case sideTickMsg:
		if msg.kind != sideBridges || msg.seq != v.seq {
			return v, nil, nil
		}
		return v, v.read(), nil
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, v.keys.Close):
			return v, nil, closed{}
		case key.Matches(msg, v.keys.Refresh):
			return v, v.read(), nil
		case key.Matches(msg, v.keys.Up):
			v.state.Selected = max(0, v.state.Selected-1)
		case key.Matches(msg, v.keys.Down):
			v.state.Selected = min(max(0, len(v.state.Bridges)-1), v.state.Selected+1)
		case key.Matches(msg, v.keys.Peek):
			if b, ok := v.selected(); ok && parked(b) > 0 {
				return v, nil, peekAsked{b.Parked.Name}
			}
		}
	}
	return v, nil, nil
}

// parked is how many messages b parked, 0 when its parked queue is gone.
func parked(b topology.Bridge) int64 {
	if !b.HasParked {
		return 0
	}
	return b.Parked.Stats.Ready + b.Parked.Stats.Unacked
}

// selected is the bridge under the cursor.
func (v bridgeView) selected() (topology.Bridge, bool) {
	if v.state.Selected < 0 || v.state.Selected >= len(v.state.Bridges) {
		return topology.Bridge{}, false
	}
	return v.state.Bridges[v.state.Selected], true
}

func (v bridgeView) View() string {
	w := min(v.w, 110)
	k := v.keys
	k.Up.SetEnabled(len(v.state.Bridges) > 1)
	b, ok := v.selected()
	k.Peek.SetEnabled(ok && parked(b) > 0)
	s := v.state
	s.Hints = ui.KeyHints([]key.Binding{k.Up, k.Peek, k.Refresh, k.Close}, v.st, w-v.st.Dialog.GetHorizontalFrameSize())
	return ui.BridgeOverlay(s, v.st, w, v.h)
}

func (v bridgeView) WithFrame(f frame) dialog {
	v.frame = f
	return v
}

// openSide opens the bridge or delayed-retry view over the screen.
func (a *App) openSide(kind sideKind) tea.Cmd {
	src := sideSource{insp: a.insp, vhost: a.vhost, reach: a.reach, version: a.overview.RabbitMQVersion,
		every: a.loop.interval, timeout: a.loop.timeout, now: a.now}
	d, init := newSide(kind, src, a.styles)
	return a.open(d, init)
}
