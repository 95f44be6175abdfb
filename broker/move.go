package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// Defaults for MoveOptions.
const (
	DefaultMoveWindow   = 500
	DefaultMaxHeld      = 500
	DefaultMoveProgress = 250 * time.Millisecond
	// moveIdle is how long the source must stay quiet before Move asks
	// the broker whether it is empty.
	moveIdle = 100 * time.Millisecond
	// moveGrace is how long a cancelled Move still waits for the confirms
	// of messages already republished, so that they are acknowledged on
	// the source rather than left to be duplicated.
	moveGrace = 5 * time.Second
)

// MoveOptions describe a Move.
type MoveOptions struct {
	// Source is the queue messages are taken from.
	Source string
	// Route picks each message's destination.
	Route Router
	// Park, if set, is the queue unroutable messages go to (with the reason
	// in x-rungs-reason) instead of staying on the source. Move declares it
	// (durable, of ParkType) if it is missing.
	Park     string
	ParkType topology.QueueType
	// Limit stops after this many messages were taken to be moved (0: no
	// limit, stop when the source is empty).
	Limit int
	// Rate caps republishing at this many messages a second (0: no cap).
	Rate float64
	// Filter, if set, picks the messages to move; the others stay.
	Filter func(d Delivery) bool
	// Stamp, if set, returns headers to add to the copy of d that takes
	// route r (a copy parked after the broker returned it gets none).
	Stamp func(d Delivery, r Route) map[string]any
	// Window is how many republished messages may await their confirm at
	// once (DefaultMoveWindow).
	Window int
	// MaxHeld is how many messages Move may keep unacknowledged because they
	// stay on the source (filtered out, unroutable, no route) before it
	// stops: they occupy prefetch, and the source's next messages cannot
	// be reached past them (DefaultMaxHeld).
	MaxHeld int
	// HoldAll lifts MaxHeld and the prefetch: every message the filter
	// leaves is held until the run ends, so that one pass can act on
	// messages anywhere in a queue of any depth (rungs scheduled). The
	// consumers grow a window at a time (holder), so the client buffers a
	// window, not the queue.
	HoldAll bool
	// Depth is the source's depth when a HoldAll pass began. Until it has
	// read that many, a pass that finds nothing ready waits for deliveries
	// to stop before it calls the source empty (see Scan, which does the
	// same and says why).
	Depth int
	// Take, if > 0, stops taking after this many deliveries: the depth a
	// pass over the whole queue planned for, so that messages arriving
	// behind it cannot keep it going.
	Take int
	// Progress, if set, is called from Move's goroutine at most every
	// ProgressEvery and once at the end (Done). It must not block.
	Progress      func(MoveProgress)
	ProgressEvery time.Duration
}

// MoveProgress counts a Move's messages.
type MoveProgress struct {
	// Moved were republished, confirmed by the broker and then removed from
	// the source.
	Moved int
	// Parked were unroutable and went to the parking queue instead.
	Parked int
	// Kept stayed on the source: unroutable without a parking queue,
	// refused by the broker, or without a route (see Reasons).
	Kept int
	// Skipped did not match the filter and stayed on the source.
	Skipped int
	// Dropped were acknowledged without a copy: their route said Drop.
	Dropped int
	// Unknown were republished, but the connection or channel failed
	// before their confirm, or before the broker was known to have
	// processed the acknowledgement removing their source copy: that copy
	// may have gone back to the queue, so they may now be both at the
	// target and on the source. Never lost; possibly duplicated. It bounds
	// the duplicates a Move can make.
	Unknown int
	// Reconnects counts connections lost and resumed. Kept and Skipped
	// count the current connection only: the broker returns every held
	// message to the source when a connection drops.
	Reconnects int
	// Reasons groups why messages were parked or kept.
	Reasons map[string]int
	// SourceReady is the source's ready count when last asked; -1 unknown.
	SourceReady int
	// OthersHolding is how many consumers besides this Move's own the
	// source had when it read empty: what they hold unacknowledged is not
	// ready, so the Move cannot see it, and it returns to the source only
	// when they close (a killed run's connection, until the broker notices
	// it is gone).
	OthersHolding int
	Elapsed       time.Duration
	// Stopped says why the Move ended, once Done.
	Stopped string
	Done    bool
}

// Rate is how many messages a second were moved or parked so far.
func (p MoveProgress) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Moved+p.Parked) / p.Elapsed.Seconds()
}

// Why a Move stopped.
const (
	StopEmpty     = "the source is empty"
	StopTaken     = "every message the source held was taken"
	StopLimit     = "the limit was reached"
	StopCancelled = "cancelled"
	StopHeld      = "too many messages stay on the source"
	StopRefused   = "the broker refused a message"
	StopGone      = "the source queue went away"
	StopLoop      = "the route leads back into the source"
	StopFailed    = "failed"
)

// ErrHeldLimit stops a Move whose held messages fill its prefetch.
var ErrHeldLimit = errors.New("too many messages stay on the source")

// errLost marks a run that ended because the connection dropped.
var errLost = errors.New("connection lost")

