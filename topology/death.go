package topology

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Headers RabbitMQ writes when it dead-letters a message or (quorum queues)
// delivers it again. They describe the message's past in one queue, so
// anything that republishes a message elsewhere must decide what to do with
// them: see StripBrokerHeaders.
const (
	HeaderDeath           = "x-death"
	HeaderFirstDeathQueue = "x-first-death-queue"
	HeaderDeliveryCount   = "x-delivery-count"
	// HeaderAcquiredCount is RabbitMQ 4.3's quorum count of every time a
	// message was handed to a consumer, whatever came back.
	HeaderAcquiredCount = "x-acquired-count"
)

// brokerHeaders are every header the broker owns: x-death, the
// x-first-death-* and x-last-death-* summaries and the quorum delivery and
// acquired counts.
var brokerHeaders = []string{
	HeaderDeath,
	HeaderFirstDeathQueue, "x-first-death-reason", "x-first-death-exchange",
	"x-last-death-queue", "x-last-death-reason", "x-last-death-exchange",
	HeaderDeliveryCount, HeaderAcquiredCount,
}

// Headers rungs writes. Values are plain AMQP types (long, longstr,
// timestamp, array of tables), so any client can read them.
const (
	// HeaderDelayMS is the delay a message was published with, in ms.
	HeaderDelayMS = "x-rungs-delay-ms"
	// HeaderAttempt counts the attempts a job has had: the retry library
	// sets it to n when it republishes a job after its n-th failure.
	HeaderAttempt = "x-rungs-attempt"
	// HeaderHistory is the retry history, an array of tables, oldest first
	// (see Attempt). It replaces x-death, which the library drops.
	HeaderHistory = "x-rungs-history"
	// HeaderReason says why a message was parked.
	HeaderReason = "x-rungs-reason"
	// HeaderQueue names the queue a parked job was consumed from, so that a
	// replay can send it back there.
	HeaderQueue = "x-rungs-queue"
	// HeaderParkedAt is when a message was parked.
	HeaderParkedAt = "x-rungs-parked-at"
	// HeaderSavedDeath keeps the x-death of a replayed message that was
	// sent into a ladder, where the original would trigger RabbitMQ's
	// dead-letter cycle detection (see StripBrokerHeaders).
	HeaderSavedDeath = "x-rungs-x-death"
	// HeaderReplayed counts the times a message was replayed.
	HeaderReplayed = "x-rungs-replayed"
	// HeaderReplayedFrom names the queue it was last replayed from.
	HeaderReplayedFrom = "x-rungs-replayed-from"
	// HeaderReplayedAt is when it was last replayed.
	HeaderReplayedAt = "x-rungs-replayed-at"
	// HeaderReplayID is unique per republish ("<run>.<n>"): two copies of a
	// message with different ids are a duplicate from a replay that was
	// interrupted, not two messages.
	HeaderReplayID = "x-rungs-replay-id"
)

// ErrBadHeader is returned for a header whose value has an unexpected shape.
var ErrBadHeader = errors.New("malformed header")

// Death is one entry of a message's x-death header: RabbitMQ adds one per
// (queue, reason) the message was dead-lettered from and counts repeats.
type Death struct {
	Queue  string // the queue the message was dead-lettered from
	Reason string // expired, rejected, maxlen or delivery_limit
	// Exchange and RoutingKeys are what the message had been published
	// with when it entered Queue (for a ladder hop: the exchange that routed
	// it into the rung, and the ladder key).
	Exchange    string
	RoutingKeys []string
	Count       int64
	// Time is when the message was first dead-lettered from Queue for
	// Reason (RabbitMQ keeps the first time and raises Count on repeats).
	// Whole seconds: AMQP timestamps have no finer resolution.
	Time time.Time
	// OriginalExpiration is the per-message TTL the message had, if any.
	OriginalExpiration string
}

// String reads as one line: "expired from jobs.rung.02 ×1 at 13:29:16".
func (d Death) String() string {
	s := fmt.Sprintf("%s from %s ×%d", d.Reason, d.Queue, d.Count)
	if !d.Time.IsZero() {
		s += " at " + d.Time.UTC().Format(time.TimeOnly)
	}
	return s
}

