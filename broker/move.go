package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

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

// Route is where one message goes.
type Route struct {
	Exchange   string
	RoutingKey string
	// SaveDeath moves the message's x-death into x-rungs-x-death (and drops
	// the broker's other headers) before republishing. Set it for routes
	// into a ladder: RabbitMQ drops a message that expires into a rung its
	// x-death already names (dead-letter cycle detection).
	SaveDeath bool
	// Park, if set, sends the message to the parking queue with this
	// reason instead (without a parking queue it stays on the source).
	Park string
}

// String reads as "exchange E key K" ("default exchange" for "").
func (r Route) String() string {
	ex := strconv.Quote(r.Exchange)
	if r.Exchange == "" {
		ex = "the default exchange"
	}
	return fmt.Sprintf("%s key %q", ex, r.RoutingKey)
}

// Router picks each message's route. An error keeps the message on the
// source and becomes its reason.
type Router func(d Delivery) (Route, error)

// ToQueue routes every message straight to a queue, through the default
// exchange.
func ToQueue(queue string) Router {
	return func(Delivery) (Route, error) { return Route{RoutingKey: queue}, nil }
}

// ToLadder routes every message into a ladder with the given delay, to
// dest (a destination of the ladder, or "" for its done queue). x-death is
// saved aside (see Route.SaveDeath).
func ToLadder(l topology.Ladder, delay time.Duration, dest string) (Router, error) {
	tr, err := l.Trace(delay, dest)
	if err != nil {
		return nil, err
	}
	r := Route{Exchange: tr.Exchange, RoutingKey: tr.Key, SaveDeath: true}
	return func(Delivery) (Route, error) { return r, nil }, nil
}

// ErrNoOrigin is the reason a message without x-death (and not parked by
// the retry library) has no origin to go back to.
var ErrNoOrigin = errors.New("no origin: the message has no x-death (it was not dead-lettered) and no x-rungs-queue")

// ToOrigin routes each message back where it came from:
//
//   - A message parked by rungs (x-rungs-queue, x-rungs-parked-at: the
//     retry library, or Move's parking queue) and not dead-lettered since
//     goes back to the queue it was parked from, through the default
//     exchange.
//   - Otherwise the most recent x-death entry says which exchange and
//     routing key the message had when it entered the queue it was
//     dead-lettered from, and it is published there again. From a work
//     queue, that is the exchange and key its producer (or the ladder)
//     used, so every queue bound to them gets it again, not only the one
//     that dead-lettered it. From a ladder's done queue or a destination,
//     the exchange is the last rung's dead-letter exchange: the digits
//     left are all zeros, so it is delivered at once, not delayed again.
//     From a rung (delivery limit, overflow), it re-enters that rung and
//     waits its full TTL again: late, never early.
//
// intoLadder reports whether an exchange belongs to a ladder; routes into
// one save x-death aside (see Route.SaveDeath). It may be nil.
func ToOrigin(intoLadder func(exchange string) bool) Router {
	return func(d Delivery) (Route, error) {
		deaths, err := topology.ParseDeaths(d.Headers)
		if err != nil {
			return Route{}, err
		}
		// Parked by rungs, and not dead-lettered since: back to the queue it
		// was parked from.
		if q, ok := d.Headers[topology.HeaderQueue].(string); ok && q != "" {
			at, stamped := topology.HeaderTime(d.Headers[topology.HeaderParkedAt])
			if len(deaths) == 0 || stamped && !deaths[0].Time.After(at) {
				return Route{RoutingKey: q}, nil
			}
		}
		if len(deaths) == 0 {
			return Route{}, ErrNoOrigin
		}
		last := deaths[0]
		key := last.Queue
		if len(last.RoutingKeys) > 0 {
			key = last.RoutingKeys[0]
		}
		r := Route{Exchange: last.Exchange, RoutingKey: key}
		r.SaveDeath = r.Exchange != "" && intoLadder != nil && intoLadder(r.Exchange)
		return r, nil
	}
}

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
	Elapsed     time.Duration
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
	case o.Limit < 0 || o.Rate < 0 || o.Window < 0 || o.MaxHeld < 0:
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

// mover is one Move across connections.
type mover struct {
	c       *Conn
	o       MoveOptions
	run     string // this Move's id, the prefix of x-rungs-replay-id
	seq     int    // copies published, for x-rungs-replay-id
	start   time.Time
	p       MoveProgress
	stopped string
	bucket  *bucket
	// exchanges caches which exchanges exist (nil) or not (the reason).
	exchanges map[string]error
	lastShown time.Time
}

