package broker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/topology"
)

// Reconnection backoff: quick enough that a console barely notices a broker
// restart, capped so that a long outage costs one attempt every few seconds.
const (
	minBackoff = 250 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// heartbeat lets a connection whose peer vanished without a FIN (a dropped
// network, a suspended VM) be noticed within two intervals.
const heartbeat = 10 * time.Second

// ErrClosed is returned by operations on a Conn after Close.
var ErrClosed = errors.New("broker connection closed")

// Conn is an AMQP connection to one vhost that reconnects by itself. Every
// operation opens its own channel, so a channel error in one (a conflicting
// declaration, a missing exchange) never disturbs another. It is safe for
// concurrent use.
type Conn struct {
	ep     endpoint
	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	conn    *amqp.Connection // nil while down
	up      chan struct{}    // closed while conn is usable
	state   ConnState
	changes chan ConnState
}

var (
	_ Applier      = (*Conn)(nil)
	_ Publisher    = (*Conn)(nil)
	_ Purger       = (*Conn)(nil)
	_ StateWatcher = (*Conn)(nil)
)

// Dial connects to the configuration's vhost. The first connection must
// succeed (a wrong password should fail fast, not spin); after that, a
// dropped connection is re-established in the background.
func Dial(ctx context.Context, cfg Config) (*Conn, error) {
	ep, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	c := &Conn{ep: ep, changes: make(chan ConnState, 1)}
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.conn, c.up = conn, closedChan()
	c.state = ConnState{Status: Connected, Since: time.Now()}
	c.wg.Add(1)
	go c.supervise(conn)
	return c, nil
}

func closedChan() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

// Vhost is the vhost the connection is bound to.
func (c *Conn) Vhost() string { return c.ep.vhost }

// State returns the connection's current state.
func (c *Conn) State() ConnState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Changes delivers state changes. It holds only the latest one, so a slow
// reader sees the current state rather than a backlog, and it is closed
// after the Closed state.
func (c *Conn) Changes() <-chan ConnState { return c.changes }

// Close closes the connection and stops reconnecting. Operations waiting for
// a connection return ErrClosed.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.state.Status == Closed {
		c.mu.Unlock()
		return nil
	}
	conn := c.conn
	c.conn = nil
	c.setStateLocked(ConnState{Status: Closed, Since: time.Now()})
	close(c.changes)
	c.mu.Unlock()
	c.cancel()
	var err error
	if conn != nil && !conn.IsClosed() {
		err = conn.Close()
		if errors.Is(err, amqp.ErrClosed) {
			err = nil
		}
	}
	c.wg.Wait()
	return c.ep.redact(err)
}

// setStateLocked records and announces a state; c.mu is held. Nothing is
// announced after Closed, whose send is the last before changes closes.
func (c *Conn) setStateLocked(s ConnState) {
	if c.state.Status == Closed {
		return
	}
	c.state = s
	select {
	case c.changes <- s:
	default:
		// Coalesce: replace the unread state with the newer one.
		select {
		case <-c.changes:
		default:
		}
		select {
		case c.changes <- s:
		default:
		}
	}
}

// dial opens one connection, bounded by ctx and the configured timeout.
func (c *Conn) dial(ctx context.Context) (*amqp.Connection, error) {
	ctx, cancel := context.WithTimeout(ctx, c.ep.timeout)
	defer cancel()
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("rungs")
	acfg := amqp.Config{
		Vhost:      c.ep.vhost,
		Heartbeat:  heartbeat,
		Properties: props,
		Locale:     "en_US",
	}
	if c.ep.tls != nil {
		acfg.TLSClientConfig = c.ep.tls.Clone()
		acfg.TLSClientConfig.ServerName = c.ep.amqpURI.Host
	}
	var netConn net.Conn
	stopWatch := func() bool { return true }
	acfg.Dial = func(network, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		// The deadline covers the TLS and AMQP handshakes; amqp091 clears it
		// once the connection is open. Cancelling ctx cuts a handshake short.
		deadline, _ := ctx.Deadline()
		_ = nc.SetDeadline(deadline)
		netConn = nc
		stopWatch = context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
		return nc, nil
	}
	conn, err := amqp.DialConfig(c.ep.amqpURL, acfg)
	if !stopWatch() && err == nil {
		// ctx ended as the handshake finished: the socket may be poisoned.
		_ = conn.Close()
		err = ctx.Err()
	}
	if err != nil {
		if netConn != nil && conn == nil {
			_ = netConn.Close()
		}
		var aerr *amqp.Error
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) && !errors.As(err, &aerr) {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return nil, c.ep.redact(fmt.Errorf("connect to %s vhost %q: %w", hostPort(c.ep.amqpURI), c.ep.vhost, c.ep.tlsHint(err)))
	}
	return conn, nil
}

