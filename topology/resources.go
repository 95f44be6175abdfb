package topology

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Args are x-arguments of a queue, exchange or binding. Values are
// normalised by NormalizeArg so that a plan compares equal to what the
// management API reports (JSON numbers) or AMQP returns (typed integers).
type Args map[string]any

// NormalizeArg maps an argument value to a canonical form: integral numbers
// become int64, everything else is left as it is.
func NormalizeArg(v any) any {
	switch v.(type) {
	case json.Number, string:
		return v
	}
	if n, ok := HeaderInt(v); ok {
		return n
	}
	return v
}

// Normalized returns a copy with every value normalised; nil stays nil.
func (a Args) Normalized() Args {
	if len(a) == 0 {
		return nil
	}
	out := make(Args, len(a))
	for k, v := range a {
		out[k] = NormalizeArg(v)
	}
	return out
}

// String prints args in key order, for messages and stable comparison.
func (a Args) String() string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, NormalizeArg(a[k]))
	}
	return strings.Join(parts, " ")
}

// Exchange is an exchange as declared.
type Exchange struct {
	Name       string
	Type       string // topic, fanout, direct, headers
	Durable    bool
	AutoDelete bool
	Internal   bool
	Args       Args
}

// Queue is a queue as declared, with live statistics when it comes from a
// broker snapshot (zero in a plan).
type Queue struct {
	Name       string
	Durable    bool
	AutoDelete bool
	Args       Args
	Stats      QueueStats
	// Policy and OperatorPolicy name the policies the broker applies to
	// the queue, and EffectivePolicy is their merged definition, where a
	// listing asked for them: PolicyReported says the broker named
	// either. The reads that judge delayed retry ask: the inventory's
	// listing and a ladder's reads (status finds delayed retry there).
	Policy, OperatorPolicy string
	PolicyReported         bool
	EffectivePolicy        map[string]any
}

// QueueStats are the live figures the management API reports for a queue.
type QueueStats struct {
	Ready       int64
	Unacked     int64
	Consumers   int64
	PublishRate float64 // messages/s entering the queue
	DeliverRate float64 // messages/s leaving to consumers (get, deliver)
	// Taken counts the messages consumers took for good (acknowledged, or
	// delivered without acknowledgement) since the broker began counting
	// the queue: a counter, so two readings' difference is what left to
	// consumers between them. 0 when the broker reports none.
	Taken      int64
	ExpireRate float64 // not reported by every broker; 0 when unknown
	Type       string  // classic, quorum, stream (as reported)
	State      string  // running, idle, flow, down...
	// HeadAge is how long the oldest message has waited, when the broker
	// knows it (head_message_timestamp needs a timestamp property); 0 if not.
	HeadAge time.Duration
	// Expired counts a quorum queue's messages that have expired (or were
	// rejected) and wait for at-least-once dead-lettering to confirm them
	// downstream (messages_dlx). They are in neither Ready nor Unacked: a
	// dead-letter worker that stopped after a node restart leaves them here
	// for good, which is what a stalled rung is. Classic queues report none.
	Expired int64
	// ExpiredBytes is the body size of Expired (message_bytes_dlx).
	ExpiredBytes int64
	// Delayed counts a quorum queue's messages that a delayed retry
	// (RabbitMQ 4.3's x-delayed-retry-*) holds back after they were
	// returned: in neither Ready, Unacked nor Expired, and not yet
	// dead-lettered even when their TTL has passed (messages_delayed).
	Delayed int64
	// DelayedReported says the listing carried messages_delayed for the
	// queue (4.3's listings with statistics do for quorum queues).
	DelayedReported bool
	// DeliveryLimit is the limit in force as the broker reports it
	// (4.3.6 does; 4.0.5 did for a queue with x-delivery-limit in some
	// readings): > 0 a limit, 0 none. It is meaningful only when
	// DeliveryLimitReported.
	DeliveryLimit         int
	DeliveryLimitReported bool
	// Leader is the node the queue's leader runs on (a classic queue's
	// node), "" when the broker did not say. Members are the nodes a
	// quorum queue is replicated to and Online those of them running it
	// now; both as reported, nil when not reported (classic queues before
	// 4.1 report neither).
	Leader  string
	Members []string
	Online  []string
}

// LostMembers are the members of a replicated queue that are not online:
// nodes down, or a member that has not started. nil when none is lost or
// the broker did not report members.
func (s QueueStats) LostMembers() []string {
	if len(s.Members) == 0 || s.Online == nil {
		return nil
	}
	online := map[string]bool{}
	for _, n := range s.Online {
		online[n] = true
	}
	var lost []string
	for _, n := range s.Members {
		if !online[n] {
			lost = append(lost, n)
		}
	}
	return lost
}