func runID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (m *mover) progress(done bool) MoveProgress {
	p := m.p
	p.Elapsed = time.Since(m.start)
	p.Done = done
	p.Reasons = make(map[string]int, len(m.p.Reasons))
	for k, v := range m.p.Reasons {
		p.Reasons[k] = v
	}
	if done {
		p.Stopped = m.stopped
	}
	return p
}

func (m *mover) report(force bool) {
	if m.o.Progress == nil || !force && time.Since(m.lastShown) < m.o.ProgressEvery {
		return
	}
	m.lastShown = time.Now()
	m.o.Progress(m.progress(false))
}

func (m *mover) finish(why string) MoveProgress {
	if m.stopped == "" {
		m.stopped = why
	}
	p := m.progress(true)
	if m.o.Progress != nil {
		m.o.Progress(p)
	}
	return p
}

// entry is one source message on its way.
type entry struct {
	d     amqp.Delivery
	route Route
	id    string // x-rungs-replay-id of the copy in flight
	park  bool   // the copy in flight goes to the parking queue
	// returned is the broker's reason when the copy came back unroutable.
	returned string
	// why is the reason the message is being parked.
	why string
	// stamp are the headers MoveOptions.Stamp added for its route.
	stamp map[string]any
}

// moveRun is one connection's worth of a Move.
type moveRun struct {
	m        *mover
	conn     *amqp.Connection
	src, pub *amqp.Channel
	probeCh  *amqp.Channel
	tag      string
	pending  []*entry
	inflight map[uint64]*entry
	byID     map[string]*entry
	held     int
	prefetch int
	stopping bool
	lastIn   time.Time
	probed   time.Time
	returns  <-chan amqp.Return
	// unsynced counts source acks sent since the broker was last known to
	// have processed them. basic.ack has no reply, so an ack sent just
	// before the connection drops may be lost and its message redelivered
	// and moved twice; sync bounds how many such acks there can be.
	unsynced int
	// remaining is how many more messages the limit lets this run take (0:
	// no limit, or a filter decides); acked counts source acks sent.
	// deferred are confirmed copies whose source ack waits until the
	// consumer is cancelled: each ack frees prefetch credit, and a quorum
	// queue (RabbitMQ 4.0 measured) spends it at once on a message past the
	// limit, which the run then hands back, counting a delivery against it.
	remaining, acked int
	deferred         []*entry
}

// limitReached reports whether Limit messages are moved, parked, in doubt or
// on their way, counting n more.
func (m *mover) limitReached(onTheirWay int) bool {
	return m.o.Limit > 0 && m.taken()+onTheirWay >= m.o.Limit
}

// taken counts the messages this Move has dealt with: moved, parked, in
// doubt, and kept on the source after an attempt (no route, returned,
// refused), which the limit counts too, so that a move never reaches past
// messages it could not move.
func (m *mover) taken() int {
	return m.p.Moved + m.p.Parked + m.p.Unknown + m.p.Kept
}