func hostPort(u amqp.URI) string {
	return u.Scheme + "://" + net.JoinHostPort(u.Host, fmt.Sprint(u.Port))
}

// supervise waits for the connection to drop and re-dials with capped,
// jittered exponential backoff until Close.
func (c *Conn) supervise(conn *amqp.Connection) {
	defer c.wg.Done()
	for {
		var cause error = errors.New("connection closed")
		select {
		case aerr, ok := <-conn.NotifyClose(make(chan *amqp.Error, 1)):
			if ok && aerr != nil {
				cause = aerr
			}
		case <-c.ctx.Done():
			return
		}
		if c.ctx.Err() != nil {
			return
		}
		c.mu.Lock()
		c.conn, c.up = nil, make(chan struct{})
		c.setStateLocked(ConnState{Status: Reconnecting, Err: c.ep.redact(fmt.Errorf("connection lost: %w", cause)), Since: time.Now()})
		c.mu.Unlock()

		conn = c.redial()
		if conn == nil {
			return
		}
	}
}

// redial tries until it connects (and publishes the connection) or Close.
func (c *Conn) redial() *amqp.Connection {
	backoff := minBackoff
	for attempt := 0; ; attempt++ {
		// Equal jitter: spread reconnecting clients without ever retrying
		// in a tight loop.
		wait := backoff/2 + rand.N(backoff/2+1)
		c.mu.Lock()
		s := c.state
		s.NextAttempt, s.Attempt = time.Now().Add(wait), attempt
		c.setStateLocked(s)
		c.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-c.ctx.Done():
			t.Stop()
			return nil
		}
		conn, err := c.dial(c.ctx)
		if err == nil {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.state.Status == Closed {
				_ = conn.Close()
				return nil
			}
			c.conn = conn
			close(c.up)
			c.setStateLocked(ConnState{Status: Connected, Since: time.Now()})
			return conn
		}
		if c.ctx.Err() != nil {
			return nil
		}
		status := Reconnecting
		if refused(err) {
			status, backoff = Failed, maxBackoff
		}
		c.mu.Lock()
		s = c.state
		if s.Status != status {
			s.Since = time.Now()
		}
		s.Status, s.Err, s.Attempt = status, err, attempt+1
		c.setStateLocked(s)
		c.mu.Unlock()
		backoff = min(2*backoff, maxBackoff)
	}
}

// refused reports errors that retrying quickly will not fix: the broker
// turned the credentials or the vhost down, or TLS verification failed.
func refused(err error) bool {
	var aerr *amqp.Error
	if errors.As(err, &aerr) {
		switch aerr.Code {
		case amqp.AccessRefused, amqp.NotAllowed, amqp.InvalidPath:
			return true
		}
	}
	var unknownCA x509.UnknownAuthorityError
	var verify *tls.CertificateVerificationError
	var hostname x509.HostnameError
	return errors.As(err, &unknownCA) || errors.As(err, &verify) || errors.As(err, &hostname)
}

// connection returns the live connection, waiting for a reconnection until
// ctx ends.
func (c *Conn) connection(ctx context.Context) (*amqp.Connection, error) {
	for {
		c.mu.Lock()
		conn, up, st := c.conn, c.up, c.state
		c.mu.Unlock()
		switch {
		case st.Status == Closed:
			return nil, ErrClosed
		case conn != nil && !conn.IsClosed():
			return conn, nil
		case conn != nil:
			// Dropped, and supervise has not noticed yet: poll briefly.
			up = nil
		}
		var poll <-chan time.Time
		if up == nil {
			poll = time.After(10 * time.Millisecond)
		}
		select {
		case <-up:
		case <-poll:
		case <-c.ctx.Done():
			return nil, ErrClosed
		case <-ctx.Done():
			if st.Err != nil {
				return nil, fmt.Errorf("waiting for a connection (%s: %v): %w", st.Status, st.Err, ctx.Err())
			}
			return nil, fmt.Errorf("waiting for a connection: %w", ctx.Err())
		}
	}
}

// channel opens a channel on the live connection, waiting for one if the
// connection is down.
// serverVersion is the connected node's RabbitMQ release, from the
// server properties it sent when the connection opened.
func serverVersion(conn *amqp.Connection) topology.Version {
	if conn == nil {
		return topology.Version{}
	}
	s, _ := conn.Properties["version"].(string)
	v, _ := topology.ParseVersion(s)
	return v
}