// ParseDeaths reads the x-death header of a message's headers, most recent
// first as RabbitMQ keeps it. No header is no deaths and no error; a header
// of another shape is ErrBadHeader. Values are accepted as amqp091 decodes
// them (int64, time.Time) and as JSON gives them (float64, json.Number,
// seconds), so headers from the management API parse too.
func ParseDeaths(headers map[string]any) ([]Death, error) {
	raw, ok := headers[HeaderDeath]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: x-death is a %T, not an array", ErrBadHeader, raw)
	}
	out := make([]Death, 0, len(list))
	for i, e := range list {
		t, ok := e.(map[string]any)
		if !ok {
			return out, fmt.Errorf("%w: x-death[%d] is a %T, not a table", ErrBadHeader, i, e)
		}
		d := Death{
			Queue: str(t["queue"]), Reason: str(t["reason"]), Exchange: str(t["exchange"]),
			OriginalExpiration: str(t["original-expiration"]),
		}
		d.Count, _ = HeaderInt(t["count"])
		d.Time, _ = HeaderTime(t["time"])
		if keys, ok := t["routing-keys"].([]any); ok {
			for _, k := range keys {
				d.RoutingKeys = append(d.RoutingKeys, str(k))
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// DeathHop is one line of a message's dead-letter timeline, with what the
// queue it left is, when a known ladder owns it.
type DeathHop struct {
	Death
	// Ladder names the ladder that owns Queue, "" if none does.
	Ladder string
	// Role is "rung", "done", "unroutable", "target" or "" (unknown).
	Role string
	// Rung is the rung Queue is, when Role is "rung".
	Rung Rung
	// Since is Time minus the earliest Time in the timeline.
	Since time.Duration
}

// Timeline orders deaths oldest first and names each queue's place in the
// given ladders. It is what a peek draws as the path a real message took.
//
// x-death cannot simply be read backwards: RabbitMQ puts the latest entry
// first but does not keep the others in order (3.10 reverses them at every
// dead-lettering), and its times are whole seconds, so a fast ladder's hops
// share one. Timeline therefore puts the first entry last and orders the
// others by time, then as a ladder visits its queues: rungs from the highest
// level down, then its done queue and destinations, then queues it does not
// know.
func Timeline(ds []Death, ladders []Ladder) []DeathHop {
	hops := make([]DeathHop, len(ds))
	for i, d := range ds {
		hops[i] = DeathHop{Death: d}
		for _, l := range ladders {
			if role, rung, ok := l.QueueRole(d.Queue); ok {
				hops[i].Ladder, hops[i].Role, hops[i].Rung = l.Name, role, rung
				break
			}
		}
	}
	if len(hops) > 1 {
		rest := append(make([]DeathHop, 0, len(hops)), hops[1:]...)
		sort.SliceStable(rest, func(i, j int) bool {
			a, b := rest[i], rest[j]
			if !a.Time.Equal(b.Time) {
				return a.Time.Before(b.Time)
			}
			if ra, rb := visitRank(a), visitRank(b); ra != rb {
				return ra < rb
			}
			return false
		})
		hops = append(rest, hops[0])
	}
	var first time.Time
	for _, h := range hops {
		if !h.Time.IsZero() && (first.IsZero() || h.Time.Before(first)) {
			first = h.Time
		}
	}
	for i := range hops {
		if !hops[i].Time.IsZero() {
			hops[i].Since = hops[i].Time.Sub(first)
		}
	}
	return hops
}

// visitRank orders hops that share a second the way a message passes
// through a ladder: its rungs from the highest level down, then its done
// queue and destinations; queues no ladder owns come last.
func visitRank(h DeathHop) int {
	switch h.Role {
	case RoleRung:
		return -1 - h.Rung.Level
	case "":
		return 1
	}
	return 0
}

// Queue roles QueueRole reports, besides RoleDone and RoleUnroutable.
const (
	RoleRung   = "rung"
	RoleTarget = "target"
)

// QueueRole says what a queue is to the ladder: one of its rungs (with the
// rung), a terminal (done, unroutable) or one of its destinations.
func (l Ladder) QueueRole(name string) (role string, rung Rung, ok bool) {
	if r, ok := l.rungIndex()[name]; ok {
		return RoleRung, r, true
	}
	for _, t := range l.Terminals() {
		if t.Queue == name {
			return t.Role, Rung{}, true
		}
	}
	for _, t := range l.Targets {
		if t == name {
			return RoleTarget, Rung{}, true
		}
	}
	return "", Rung{}, false
}

// StripBrokerHeaders returns a copy of headers without the ones the broker
// owns (x-death, x-first-death-*, x-last-death-*, x-delivery-count); the
// input is not modified.
//
// Anything that sends a message back into a ladder must do this. RabbitMQ
// drops, silently, a message that expires into a queue its x-death already
// names unless a rejection happened in between (dead-letter cycle
// detection), so a job retried through the same rungs twice would vanish.
// The quorum delivery count is the old queue's, meaningless in the next.
func StripBrokerHeaders(headers map[string]any) map[string]any {
	out := make(map[string]any, len(headers))
	for k, v := range headers {
		out[k] = v
	}
	for _, k := range brokerHeaders {
		delete(out, k)
	}
	return out
}

// Attempt is one entry of a job's retry history (HeaderHistory): the n-th
// failure, why, and what happened next.
type Attempt struct {
	N      int           // the attempt that failed, from 1
	At     time.Time     // when it failed (whole seconds on the wire)
	Reason string        // the error, cut to MaxReasonBytes
	Queue  string        // the queue the job was consumed from
	Delay  time.Duration // the delay it was retried after; 0 when parked
	Parked bool          // the last attempt: the job was parked
}

// MaxReasonBytes bounds a reason in a header: headers share the frame with
// the body's properties, and a stack trace per attempt would not fit.
const MaxReasonBytes = 240

// ParseHistory reads the retry history, oldest first. Entries it cannot
// read are skipped, so one bad writer does not hide the rest.
func ParseHistory(headers map[string]any) []Attempt {
	list, ok := headers[HeaderHistory].([]any)
	if !ok {
		return nil
	}
	var out []Attempt
	for _, e := range list {
		t, ok := e.(map[string]any)
		if !ok {
			continue
		}
		n, ok := HeaderInt(t["attempt"])
		if !ok {
			continue
		}
		a := Attempt{N: int(n), Reason: str(t["reason"]), Queue: str(t["queue"])}
		a.At, _ = HeaderTime(t["at"])
		if ms, ok := HeaderInt(t["delay-ms"]); ok {
			a.Delay = time.Duration(ms) * time.Millisecond
		}
		a.Parked, _ = t["parked"].(bool)
		out = append(out, a)
	}
	return out
}

// HistoryValue encodes a history as a header value (an array of tables),
// keeping the newest max entries. Times are whole seconds, as AMQP
// timestamps are.
func HistoryValue(h []Attempt, max int) []any {
	if max > 0 && len(h) > max {
		h = h[len(h)-max:]
	}
	out := make([]any, len(h))
	for i, a := range h {
		t := map[string]any{
			"attempt": int64(a.N),
			"at":      a.At.UTC().Truncate(time.Second),
			"reason":  CutReason(a.Reason),
		}
		if a.Queue != "" {
			t["queue"] = a.Queue
		}
		if a.Parked {
			t["parked"] = true
		} else {
			t["delay-ms"] = a.Delay.Milliseconds()
		}
		out[i] = t
	}
	return out
}

// CutReason shortens a reason to MaxReasonBytes on a rune boundary and folds
// it onto one line.
func CutReason(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= MaxReasonBytes {
		return s
	}
	cut := MaxReasonBytes - len("…")
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// HeaderInt reads an integer header value of any AMQP integer type, a whole
// float, a json.Number or a decimal string.
func HeaderInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case uint64:
		return int64(n), n <= math.MaxInt64
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	// The other types are exact as a float64.
	f, ok := HeaderNumber(v)
	if ok && f == math.Trunc(f) && math.Abs(f) < 1<<62 {
		return int64(f), true
	}
	return 0, false
}

// HeaderNumber reads a header value of any AMQP number type (integers of
// every width and sign, floats) as a float64: the one list of the Go
// types a number arrives as. Text is no number here.
func HeaderNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// HeaderTime reads a timestamp header value: an AMQP timestamp (time.Time), Unix
// seconds as a number, or RFC 3339 text.
func HeaderTime(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t.UTC(), true
	case string:
		p, err := time.Parse(time.RFC3339, t)
		return p.UTC(), err == nil
	}
	if s, ok := HeaderInt(v); ok {
		return time.Unix(s, 0).UTC(), true
	}
	return time.Time{}, false
}

// str reads a text header value (longstr arrives as string, some clients
// send byte arrays).
func str(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case []byte:
		return string(s)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// rungShape is what a ladder's rungs depend on.
type rungShape struct {
	name, layout  string
	unit          time.Duration
	levels, radix int
	queueType     QueueType
}

// rungIndexes caches each ladder shape's rungs by queue name: a scan asks
// QueueRole about every message it reads, and building the rung list (up
// to 28×15 names) for each was nine tenths of a scan's own time.
var rungIndexes = struct {
	sync.Mutex
	m map[rungShape]map[string]Rung
}{m: map[rungShape]map[string]Rung{}}

// rungIndexLimit bounds the cache; a process meets few ladder shapes.
const rungIndexLimit = 256

func (l Ladder) rungIndex() map[string]Rung {
	k := rungShape{l.Name, l.Layout, l.Unit, l.Levels, l.Radix, l.QueueType}
	rungIndexes.Lock()
	defer rungIndexes.Unlock()
	if idx, ok := rungIndexes.m[k]; ok {
		return idx
	}
	rs := l.Rungs()
	idx := make(map[string]Rung, len(rs))
	for _, r := range rs {
		idx[r.Queue] = r
	}
	if len(rungIndexes.m) >= rungIndexLimit {
		clear(rungIndexes.m)
	}
	rungIndexes.m[k] = idx
	return idx
}