func (m *mover) runOnce(ctx context.Context) error {
	if m.limitReached(0) {
		m.stopped = StopLimit
		return nil
	}
	src, conn, err := m.c.channel(ctx)
	if err != nil {
		return err
	}
	r := &moveRun{m: m, conn: conn, src: src, tag: "rungs-move-" + m.run, inflight: map[uint64]*entry{}, byID: map[string]*entry{}, lastIn: time.Now()}
	defer r.close()
	if r.pub, err = conn.Channel(); err != nil {
		return r.lost(fmt.Errorf("open channel: %w", err))
	}
	// Without a filter, a limit bounds the prefetch too: a message
	// delivered and handed back unmoved counts as a delivery on a quorum
	// queue, and a delivery limit acts on that count.
	r.prefetch = m.o.Window + m.o.MaxHeld
	if m.o.Limit > 0 && m.o.Filter == nil {
		r.remaining = max(m.o.Limit-m.taken(), 1)
		r.prefetch = min(r.prefetch, r.remaining)
	}
	if err := src.Qos(r.prefetch, 0, false); err != nil {
		return r.lost(fmt.Errorf("set prefetch: %w", err))
	}
	if err := r.pub.Confirm(false); err != nil {
		return r.lost(fmt.Errorf("enable publisher confirms: %w", err))
	}
	// Room for every possible notification: amqp091 drops one that waits
	// more than 5 s for a full listener, and a dropped return would make an
	// unroutable message look delivered.
	confirms := r.pub.NotifyPublish(make(chan amqp.Confirmation, m.o.Window+1))
	r.returns = r.pub.NotifyReturn(make(chan amqp.Return, m.o.Window+1))
	pubClosed := r.pub.NotifyClose(make(chan *amqp.Error, 1))
	srcClosed := src.NotifyClose(make(chan *amqp.Error, 1))
	// Consume, not ConsumeWithContext: this goroutine cancels and closes
	// the channel itself, and a second canceller would race it.
	deliveries, err := src.Consume(m.o.Source, r.tag, false, false, false, false, nil)
	if isCode(err, amqp.NotFound) {
		return fmt.Errorf("no such queue in vhost %q", m.c.ep.vhost)
	}
	if err != nil {
		return r.lost(fmt.Errorf("consume: %w", err))
	}

	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	var wake *time.Timer
	var wakeC <-chan time.Time
	var grace <-chan time.Time
	done := ctx.Done()
	for {
		if err := r.publishPending(ctx); err != nil {
			return err
		}
		if err := r.ackDeferred(); err != nil {
			return err
		}
		if r.stopping && deliveries == nil && len(r.pending) == 0 && len(r.inflight) == 0 {
			return nil
		}
		if wait := r.bucketWait(); wait > 0 && wakeC == nil {
			wake = time.NewTimer(wait)
			wakeC = wake.C
		}
		select {
		case d, ok := <-deliveries:
			if !ok {
				deliveries = nil
				switch {
				case r.src.IsClosed():
					return r.channelClosed("consuming", nil)
				case !r.stopping:
					// The broker cancelled the consumer: the queue was
					// deleted. There is nothing left to cancel.
					r.stopping = true
					if m.stopped == "" {
						m.stopped = StopGone
					}
				}
				continue
			}
			r.lastIn = time.Now()
			r.take(d)
		case cf, ok := <-confirms:
			if !ok {
				confirms = nil
				continue
			}
			r.drainReturns()
			if err := r.settle(cf); err != nil {
				return err
			}
		case ret := <-r.returns:
			r.noteReturn(ret)
		case <-wakeC:
			wakeC = nil
		case <-tick.C:
			if err := r.sync(); err != nil {
				return err
			}
			if err := r.idle(); err != nil {
				return err
			}
			m.report(false)
		case <-done:
			done = nil
			r.stop(StopCancelled)
			r.releasePending()
			grace = time.After(moveGrace)
		case <-grace:
			m.p.Unknown += len(r.inflight)
			r.inflight = map[uint64]*entry{}
			return ctx.Err()
		case e := <-pubClosed:
			pubClosed = nil
			return r.channelClosed("publishing", e)
		case e := <-srcClosed:
			srcClosed = nil
			return r.channelClosed("consuming", e)
		}
	}
}

// sync makes sure the broker processed every source ack sent so far: a
// synchronous method on the same channel (a basic.qos that changes nothing)
// is answered only after the methods before it.
func (r *moveRun) sync() error {
	if r.unsynced == 0 || r.src.IsClosed() {
		return nil
	}
	if err := r.src.Qos(r.prefetch, 0, false); err != nil {
		return r.lost(fmt.Errorf("acknowledge on the source: %w", err))
	}
	r.unsynced = 0
	return nil
}

// close ends the run: cancelling and closing the source channel returns
// every message still unacknowledged (held, pending, left) to the queue.
// Copies still awaiting their confirm, and acks the broker may not have
// processed, become Unknown: whatever path ended the run.
func (r *moveRun) close() {
	if r.src != nil && !r.src.IsClosed() {
		_ = r.sync()
	}
	// A deferred copy is confirmed at the target while the source keeps
	// its message: it will be delivered again, a duplicate.
	r.m.p.Unknown += r.unsynced + len(r.inflight) + len(r.deferred)
	r.unsynced = 0
	r.inflight = map[uint64]*entry{}
	r.deferred = nil
	for _, ch := range []*amqp.Channel{r.probeCh, r.pub, r.src} {
		if ch != nil {
			_ = ch.Close()
		}
	}
}