// HasQuorum reports whether a majority of a quorum queue's members is
// online: without one it accepts, delivers and dead-letters nothing.
// True when membership is unknown.
func (s QueueStats) HasQuorum() bool {
	if len(s.Members) == 0 || s.Online == nil {
		return true
	}
	return 2*(len(s.Members)-len(s.LostMembers())) > len(s.Members)
}

// Messages is the queue's depth: ready, unacknowledged, expired messages
// waiting to be dead-lettered and messages a delayed retry holds. All are
// still on the ladder.
func (s QueueStats) Messages() int64 { return s.Ready + s.Unacked + s.Expired + s.Delayed }

// OutRate is how fast messages leave the queue, to consumers or by expiry
// (messages/s).
func (s QueueStats) OutRate() float64 { return s.DeliverRate + s.ExpireRate }

// QueueType reads the queue type from the declared arguments; a queue
// declared without x-queue-type is classic.
func (q Queue) QueueType() QueueType {
	if t, ok := q.Args["x-queue-type"].(string); ok && t != "" {
		return QueueType(t)
	}
	if q.Stats.Type != "" {
		return QueueType(q.Stats.Type)
	}
	return Classic
}

// TTL reads x-message-ttl; ok is false when the queue has none.
func (q Queue) TTL() (time.Duration, bool) {
	v, ok := NormalizeArg(q.Args["x-message-ttl"]).(int64)
	if !ok {
		return 0, false
	}
	return time.Duration(v) * time.Millisecond, true
}

// DeadLetterExchange reads x-dead-letter-exchange; ok is false when unset.
func (q Queue) DeadLetterExchange() (string, bool) {
	v, ok := q.Args["x-dead-letter-exchange"].(string)
	return v, ok
}

// Destination types of a binding.
const (
	ToQueue    = "queue"
	ToExchange = "exchange"
)

// Binding routes from an exchange to a queue or another exchange.
type Binding struct {
	Source          string
	Destination     string
	DestinationType string // ToQueue or ToExchange
	RoutingKey      string
	Args            Args
}

// ID identifies a binding the way RabbitMQ does: source, destination and key
// (arguments are ignored; ladders never bind with arguments).
func (b Binding) ID() string {
	return b.Source + " -> " + b.DestinationType + ":" + b.Destination + " [" + b.RoutingKey + "]"
}

// Plan is everything a ladder declares, in the order it must be declared:
// exchanges, then queues, then bindings.
type Plan struct {
	Ladder    Ladder
	Exchanges []Exchange
	Queues    []Queue
	Bindings  []Binding
}

// Snapshot is what a broker holds in one vhost: the raw material of drift
// checks, discovery and the console.
type Snapshot struct {
	Vhost     string
	Exchanges []Exchange
	Queues    []Queue
	Bindings  []Binding
}

// Snapshot returns the plan as a broker that applied it would report it.
func (p Plan) Snapshot() Snapshot {
	return Snapshot{
		Vhost:     p.Ladder.Vhost,
		Exchanges: append([]Exchange(nil), p.Exchanges...),
		Queues:    append([]Queue(nil), p.Queues...),
		Bindings:  append([]Binding(nil), p.Bindings...),
	}
}

// Merge returns a snapshot holding both, as if both plans were applied to
// one vhost; duplicates (shared objects) are kept once.
func (s Snapshot) Merge(o Snapshot) Snapshot {
	out := Snapshot{Vhost: s.Vhost}
	seenX, seenQ, seenB := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, src := range []Snapshot{s, o} {
		for _, x := range src.Exchanges {
			if !seenX[x.Name] {
				seenX[x.Name] = true
				out.Exchanges = append(out.Exchanges, x)
			}
		}
		for _, q := range src.Queues {
			if !seenQ[q.Name] {
				seenQ[q.Name] = true
				out.Queues = append(out.Queues, q)
			}
		}
		for _, b := range src.Bindings {
			if !seenB[b.ID()] {
				seenB[b.ID()] = true
				out.Bindings = append(out.Bindings, b)
			}
		}
	}
	return out
}

// Queue returns the named queue of the snapshot.
func (s Snapshot) Queue(name string) (Queue, bool) {
	for _, q := range s.Queues {
		if q.Name == name {
			return q, true
		}
	}
	return Queue{}, false
}

// Exchange returns the named exchange of the snapshot.
func (s Snapshot) Exchange(name string) (Exchange, bool) {
	for _, x := range s.Exchanges {
		if x.Name == name {
			return x, true
		}
	}
	return Exchange{}, false
}