func (c *Conn) channel(ctx context.Context) (*amqp.Channel, *amqp.Connection, error) {
	for {
		conn, err := c.connection(ctx)
		if err != nil {
			return nil, nil, err
		}
		ch, err := conn.Channel()
		if err == nil {
			return ch, conn, nil
		}
		if !conn.IsClosed() {
			return nil, nil, c.ep.redact(fmt.Errorf("open channel: %w", err))
		}
	}
}

// steps runs n idempotent steps, each on a live channel. A step failing
// because the connection dropped is retried after reconnection; any other
// error ends the run. A step may close the channel on purpose (a 404 it
// tolerates): the next step gets a new one.
func (c *Conn) steps(ctx context.Context, n int, do func(ch *amqp.Channel, i int) error) error {
	return c.timedSteps(ctx, n, 0, do)
}

// declarations runs the many small steps of an apply or teardown, each
// bounded on its own rather than the run by a total: a tall ladder on a
// loaded broker is slow because it is hundreds of round trips, not because
// one of them hangs, and only a hung one should end the run. The bound is
// the request timeout, but at least declareTimeout.
func (c *Conn) declarations(ctx context.Context, n int, do func(ch *amqp.Channel, i int) error) error {
	return c.timedSteps(ctx, n, max(c.ep.timeout, declareTimeout), do)
}

// declareTimeout is the least a declaration is given: a loaded 3.10.8
// took 21s to start one quorum queue (its Raft member and log).
const declareTimeout = 30 * time.Second

func (c *Conn) timedSteps(ctx context.Context, n int, each time.Duration, do func(ch *amqp.Channel, i int) error) error {
	var ch *amqp.Channel
	var conn *amqp.Connection
	defer func() {
		if ch != nil {
			_ = ch.Close()
		}
	}()
	for i := 0; i < n; {
		if err := ctx.Err(); err != nil {
			return err
		}
		if ch == nil || ch.IsClosed() {
			var err error
			if ch, conn, err = c.channel(ctx); err != nil {
				return err
			}
		}
		sctx, cancel := ctx, context.CancelFunc(func() {})
		if each > 0 {
			sctx, cancel = context.WithTimeout(ctx, each)
		}
		// amqp091 calls take no context; closing the channel is what
		// interrupts a call that ctx has given up on.
		cur := ch
		stop := context.AfterFunc(sctx, func() { _ = cur.Close() })
		err := do(ch, i)
		late := !stop()
		cancel()
		if late {
			// The channel is being closed under the step, which may
			// have succeeded just before: never use it again.
			_ = ch.Close()
			ch = nil
		}
		switch {
		case err == nil:
			i++
		case ctx.Err() != nil:
			return ctx.Err()
		case late:
			return fmt.Errorf("step %d of %d: no answer from the broker within %s: %w", i+1, n, each, context.DeadlineExceeded)
		case conn.IsClosed() && !malformed(err):
			// Lost the connection: redo step i on the next one.
		default:
			return err
		}
	}
	return nil
}

// malformed reports a connection exception the broker raises for a frame
// it cannot accept, such as a name that is not UTF-8. Sending the same
// request on a new connection would only fail, and close it, again.
func malformed(err error) bool {
	var aerr *amqp.Error
	if !errors.As(err, &aerr) {
		return false
	}
	switch aerr.Code {
	case amqp.FrameError, amqp.SyntaxError, amqp.CommandInvalid, amqp.UnexpectedFrame, amqp.NotImplemented:
		return true
	}
	return false
}

// Apply implements Applier.
func (c *Conn) Apply(ctx context.Context, p topology.Plan) (ApplyResult, error) {
	var res ApplyResult
	if c.ep.readOnly {
		return res, ErrReadOnly
	}
	nx, nq := len(p.Exchanges), len(p.Queues)
	err := c.declarations(ctx, nx+nq+len(p.Bindings), func(ch *amqp.Channel, i int) error {
		switch {
		case i < nx:
			x := p.Exchanges[i]
			if err := ch.ExchangeDeclare(x.Name, x.Type, x.Durable, x.AutoDelete, x.Internal, false, table(x.Args)); err != nil {
				return declareError("exchange", x.Name, err)
			}
			res.Exchanges++
		case i < nx+nq:
			q := p.Queues[i-nx]
			if _, err := ch.QueueDeclare(q.Name, q.Durable, q.AutoDelete, false, false, table(q.Args)); err != nil {
				return declareError("queue", q.Name, err)
			}
			res.Queues++
		default:
			b := p.Bindings[i-nx-nq]
			var err error
			if b.DestinationType == topology.ToExchange {
				err = ch.ExchangeBind(b.Destination, b.RoutingKey, b.Source, false, table(b.Args))
			} else {
				err = ch.QueueBind(b.Destination, b.RoutingKey, b.Source, false, table(b.Args))
			}
			if err != nil {
				return fmt.Errorf("bind %s: %w", b.ID(), err)
			}
			res.Bindings++
		}
		return nil
	})
	return res, c.ep.redact(err)
}