// lost classifies a failure: connection gone (resume) or not.
func (r *moveRun) lost(err error) error {
	if r.conn.IsClosed() {
		return fmt.Errorf("%w: %v", errLost, err)
	}
	return err
}

func (r *moveRun) channelClosed(which string, e *amqp.Error) error {
	r.m.p.Unknown += len(r.inflight)
	r.inflight = map[uint64]*entry{}
	var cause error = errors.New("channel closed")
	if e != nil {
		cause = e
	}
	if r.conn.IsClosed() {
		return fmt.Errorf("%w: %v", errLost, cause)
	}
	return fmt.Errorf("the %s channel was closed by the broker: %w", which, cause)
}

// stop stops taking new messages: the consumer is cancelled, and what it
// still delivers is left on the source.
func (r *moveRun) stop(why string) {
	if r.stopping {
		return
	}
	r.stopping = true
	if r.m.stopped == "" {
		r.m.stopped = why
	}
	if !r.src.IsClosed() {
		_ = r.src.Cancel(r.tag, false)
	}
}

// releasePending gives up on messages not yet republished: they stay
// unacknowledged and return to the source when the channel closes.
func (r *moveRun) releasePending() {
	r.held += len(r.pending)
	r.pending = nil
}

// hold keeps a delivery unacknowledged, so that it returns to the source
// when the run ends.
func (r *moveRun) hold(reason string, skipped bool) {
	r.held++
	switch {
	case skipped:
		r.m.p.Skipped++
	case reason != "":
		r.m.p.Kept++
		r.m.p.Reasons[reason]++
		if r.m.limitReached(len(r.pending) + len(r.inflight) + len(r.deferred)) {
			r.stop(StopLimit)
		}
	}
	// Held messages occupy prefetch: once they fill it, nothing more
	// can arrive.
	if (r.held >= r.m.o.MaxHeld || r.held >= r.prefetch) && !r.stopping {
		r.stop(StopHeld)
	}
}

// take decides what to do with one delivery from the source.
func (r *moveRun) take(d amqp.Delivery) {
	m := r.m
	if r.stopping {
		r.hold("", false) // left for later; not counted
		return
	}
	if id, _ := d.Headers[topology.HeaderReplayID].(string); len(id) > len(m.run) && id[:len(m.run)+1] == m.run+"." {
		// One of this Move's own copies came back: the route loops.
		r.hold("the route leads back into the source queue", false)
		r.stop(StopLoop)
		return
	}
	pd := newDelivery(d, false)
	if m.o.Filter != nil && !m.o.Filter(pd) {
		r.hold("", true)
		return
	}
	route, err := m.o.Route(pd)
	switch {
	case err != nil:
		r.hold("no route: "+err.Error(), false)
		return
	case route.Exchange == "" && route.RoutingKey == m.o.Source:
		r.hold("the route leads back into the source queue", false)
		return
	}
	if route.Park != "" && m.o.Park == "" {
		r.hold(route.Park, false)
		return
	}
	if why := r.checkExchange(route.Exchange); why != "" {
		r.hold(why, false)
		return
	}
	e := &entry{d: d, route: route, park: route.Park != "", why: route.Park}
	if m.o.Stamp != nil {
		e.stamp = m.o.Stamp(pd, route)
	}
	r.pending = append(r.pending, e)
	if m.limitReached(len(r.pending) + len(r.inflight) + len(r.deferred)) {
		r.stop(StopLimit)
	}
}

// checkExchange makes sure an exchange exists before a copy is published
// to it: publishing to a missing one closes the channel, and every copy in
// flight would become Unknown. The answer is cached for the whole Move.
func (r *moveRun) checkExchange(name string) string {
	if name == "" {
		return ""
	}
	if err, ok := r.m.exchanges[name]; ok {
		if err != nil {
			return err.Error()
		}
		return ""
	}
	ch, err := r.probe()
	if err != nil {
		return "cannot check exchange " + strconv.Quote(name) + ": " + err.Error()
	}
	err = ch.ExchangeDeclarePassive(name, "topic", false, false, false, false, nil)
	switch {
	case isCode(err, amqp.NotFound):
		r.probeCh = nil
		r.m.exchanges[name] = fmt.Errorf("exchange %q does not exist", name)
	case err != nil:
		r.probeCh = nil
		return "cannot check exchange " + strconv.Quote(name) + ": " + err.Error()
	default:
		r.m.exchanges[name] = nil
	}
	return r.checkExchange(name)
}

