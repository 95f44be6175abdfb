// Package broker does all of rungs' I/O with RabbitMQ: AMQP 0-9-1 through
// amqp091-go for declaring, publishing, consuming and purging, and the HTTP
// management API through rabbit-hole for reading what a broker holds. API
// types are mapped to topology types here, at the boundary, so that nothing
// above this package sees a wire format.
//
// The interfaces are small and defined by what their consumers need, so the
// console can be tested against hand-written fakes.
package broker

import (
	"context"
	"errors"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// Inspector reads what a broker holds, through the management API, a
// vhost at a time. A reader that shows some ladders, beside however many
// other queues, reads them through LadderInspector instead, and finds
// them with Management.DiscoverLadders.
type Inspector interface {
	// Snapshot returns one vhost's exchanges, queues (with statistics) and
	// bindings: two requests (definitions, queue statistics), never one
	// per queue.
	Snapshot(ctx context.Context, vhost string) (topology.Snapshot, error)
	// Stats returns one vhost's queues with statistics in a single request
	// (the management API's columns parameter keeps it small). A console
	// refreshes with this and re-reads the whole Snapshot only when the set
	// of queues changes or the operator asks.
	Stats(ctx context.Context, vhost string) ([]topology.Queue, error)
	// Overview describes the broker: version, node, cluster name.
	Overview(ctx context.Context) (Overview, error)
	// Vhosts lists the vhosts the user can see.
	Vhosts(ctx context.Context) ([]string, error)
}

// Overview is the broker-wide information the console's header shows.
type Overview struct {
	RabbitMQVersion string
	ErlangVersion   string
	ClusterName     string
	Node            string
	// StatsInterval is how often the broker refreshes its statistics; a
	// console refreshing faster only sees the same numbers again.
	StatsInterval time.Duration
}

// Applier declares and removes a ladder's objects over AMQP.
type Applier interface {
	// Apply declares every object of the plan. It is idempotent: objects
	// that exist with the same arguments are left alone. An existing
	// object with other arguments is an *ConflictError naming it and the
	// argument; nothing is ever deleted to make room.
	Apply(ctx context.Context, p topology.Plan) (ApplyResult, error)
	// Teardown deletes the plan's queues and exchanges (bindings go with
	// them). Messages in those queues are lost: callers confirm first.
	Teardown(ctx context.Context, p topology.Plan) error
}

// ApplyResult counts what Apply declared.
type ApplyResult struct {
	Exchanges, Queues, Bindings int
}

// ConflictError is returned when an object exists with other arguments.
type ConflictError struct {
	Object string // "queue" or "exchange"
	Name   string
	Detail string // e.g. "argument x-message-ttl is 999, plan has 1000"
	// Argument is the argument or property that differs (x-message-ttl,
	// durable, type...), when the broker named it.
	Argument string
	// Server is the broker's own text, e.g. "PRECONDITION_FAILED -
	// inequivalent arg 'x-message-ttl' for queue ...".
	Server string
}

// Error names the object and what differs, and says rungs leaves it be.
func (e *ConflictError) Error() string {
	return e.Object + " " + e.Name + " exists with other arguments: " + e.Detail + " (rungs never deletes it for you)"
}

// Message is one message to publish.
type Message struct {
	Exchange   string
	RoutingKey string
	// BCC are further routing keys, sent in the BCC header (which the
	// broker strips): what a ladder of the direct layout routes by. See
	// topology.Trace.BCC.
	BCC         []string
	Body        []byte
	Headers     map[string]any
	ContentType string
	MessageID   string
	Persistent  bool
	Timestamp   time.Time
	// The other properties an application may rely on, carried so that a
	// retried or replayed copy answers the same caller. user-id and
	// expiration are left out on purpose: the broker refuses a user-id that
	// is not the publishing connection's, and a per-message TTL would cut
	// a delay short in the rungs.
	ContentEncoding string
	CorrelationID   string
	ReplyTo         string
	Type            string
	AppID           string
	Priority        uint8
}

// Publisher publishes with publisher confirms and the mandatory flag.
type Publisher interface {
	// Publish sends the messages, pipelining confirms, and returns once
	// every one is confirmed, returned or failed. A returned (unroutable)
	// or nacked message is counted and reported in the error.
	Publish(ctx context.Context, msgs []Message) (PublishResult, error)
}

// PublishResult counts the outcome of a Publish. Confirmed means the broker
// took responsibility for the message; only those are safe to forget.
type PublishResult struct {
	Confirmed int
	Returned  int // unroutable: no queue took it
	Nacked    int // the broker refused it (e.g. reject-publish overflow)
	// Failed are messages whose outcome is unknown because the connection
	// dropped before a confirm: they may or may not have been delivered.
	Failed int
	// Unsent are messages never handed to the broker, because the context
	// ended, a channel error stopped the run or the connection did not come
	// back: they were certainly not delivered and are safe to send again.
	Unsent int
}

// Purger empties queues.
type Purger interface {
	// Purge removes every ready message and returns how many.
	Purge(ctx context.Context, queue string) (int, error)
}

// ErrReadOnly is returned by a broker client in read-only mode for every
// operation that would change the broker.
var ErrReadOnly = errors.New("read-only mode: this would change the broker")

// ConnStatus is the state of an AMQP connection that reconnects by itself.
type ConnStatus int

// Connection states.
const (
	Connecting ConnStatus = iota
	Connected
	Reconnecting // dropped; NextAttempt says when the next dial is
	Failed       // gave up or cannot dial; Err says why
	Closed       // closed by the program
)

// String is the status as a status line shows it.
func (s ConnStatus) String() string {
	switch s {
	case Connecting:
		return "connecting"
	case Connected:
		return "connected"
	case Reconnecting:
		return "reconnecting"
	case Failed:
		return "failed"
	case Closed:
		return "closed"
	}
	return "unknown"
}

// ConnState is a snapshot of a connection's health, for status bars. Err
// never contains a password.
type ConnState struct {
	Status      ConnStatus
	Err         error
	Since       time.Time // when Status last changed
	NextAttempt time.Time // for Reconnecting: when the next dial happens
	Attempt     int       // reconnection attempts since the last success
}

// StateWatcher is what a console watches to show connection health.
type StateWatcher interface {
	State() ConnState
	// Changes delivers the latest state whenever it changes; slow readers
	// see only the newest state, never a blocked connection.
	Changes() <-chan ConnState
}
