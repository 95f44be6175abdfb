package topology

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// A bridge (rungs bridge) takes messages published the way the
// delayed-message plugin takes them (an exchange, the routing key the
// producer always used, an x-delay header in milliseconds) and runs them
// through a ladder. Its objects, named after its intake exchange E:
//
//	E                  the intake exchange (fanout: every key reaches the intake)
//	E.bridge.intake    quorum queue the bridge consumes
//	E.bridge.due       quorum queue, a target of the ladder: messages that are due
//	E.bridge.parked    quorum queue: messages the bridge would not schedule, with the reason
//	EXIT               the exit exchange, of the plugin's x-delayed-type
//
// A message waits in the ladder's rungs like any other (so peek, trace and
// scheduled read and cancel it), delivered to E.bridge.due; the bridge
// then publishes it to the exit exchange with the routing key it was
// published with, which it carried in HeaderBridgeKey. The ladder's key
// spells the delay and the destination (E.bridge.due), as rungs' tools
// expect, which is why the original key travels in a header and the last
// hop is the bridge's, not the broker's.

// Headers the bridge writes.
const (
	// HeaderDelay is the plugin's header: the delay in milliseconds.
	HeaderDelay = "x-delay"
	// HeaderReceivedMS is when the broker received a message, in
	// milliseconds since the Unix epoch, where its timestamp interceptor
	// stamps it (RabbitMQ 3.12 and later:
	// message_interceptors.incoming.set_header_timestamp; the
	// rabbitmq_message_timestamp plugin on earlier releases).
	HeaderReceivedMS = "timestamp_in_ms"
	// HeaderBridgeKey is the routing key the producer published with; the
	// exit exchange receives the message with it.
	HeaderBridgeKey = "x-rungs-bridge-key"
	// HeaderBridgeDue is when the message is due, in milliseconds since the
	// Unix epoch: how late it left the ladder is measured against it.
	HeaderBridgeDue = "x-rungs-bridge-due"
	// HeaderPossibleDuplicate marks a copy the bridge made of a message
	// the broker delivered again (redelivered): an earlier copy may have
	// been published before the bridge stopped without acking. With
	// HeaderReplayID (unique per copy, as replay gives), a consumer tells
	// the copies apart.
	HeaderPossibleDuplicate = "x-rungs-possible-duplicate"
)

// BridgeNames are the objects of the bridge whose intake exchange is
// Exchange.
type BridgeNames struct {
	Exchange, Intake, Due, Parked, Exit string
}

// Bridge suffixes of the queue names.
const (
	bridgeIntake = ".bridge.intake"
	bridgeDue    = ".bridge.due"
	bridgeParked = ".bridge.parked"
)

// NamesOfBridge names the bridge on intake exchange exchange, with exit
// exchange exit ("" for exchange + ".exit").
func NamesOfBridge(exchange, exit string) BridgeNames {
	if exit == "" {
		exit = exchange + ".exit"
	}
	return BridgeNames{
		Exchange: exchange, Intake: exchange + bridgeIntake, Due: exchange + bridgeDue,
		Parked: exchange + bridgeParked, Exit: exit,
	}
}

// CheckBridge refuses names no bridge can have: an empty or over-long
// intake exchange, an exit exchange equal to the intake (every message
// would come back), an exchange name of the amq. namespace, or an exit
// type the plugin's x-delayed-type would not be.
func CheckBridge(n BridgeNames, exitType string) error {
	switch {
	case n.Exchange == "":
		return fmt.Errorf("the intake exchange needs a name")
	case len(n.Parked) > MaxShortString || len(n.Due)+4 > MaxKeyBytes:
		return fmt.Errorf("intake exchange name %q is too long: the bridge's queue names must fit AMQP's %d bytes", n.Exchange, MaxShortString)
	case strings.HasPrefix(n.Exchange, "amq.") || strings.HasPrefix(n.Exit, "amq."):
		return fmt.Errorf("exchange names starting with amq. are the broker's")
	case n.Exit == n.Exchange:
		return fmt.Errorf("the exit exchange must differ from the intake exchange %q, or every message would come back", n.Exchange)
	case len(n.Exit) > MaxShortString:
		return fmt.Errorf("exit exchange name is %d bytes; AMQP allows at most %d", len(n.Exit), MaxShortString)
	}
	switch exitType {
	case "direct", "topic", "fanout", "headers":
		return nil
	}
	return fmt.Errorf("exit type %q: want direct, topic, fanout or headers (the plugin exchange's x-delayed-type)", exitType)
}

