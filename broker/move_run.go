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

// The taking half of a Move (see move_publish.go for republishing): one
// run per connection consumes the source, holds what it cannot route and
// closes down cleanly when the connection or a channel goes.

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
	tags     []string // the consumer's tag, without HoldAll
	holder   *holder  // the consumers, with HoldAll
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
	// seen counts this run's deliveries, for MoveOptions.Take; delivered
	// every delivery, for the holder's credit.
	seen, delivered int
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

// runOnce is one run of a Move, on one connection: open it, then loop
// until the source is done, the limit is reached, or the connection or a
// channel fails (errLost, and Move resumes on a new connection).
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
	ev, err := r.open()
	if err != nil {
		return err
	}
	return r.loop(ctx, ev)
}

// runEvents are the channels a run waits on.
type runEvents struct {
	deliveries           <-chan amqp.Delivery
	confirms             <-chan amqp.Confirmation
	pubClosed, srcClosed <-chan *amqp.Error
}

// open sets the run up on its connection: a publishing channel in
// confirm mode, the prefetch, the notifications, and the consumer.
func (r *moveRun) open() (runEvents, error) {
	m := r.m
	var ev runEvents
	var err error
	if r.pub, err = r.conn.Channel(); err != nil {
		return ev, r.lost(fmt.Errorf("open channel: %w", err))
	}
	// Without a filter, a limit bounds the prefetch too: a message
	// delivered and handed back unmoved counts as a delivery on a quorum
	// queue, and a delivery limit acts on that count.
	r.prefetch = m.o.Window + m.o.MaxHeld
	if m.o.Limit > 0 && m.o.Filter == nil {
		r.remaining = max(m.o.Limit-m.taken(), 1)
		r.prefetch = min(r.prefetch, r.remaining)
	}
	if m.o.HoldAll {
		r.prefetch = holdWindow
	}
	if err := r.src.Qos(r.prefetch, 0, false); err != nil {
		return ev, r.lost(fmt.Errorf("set prefetch: %w", err))
	}
	if err := r.pub.Confirm(false); err != nil {
		return ev, r.lost(fmt.Errorf("enable publisher confirms: %w", err))
	}
	// Room for every possible notification: amqp091 drops one that waits
	// more than 5 s for a full listener, and a dropped return would make an
	// unroutable message look delivered.
	ev.confirms = r.pub.NotifyPublish(make(chan amqp.Confirmation, m.o.Window+1))
	r.returns = r.pub.NotifyReturn(make(chan amqp.Return, m.o.Window+1))
	ev.pubClosed = r.pub.NotifyClose(make(chan *amqp.Error, 1))
	ev.srcClosed = r.src.NotifyClose(make(chan *amqp.Error, 1))
	// Consume, not ConsumeWithContext: this goroutine cancels and closes
	// the channel itself, and a second canceller would race it.
	if m.o.HoldAll {
		// One consumer holds only its prefetch: the holder adds them as
		// the run takes deliveries.
		if r.holder, err = hold(r.src, m.o.Source, r.tag, holdWindow); err == nil {
			ev.deliveries = r.holder.deliveries()
		}
	} else {
		r.tags = []string{r.tag}
		ev.deliveries, err = r.src.Consume(m.o.Source, r.tag, false, false, false, false, nil)
	}
	if isCode(err, amqp.NotFound) {
		return ev, fmt.Errorf("no such queue in vhost %q", m.c.ep.vhost)
	}
	if err != nil {
		return ev, r.lost(fmt.Errorf("consume: %w", err))
	}
	return ev, nil
}

// loop moves messages until the run ends: it republishes what is
// pending, then waits for the next delivery, confirm, return, tick or
// cancellation.
func (r *moveRun) loop(ctx context.Context, ev runEvents) error {
	m := r.m
	deliveries, confirms, pubClosed, srcClosed := ev.deliveries, ev.confirms, ev.pubClosed, ev.srcClosed
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
			r.delivered++
			r.take(d)
			if r.holder != nil && !r.stopping {
				if err := r.holder.grow(r.delivered - r.acked); err != nil {
					return r.lost(fmt.Errorf("consume: %w", err))
				}
			}
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
	r.returnUnacked()
	for _, ch := range []*amqp.Channel{r.probeCh, r.pub, r.src} {
		if ch != nil {
			_ = ch.Close()
		}
	}
	if r.holder != nil {
		r.holder.drop()
	}
}