// probe returns a channel for passive declarations, which a 404 closes.
func (r *moveRun) probe() (*amqp.Channel, error) {
	if r.probeCh != nil && !r.probeCh.IsClosed() {
		return r.probeCh, nil
	}
	ch, err := r.conn.Channel()
	if err != nil {
		return nil, err
	}
	r.probeCh = ch
	return ch, nil
}

// idle asks the broker, when the source has been quiet for a while and
// nothing is on its way, whether the source is empty.
func (r *moveRun) idle() error {
	if r.stopping || len(r.pending) > 0 || len(r.inflight) > 0 || time.Since(r.lastIn) < moveIdle || time.Since(r.probed) < moveIdle {
		return nil
	}
	r.probed = time.Now()
	ch, err := r.probe()
	if err != nil {
		return r.lost(err)
	}
	q, err := ch.QueueDeclarePassive(r.m.o.Source, false, false, false, false, nil)
	if isCode(err, amqp.NotFound) {
		r.probeCh = nil
		r.stop(StopGone)
		return nil
	}
	if err != nil {
		return r.lost(fmt.Errorf("check the source: %w", err))
	}
	r.m.p.SourceReady = q.Messages
	if q.Messages == 0 {
		r.stop(StopEmpty)
	}
	return nil
}

func (r *moveRun) bucketWait() time.Duration {
	if r.m.bucket == nil || len(r.pending) == 0 || len(r.inflight) >= r.m.o.Window {
		return 0
	}
	return r.m.bucket.wait(time.Now())
}