// Teardown implements Applier. Objects already gone are not an error.
func (c *Conn) Teardown(ctx context.Context, p topology.Plan) error {
	if c.ep.readOnly {
		return ErrReadOnly
	}
	nq := len(p.Queues)
	err := c.declarations(ctx, nq+len(p.Exchanges), func(ch *amqp.Channel, i int) error {
		if i < nq {
			name := p.Queues[i].Name
			if _, err := ch.QueueDelete(name, false, false, false); err != nil && !isCode(err, amqp.NotFound) {
				return fmt.Errorf("delete queue %q: %w", name, err)
			}
			return nil
		}
		name := p.Exchanges[i-nq].Name
		if err := ch.ExchangeDelete(name, false, false); err != nil && !isCode(err, amqp.NotFound) {
			return fmt.Errorf("delete exchange %q: %w", name, err)
		}
		return nil
	})
	return c.ep.redact(err)
}

// Purge implements Purger.
func (c *Conn) Purge(ctx context.Context, queue string) (int, error) {
	if c.ep.readOnly {
		return 0, ErrReadOnly
	}
	var n int
	err := c.steps(ctx, 1, func(ch *amqp.Channel, _ int) error {
		var err error
		n, err = ch.QueuePurge(queue, false)
		if isCode(err, amqp.NotFound) {
			return fmt.Errorf("purge queue %q: no such queue in vhost %q", queue, c.ep.vhost)
		}
		if err != nil {
			return fmt.Errorf("purge queue %q: %w", queue, err)
		}
		return nil
	})
	return n, c.ep.redact(err)
}

func isCode(err error, code int) bool {
	var aerr *amqp.Error
	return errors.As(err, &aerr) && aerr.Code == code
}

// table converts topology arguments to an AMQP field table.
func table(a topology.Args) amqp.Table {
	if len(a) == 0 {
		return nil
	}
	t := make(amqp.Table, len(a))
	for k, v := range a {
		t[k] = fieldValue(v)
	}
	return t
}

// fieldValue makes a Go value encodable as an AMQP field: integers become
// int64 (a signed 64-bit "l", which RabbitMQ accepts for every numeric
// x-argument), maps become tables.
func fieldValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		t := make(amqp.Table, len(x))
		for k, e := range x {
			t[k] = fieldValue(e)
		}
		return t
	case topology.Args:
		return table(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fieldValue(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case uint, uint64:
		return v // rejected by validation with a clear message
	}
	return topology.NormalizeArg(v)
}

// plainValue turns AMQP table values back into plain Go maps and slices, so
// that callers need not import amqp091 to read headers such as x-death.
func plainValue(v any) any {
	switch x := v.(type) {
	case amqp.Table:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plainValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainValue(e)
		}
		return out
	}
	return v
}

func plainTable(t amqp.Table) map[string]any {
	if len(t) == 0 {
		return nil
	}
	return plainValue(t).(map[string]any)
}

// EnsureQueue makes sure a destination queue exists, declaring it durable
// (of the given type) only when it is missing. An existing queue is never
// redeclared, so its own arguments, whatever they are, stay untouched.
func (c *Conn) EnsureQueue(ctx context.Context, name string, qt topology.QueueType) (created bool, err error) {
	if c.ep.readOnly {
		return false, ErrReadOnly
	}
	err = c.steps(ctx, 1, func(ch *amqp.Channel, _ int) error {
		_, perr := ch.QueueDeclarePassive(name, true, false, false, false, nil)
		if perr == nil {
			return nil
		}
		if !isCode(perr, amqp.NotFound) {
			return fmt.Errorf("check queue %q: %w", name, perr)
		}
		// The 404 closed that channel; declare on a fresh one.
		ch2, _, cerr := c.channel(ctx)
		if cerr != nil {
			return cerr
		}
		defer ch2.Close()
		args := amqp.Table{}
		if qt == topology.Quorum {
			args["x-queue-type"] = string(topology.Quorum)
		}
		if _, derr := ch2.QueueDeclare(name, true, false, false, false, args); derr != nil {
			return declareError("queue", name, derr)
		}
		created = true
		return nil
	})
	return created, c.ep.redact(err)
}