// returnUnacked hands every message the source channel still holds back
// with one basic.nack(requeue) where the broker does not count a nack as a
// delivery (RabbitMQ 4.3+), instead of leaving them to the channel close,
// which a quorum queue counts against the delivery limit on every release.
// The consumer is cancelled first (waiting for cancel-ok), or the queue
// would deliver the returned messages straight back to it. The release is
// the connected node's; in a cluster mid-upgrade an older leader counts
// the nack, which costs no more than the close would have.
func (r *moveRun) returnUnacked() {
	if r.src == nil || r.src.IsClosed() || serverVersion(r.conn).QuorumRequeueNackCounts() {
		return
	}
	if !r.stopping {
		r.stopping = true
		r.cancelConsumers()
		if r.src.IsClosed() {
			return
		}
	}
	// Delivery tag 0 with multiple: every unacknowledged message.
	_ = r.src.Nack(0, true, true)
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
		r.cancelConsumers()
	}
}

// cancelConsumers cancels the run's consumers, each waiting for its
// cancel-ok.
func (r *moveRun) cancelConsumers() {
	if r.holder != nil {
		r.holder.cancel()
		return
	}
	cancelAll(r.src, r.tags)
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
	if !r.m.o.HoldAll && (r.held >= r.m.o.MaxHeld || r.held >= r.prefetch) && !r.stopping {
		r.stop(StopHeld)
	}
}

// take decides what to do with one delivery from the source.
func (r *moveRun) take(d amqp.Delivery) {
	m := r.m
	// Holding all, a stop because nothing is ready comes while deliveries
	// the broker sent before it are on their way: they were in the queue
	// when the pass ended, so they are read like the rest.
	if r.stopping && !(m.o.HoldAll && m.stopped == StopEmpty) {
		r.hold("", false) // left for later; not counted
		return
	}
	if id, _ := d.Headers[topology.HeaderReplayID].(string); len(id) > len(m.run) && id[:len(m.run)+1] == m.run+"." {
		if m.o.HoldAll {
			// A pass over a whole rung may send a copy to the rung's own
			// tail (a reschedule within its TTL): it stays there.
			r.hold("", true)
			return
		}
		// One of this Move's own copies came back: the route loops.
		r.hold("the route leads back into the source queue", false)
		r.stop(StopLoop)
		return
	}
	r.seen++
	if m.o.Take > 0 && r.seen >= m.o.Take {
		defer r.stop(StopTaken)
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
	if route.Drop {
		if err := r.src.Ack(d.DeliveryTag, false); err != nil {
			r.held++ // back to the source with the channel
			return
		}
		r.unsynced++
		r.acked++
		m.p.Dropped++
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
	// Holding all, every message the queue has is marked delivered at
	// once, but a quorum queue sends them over a second or more and takes
	// back on cancel what it has not sent: until the pass has read the
	// depth it began with, nothing ready means done only once deliveries
	// have stopped. After that, no need to wait for quiet, which steady
	// arrivals would never allow.
	quiet := time.Since(r.lastIn) >= moveIdle
	if r.m.o.HoldAll {
		quiet = r.delivered >= r.m.o.Depth || time.Since(r.lastIn) >= scanQuiet
	}
	if r.stopping || len(r.pending) > 0 || len(r.inflight) > 0 || !quiet || time.Since(r.probed) < moveIdle {
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
		own := len(r.tags)
		if r.holder != nil {
			own = r.holder.consumers()
		}
		r.m.p.OthersHolding = max(q.Consumers-own, 0)
		r.stop(StopEmpty)
	}
	return nil
}