// publishPending republishes pending messages while the window and the
// rate allow.
func (r *moveRun) publishPending(ctx context.Context) error {
	m := r.m
	for len(r.pending) > 0 && len(r.inflight) < m.o.Window && ctx.Err() == nil {
		if m.bucket != nil && !m.bucket.take(time.Now()) {
			return nil
		}
		e := r.pending[0]
		r.pending[0] = nil
		r.pending = r.pending[1:]
		if err := r.publish(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

func (r *moveRun) publish(ctx context.Context, e *entry) error {
	m := r.m
	m.seq++
	e.id = m.run + "." + strconv.Itoa(m.seq)
	e.returned = ""
	msg := m.copyOf(e)
	ex, key := e.route.Exchange, e.route.RoutingKey
	if e.park {
		ex, key = "", m.o.Park
	}
	seq := r.pub.GetNextPublishSeqNo()
	if err := r.pub.PublishWithContext(ctx, ex, key, true, false, msg); err != nil {
		switch {
		case r.pub.IsClosed():
			r.held++ // not sent: back to the source with the channel
			return r.channelClosed("publishing", nil)
		case ctx.Err() != nil:
			r.held++ // the loop handles the cancellation
			return nil
		}
		// The message itself cannot be encoded (a header AMQP cannot
		// carry): keep it on the source.
		r.hold("cannot republish: "+err.Error(), false)
		return nil
	}
	r.inflight[seq] = e
	r.byID[e.id] = e
	return nil
}

// copyOf builds the republished copy: every property, the headers, plus
// rungs' replay headers.
func (m *mover) copyOf(e *entry) amqp.Publishing {
	d := e.d
	h := make(amqp.Table, len(d.Headers)+5)
	for k, v := range d.Headers {
		h[k] = v
	}
	delete(h, topology.HeaderDeliveryCount)
	if e.route.SaveDeath {
		if deaths, ok := h[topology.HeaderDeath].([]any); ok {
			saved, _ := h[topology.HeaderSavedDeath].([]any)
			h[topology.HeaderSavedDeath] = append(append([]any(nil), deaths...), saved...)
		}
		h = amqp.Table(topology.StripBrokerHeaders(h))
	}
	if !e.park || e.route.Park != "" {
		for k, v := range e.stamp {
			h[k] = fieldValue(v)
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	if e.park {
		h[topology.HeaderReason] = topology.CutReason(e.why)
		h[topology.HeaderQueue] = m.o.Source
		h[topology.HeaderParkedAt] = now
	} else {
		n, _ := topology.HeaderInt(h[topology.HeaderReplayed])
		h[topology.HeaderReplayed] = n + 1
		h[topology.HeaderReplayedFrom] = m.o.Source
		h[topology.HeaderReplayedAt] = now
	}
	h[topology.HeaderReplayID] = e.id
	p := amqp.Publishing{
		Headers: h, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding,
		DeliveryMode: d.DeliveryMode, Priority: d.Priority, CorrelationId: d.CorrelationId,
		ReplyTo: d.ReplyTo, Expiration: d.Expiration, MessageId: d.MessageId, Timestamp: d.Timestamp,
		Type: d.Type, UserId: d.UserId, AppId: d.AppId, Body: d.Body,
	}
	if e.route.SaveDeath && !e.park && p.Expiration != "" {
		// Into a ladder, a per-message TTL shorter than a rung's would
		// expire the copy early into the next level, and it would arrive
		// before its delay. Keep the value as a header instead.
		h["x-rungs-expiration"] = p.Expiration
		p.Expiration = ""
	}
	if p.UserId != "" && p.UserId != m.c.ep.amqpURI.Username {
		// The broker refuses a user-id other than the connection's (and
		// closes the channel); keep it as a header instead.
		h["x-rungs-user-id"] = p.UserId
		p.UserId = ""
	}
	return p
}

// noteReturn marks the copy a basic.return is about. Returns come before
// their message's confirm, on the same channel.
func (r *moveRun) noteReturn(ret amqp.Return) {
	id, _ := ret.Headers[topology.HeaderReplayID].(string)
	e, ok := r.byID[id]
	if !ok {
		return
	}
	e.returned = fmt.Sprintf("unroutable: %s (%d %s)", Route{Exchange: ret.Exchange, RoutingKey: ret.RoutingKey}, ret.ReplyCode, ret.ReplyText)
}

// drainReturns reads every return already delivered, so that a confirm is
// never handled before the return that came ahead of it.
func (r *moveRun) drainReturns() {
	for {
		select {
		case ret := <-r.returns:
			r.noteReturn(ret)
		default:
			return
		}
	}
}

// settle handles one confirm: remove the source copy, park, or keep it.
func (r *moveRun) settle(cf amqp.Confirmation) error {
	m := r.m
	e, ok := r.inflight[cf.DeliveryTag]
	if !ok {
		return nil
	}
	delete(r.inflight, cf.DeliveryTag)
	delete(r.byID, e.id)
	switch {
	case !cf.Ack:
		r.hold("refused by the broker (nack): a queue may be full with reject-publish overflow", false)
		r.stop(StopRefused)
		return nil
	case e.returned != "" && !e.park && m.o.Park != "":
		e.park, e.why = true, e.returned
		r.pending = append([]*entry{e}, r.pending...)
		return nil
	case e.returned != "":
		r.hold(e.returned, false)
		return nil
	}
	if r.remaining > 0 && !r.stopping && r.acked+1+r.prefetch > r.remaining {
		r.deferred = append(r.deferred, e)
		return nil
	}
	return r.ack(e)
}

// ack removes a moved message from the source and counts it.
func (r *moveRun) ack(e *entry) error {
	m := r.m
	if err := r.src.Ack(e.d.DeliveryTag, false); err != nil {
		// Confirmed at the target, but the source keeps its copy.
		m.p.Unknown++
		return r.lost(fmt.Errorf("acknowledge on the source: %w", err))
	}
	r.unsynced++
	r.acked++
	if e.park {
		m.p.Parked++
		m.p.Reasons[e.why]++
	} else {
		m.p.Moved++
	}
	return nil
}

// ackDeferred sends the acks held back for the limit once the consumer is
// cancelled (stop waits for the broker's cancel-ok), when no ack can bring
// another delivery.
func (r *moveRun) ackDeferred() error {
	if !r.stopping || len(r.deferred) == 0 {
		return nil
	}
	for len(r.deferred) > 0 {
		e := r.deferred[0]
		r.deferred = r.deferred[1:]
		if err := r.ack(e); err != nil {
			return err
		}
	}
	return nil
}

// bucket is a token bucket: rate tokens a second, up to a twentieth of a
// second's worth (at least one) at once.
type bucket struct {
	rate, tokens, burst float64
	last                time.Time
}

func newBucket(rate float64, now time.Time) *bucket {
	burst := max(1, rate/20)
	return &bucket{rate: rate, tokens: 1, burst: burst, last: now}
}

func (b *bucket) refill(now time.Time) {
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
}

func (b *bucket) take(now time.Time) bool {
	b.refill(now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (b *bucket) wait(now time.Time) time.Duration {
	b.refill(now)
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
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
