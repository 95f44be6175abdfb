package model

import (
	"context"
	"errors"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// versionReader reads the broker's release (broker.Management does), for
// a view opened before the overview came.
type versionReader interface {
	Version(ctx context.Context) (topology.Version, error)
}

// retryStatser reads the statistics of queues already known to be under
// delayed retry, one request each (broker.Management does): the
// exporter's scrape between listings, and this view's between the reads
// the operator asks for.
type retryStatser interface {
	RetryStats(ctx context.Context, vhost string, qs []topology.RetryQueue) ([]topology.RetryQueue, error)
}

// retryView shows what RabbitMQ 4.3's delayed retry holds across the
// vhost's quorum queues, read as status and discover --delays read it
// (ops.ReadRetry). That read lists the vhost's queues, so it is made when
// the view opens and when the operator asks (r); while the view is open,
// only the held counts of the queues found are read again, each refresh
// interval, as the exporter does between listings. Before 4.3 it reads
// nothing and says the release has none.
type retryView struct {
	frame
	src   sideSource
	keys  sideKeys
	ver   topology.Version
	seq   int
	state ui.RetryState
}

// retryReadMsg is a reading of the vhost's delayed retry; full says the
// queues were listed (not only their counts read again).
type retryReadMsg struct {
	ver  topology.Version
	hold health.RetryHold
	full bool
	err  error
	at   time.Time
}

func newRetryView(src sideSource, st ui.Styles) retryView {
	v := retryView{frame: frame{st: st}, src: src, keys: defaultSideKeys(),
		state: ui.RetryState{Vhost: src.vhost}}
	v.ver, _ = topology.ParseVersion(src.version)
	if v.ver.Known() {
		v.state.Version = v.ver.String()
		v.state.Unsupported = !v.ver.QuorumDelayedRetry()
	}
	if _, ok := src.insp.(retryStatser); ok {
		v.state.Every = src.every
	}
	return v
}

// read lists the queues under delayed retry (full), or reads again the
// counts of those found.
func (v retryView) read(full bool) tea.Cmd {
	if v.state.Unsupported {
		return nil
	}
	src, ver, qs := v.src, v.ver, v.state.Hold.Queues
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), src.timeout)
		defer cancel()
		if !ver.Known() {
			vr, ok := src.insp.(versionReader)
			if !ok {
				return retryReadMsg{full: full, err: errors.New("the broker's release is not known yet"), at: src.now()}
			}
			var err error
			if ver, err = vr.Version(ctx); err != nil {
				return retryReadMsg{full: full, err: err, at: src.now()}
			}
		}
		if !ver.QuorumDelayedRetry() {
			return retryReadMsg{ver: ver, full: full, at: src.now()}
		}
		if !full {
			s, ok := src.insp.(retryStatser)
			if !ok {
				return nil
			}
			got, err := s.RetryStats(ctx, src.vhost, qs)
			return retryReadMsg{ver: ver, hold: health.NewRetryHold(got, true), err: err, at: src.now()}
		}
		r, ok := src.insp.(ops.RetryReader)
		if !ok {
			return retryReadMsg{ver: ver, full: true, err: errors.New("reading delayed retry needs the management API"), at: src.now()}
		}
		h, err := ops.ReadRetry(ctx, r, src.vhost, ver)
		return retryReadMsg{ver: ver, hold: h, full: true, err: err, at: src.now()}
	}
}

func (v retryView) Update(msg tea.Msg) (dialog, tea.Cmd, outcome) {
	switch msg := msg.(type) {
	case retryReadMsg:
		if msg.ver.Known() {
			v.ver = msg.ver
			v.state.Version = msg.ver.String()
			v.state.Unsupported = !msg.ver.QuorumDelayedRetry()
		}
		v.state.Read, v.state.At, v.state.Err = true, msg.at, ""
		if msg.err != nil {
			v.state.Err = broker.Redact(msg.err.Error())
		} else if !v.state.Unsupported {
			v.state.Hold = msg.hold
			v.state.Findings = health.RetryFindings(msg.hold, v.ver)
		}
		if v.state.Unsupported || v.state.Every <= 0 || len(v.state.Hold.Queues) == 0 {
			return v, nil, nil
		}
		v.seq++
		seq := v.seq
		return v, tea.Tick(v.state.Every, func(time.Time) tea.Msg { return sideTickMsg{sideRetry, seq} }), nil
	case sideTickMsg:
		if msg.kind != sideRetry || msg.seq != v.seq {
			return v, nil, nil
		}
		return v, v.read(false), nil
	case tea.KeyPressMsg:
		switch {
		case key.Matches(msg, v.keys.Close):
			return v, nil, closed{}
		case key.Matches(msg, v.keys.Refresh):
			v.seq++ // the loop restarts from this reading
			return v, v.read(true), nil
		}
	}
	return v, nil, nil
}

func (v retryView) View() string {
	w := min(v.w, 110)
	k := v.keys
	k.Refresh.SetEnabled(!v.state.Unsupported)
	s := v.state
	s.Hints = ui.KeyHints([]key.Binding{k.Refresh, k.Close}, v.st, w-v.st.Dialog.GetHorizontalFrameSize())
	return ui.RetryOverlay(s, v.st, w, v.h)
}

func (v retryView) WithFrame(f frame) dialog {
	v.frame = f
	return v
}