// Move takes messages off a queue and republishes each where o.Route says,
// until the source is empty or o.Limit is reached. It is at-least-once and
// never loses a message:
//
//   - Each source message is acknowledged only after its republished copy
//     was confirmed by the broker. Confirms are pipelined (o.Window in
//     flight), not one round trip per message.
//   - Republishing is mandatory: an unroutable message is returned by the
//     broker, and then goes to o.Park with its reason, or stays on the
//     source. Messages without a route, refused by the broker (nack) or
//     filtered out stay on the source too, in their order.
//   - If the connection drops, the broker puts every unacknowledged source
//     message back; those whose copy was in flight are counted Unknown
//     (possible duplicates), and Move resumes on the next connection.
//
// Republished messages keep their body, properties and headers, and gain
// x-rungs-replayed (a count), x-rungs-replayed-from, x-rungs-replayed-at and
// x-rungs-replay-id (unique per copy, so a duplicate is recognisable). The
// source queue's x-delivery-count is dropped; x-death is kept unless the
// route saves it aside.
func (c *Conn) Move(ctx context.Context, o MoveOptions) (MoveProgress, error) {
	if c.ep.readOnly {
		return MoveProgress{SourceReady: -1}, ErrReadOnly
	}
	if err := o.normalize(); err != nil {
		return MoveProgress{SourceReady: -1}, err
	}
	m := &mover{c: c, o: o, run: runID(), start: time.Now(), exchanges: map[string]error{},
		p: MoveProgress{SourceReady: -1, Reasons: map[string]int{}}}
	if o.Rate > 0 {
		m.bucket = newBucket(o.Rate, m.start)
	}
	if o.Park != "" {
		if _, err := c.EnsureQueue(ctx, o.Park, o.ParkType); err != nil {
			return m.finish(StopFailed), fmt.Errorf("move: parking queue: %w", err)
		}
	}
	for {
		m.stopped = ""
		err := m.runOnce(ctx)
		switch {
		case errors.Is(err, errLost) && ctx.Err() == nil:
			m.p.Reconnects++
			m.p.Kept, m.p.Skipped = 0, 0
			continue
		case ctx.Err() != nil:
			m.stopped = StopCancelled
			return m.finish(StopCancelled), ctx.Err()
		case err != nil:
			return m.finish(StopFailed), c.ep.redact(fmt.Errorf("move from %q: %w", o.Source, err))
		}
		p := m.finish(m.stopped)
		switch m.stopped {
		case StopHeld:
			return p, fmt.Errorf("move from %q: %w (%d held, the most one run keeps; raise MaxHeld or narrow the filter)", o.Source, ErrHeldLimit, o.MaxHeld)
		case StopRefused:
			return p, fmt.Errorf("move from %q: stopped: the broker refused a republished message (a queue may be full with reject-publish overflow); it stays on the source", o.Source)
		case StopGone:
			return p, fmt.Errorf("move from %q: the source queue was deleted", o.Source)
		case StopLoop:
			return p, fmt.Errorf("move from %q: stopped: republished copies came back into the source (the route loops); they stay there, marked x-rungs-replayed", o.Source)
		}
		return p, nil
	}
}

func (o *MoveOptions) normalize() error {
	switch {
	case o.Source == "":
		return errors.New("move: no source queue")
	case o.Route == nil:
		return errors.New("move: no route")
	case o.Park != "" && o.Park == o.Source:
		return fmt.Errorf("move: the parking queue cannot be the source %q", o.Source)
	case o.Limit < 0 || o.Rate < 0 || o.Window < 0 || o.MaxHeld < 0 || o.Take < 0:
		return errors.New("move: limit, rate, window and held limit cannot be negative")
	}
	if o.Window == 0 {
		o.Window = DefaultMoveWindow
	}
	if o.MaxHeld == 0 {
		o.MaxHeld = DefaultMaxHeld
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = DefaultMoveProgress
	}
	if o.ParkType == "" {
		o.ParkType = topology.Classic
	}
	return nil
}

// MovePreview is what Move would do with one message.
type MovePreview struct {
	Message PeekedMessage
	Route   Route
	// Skipped: the filter leaves it; Err: it has no route.
	Skipped bool
	Err     error
}

// PreviewMove peeks at up to n messages at the head of the source and says
// where each would go (a dry run). Peeking has Peek's side effects.
func (c *Conn) PreviewMove(ctx context.Context, o MoveOptions, n int) ([]MovePreview, PeekResult, error) {
	if err := o.normalize(); err != nil {
		return nil, PeekResult{}, err
	}
	res, err := c.Peek(ctx, o.Source, n)
	if err != nil {
		return nil, res, err
	}
	out := make([]MovePreview, 0, len(res.Messages))
	for _, pm := range res.Messages {
		p := MovePreview{Message: pm}
		switch {
		case o.Filter != nil && !o.Filter(pm.Delivery):
			p.Skipped = true
		default:
			p.Route, p.Err = o.Route(pm.Delivery)
			if p.Err == nil && p.Route.Exchange == "" && p.Route.RoutingKey == o.Source {
				p.Err = errors.New("the route leads back into the source queue")
			}
		}
		out = append(out, p)
	}
	return out, res, nil
}