// BridgePlan is what a bridge declares besides its ladder: the intake
// exchange and queue and their binding, the due and parked queues, and the
// exit exchange. Its quorum queues get no delivery limit where the release
// has a default one (4.0 on), as a ladder's rungs do: a message the
// bridge hands back because the broker did not confirm its copy must not
// be dropped after 20 tries.
func BridgePlan(n BridgeNames, exitType string, v Version) Plan {
	q := func(name string) Queue {
		a := Args{"x-queue-type": string(Quorum)}
		if v.Known() && v.AtLeast(3, 10, 0) {
			a[leaderLocatorArg] = balancedLeaders
		}
		if v.QuorumDefaultDeliveryLimit() > 0 && v.Known() {
			a[deliveryLimitArg] = noDeliveryLimit
		}
		return Queue{Name: name, Durable: true, Args: a}
	}
	return Plan{
		Exchanges: []Exchange{
			{Name: n.Exchange, Type: "fanout", Durable: true},
			{Name: n.Exit, Type: exitType, Durable: true},
		},
		Queues:   []Queue{q(n.Intake), q(n.Due), q(n.Parked)},
		Bindings: []Binding{{Source: n.Exchange, Destination: n.Intake, DestinationType: ToQueue}},
	}
}

// CopiedBindings are the bindings of exchange from in s, given to the
// exit exchange instead: the destinations bound to a plugin exchange
// receive the same messages from the bridge's exit. Bindings to the
// bridge's own objects are left out.
func CopiedBindings(s Snapshot, from string, n BridgeNames) []Binding {
	var out []Binding
	for _, b := range s.Bindings {
		if b.Source != from || b.Destination == n.Exchange || b.Destination == n.Exit {
			continue
		}
		b.Source = n.Exit
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

// DelayAction is what a bridge does with a message, by its x-delay.
type DelayAction uint8

const (
	// DeliverNow: no delay (absent, zero or negative): to the exit exchange.
	DeliverNow DelayAction = iota
	// Schedule: into the ladder for Delay.
	Schedule
	// Park: to the parked queue with Reason.
	Park
)

// DelayDecision is a bridge's reading of one message's x-delay.
type DelayDecision struct {
	Action DelayAction
	Delay  time.Duration
	// Reason says why a message is parked, or that a delay was clamped.
	Reason string
}

// Park reasons, the first words of HeaderReason on a parked message.
const (
	ReasonNotANumber = "x-delay is not a number"
	ReasonTooLong    = "x-delay beyond the ladder's maximum"
	ReasonNoKey      = "no " + HeaderBridgeKey + " header"
	ReasonUnroutable = "unroutable"
)

// DecideDelay reads headers' x-delay as the plugin does where it defines
// it: absent, zero or negative is no delay. Where the plugin's reading is
// not a delay, the message is parked with the reason rather than guessed
// at: a value that is not a number (a string, even of digits: the plugin
// reads integers only), or one beyond max, the ladder's longest delay,
// unless clamp takes max instead. A float is rounded up to the next
// millisecond, never down, so no message is early.
func DecideDelay(headers map[string]any, max time.Duration, clamp bool) DelayDecision {
	v, ok := headers[HeaderDelay]
	if !ok || v == nil {
		return DelayDecision{Action: DeliverNow}
	}
	ms, ok := HeaderNumber(v)
	if !ok {
		return DelayDecision{Action: Park, Reason: fmt.Sprintf("%s: %s", ReasonNotANumber, describeValue(v))}
	}
	if math.IsNaN(ms) {
		return DelayDecision{Action: Park, Reason: ReasonNotANumber + ": NaN"}
	}
	if ms <= 0 {
		return DelayDecision{Action: DeliverNow}
	}
	ms = math.Ceil(ms)
	if ms > float64(max/time.Millisecond) {
		if clamp {
			return DelayDecision{Action: Schedule, Delay: max, Reason: fmt.Sprintf("x-delay %.0fms clamped to the ladder's maximum %s", ms, FormatDelay(max))}
		}
		return DelayDecision{Action: Park, Reason: fmt.Sprintf("%s: %.0fms, the ladder holds at most %s", ReasonTooLong, ms, FormatDelay(max))}
	}
	return DelayDecision{Action: Schedule, Delay: time.Duration(ms) * time.Millisecond}
}

// FromReceipt counts a scheduled delay from when the broker received the
// message (HeaderReceivedMS), as the delayed-message plugin does, rather
// than from now: what is left of it at now, or DeliverNow once it has
// passed. Time spent waiting for the bridge (a backlog, a bridge that was
// down) then no longer adds to the delay. ok is false where the message
// carries no receipt time (the decision is returned as it was), or the
// decision is not to schedule. A receipt time after now (the broker's
// clock ahead of this one) counts as now: never early by this clock.
func (d DelayDecision) FromReceipt(headers map[string]any, now time.Time) (DelayDecision, bool) {
	if d.Action != Schedule {
		return d, false
	}
	ms, ok := HeaderNumber(headers[HeaderReceivedMS])
	if !ok || math.IsNaN(ms) || math.IsInf(ms, 0) || ms <= 0 {
		return d, false
	}
	waited := max(now.Sub(time.UnixMilli(int64(ms))), 0)
	if waited >= d.Delay {
		return DelayDecision{Action: DeliverNow, Reason: fmt.Sprintf("x-delay %s passed since the broker received it %s ago", FormatDelay(d.Delay), FormatDelay(waited.Truncate(time.Millisecond)))}, true
	}
	d.Delay -= waited
	return d, true
}

// describeValue says what a header value is, briefly: its type and, for
// short text, the text.
func describeValue(v any) string {
	switch s := v.(type) {
	case string:
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return fmt.Sprintf("the string %q", s)
	case []byte:
		return fmt.Sprintf("%d bytes", len(s))
	case bool:
		return fmt.Sprintf("the boolean %v", s)
	}
	return fmt.Sprintf("a %T", v)
}

// Bridge is a bridge's objects as found in a snapshot.
type Bridge struct {
	Exchange string
	Intake   Queue
	Due      Queue
	Parked   Queue
	// HasParked and HasDue report whether those queues were found.
	HasDue, HasParked bool
}

// DiscoverBridges finds the bridges of a snapshot by their intake queues
// (E.bridge.intake bound from a fanout exchange E), sorted by name.
func DiscoverBridges(s Snapshot) []Bridge {
	queues := map[string]Queue{}
	for _, q := range s.Queues {
		queues[q.Name] = q
	}
	var out []Bridge
	for _, q := range s.Queues {
		ex, ok := strings.CutSuffix(q.Name, bridgeIntake)
		if !ok || ex == "" {
			continue
		}
		b := Bridge{Exchange: ex, Intake: q}
		b.Due, b.HasDue = queues[ex+bridgeDue]
		b.Parked, b.HasParked = queues[ex+bridgeParked]
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Exchange < out[j].Exchange })
	return out
}

// BridgeQueueRegex matches the names of bridges' queues, for a filtered
// listing (the management API's use_regex).
const BridgeQueueRegex = `\.bridge\.(intake|due|parked)$`

// IsBridgeQueue reports whether name is one of a bridge's queues, and of
// which intake exchange.
func IsBridgeQueue(name string) (exchange string, ok bool) {
	for _, suf := range []string{bridgeIntake, bridgeDue, bridgeParked} {
		if ex, found := strings.CutSuffix(name, suf); found && ex != "" {
			return ex, true
		}
	}
	return "", false
}

// Waiting is how many of the bridge's messages wait outside the ladder:
// in the intake (not yet scheduled) and in the due queue (due, not yet
// out through the exit exchange).
func (b Bridge) Waiting() int64 {
	return b.Intake.Stats.Ready + b.Intake.Stats.Unacked + b.Due.Stats.Ready + b.Due.Stats.Unacked
}

// Lag is about how long a message waits in the intake before a bridge
// takes it, on top of its x-delay: the oldest message's age where the
// broker reports it (a classic intake whose producers set a timestamp),
// else the backlog over the rate the bridges take it at, since a quorum
// intake, the bridge's own, reports no head timestamp on any release.
// 0 when the intake is empty, or when nothing takes from it: then the
// wait has no bound, and the consumer count says so.
func (b Bridge) Lag() time.Duration {
	st := b.Intake.Stats
	if st.HeadAge > 0 {
		return st.HeadAge
	}
	if st.Ready > 0 && st.DeliverRate > 0 {
		return time.Duration(float64(st.Ready) / st.DeliverRate * float64(time.Second))
	}
	return 0
}

// Describe is the bridge's one line: its intake's depth, lag and
// consumers, what is due and not yet out, and what it parked.
func (b Bridge) Describe() string {
	s := fmt.Sprintf("bridge %s: intake %s", b.Exchange, Counted(int(b.Intake.Stats.Ready+b.Intake.Stats.Unacked), "message", "messages"))
	if b.Lag() > 0 {
		s += ", waiting about " + FormatDelay(b.Lag().Round(time.Second))
	}
	s += fmt.Sprintf(", %s", Counted(int(b.Intake.Stats.Consumers), "bridge consuming", "bridges consuming"))
	if b.HasDue {
		s += fmt.Sprintf("; %d due not yet out", b.Due.Stats.Ready+b.Due.Stats.Unacked)
	}
	if b.HasParked {
		s += fmt.Sprintf("; %d parked in %s", b.Parked.Stats.Ready+b.Parked.Stats.Unacked, b.Parked.Name)
	}
	return s
}
