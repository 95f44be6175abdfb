package ops

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// Delayed describes messages to publish into a ladder along Trace.
type Delayed struct {
	Trace topology.Trace
	Body  []byte
	// ContentType "" picks one from the body (see ContentType).
	ContentType string
	// Headers are the caller's; the delay header is added to a copy.
	Headers    map[string]any
	Persistent bool
	// IDPrefix, if set, gives message i the message-id IDPrefix+i,
	// counting from 1, to find every one at the destination.
	IDPrefix string
}

// ContentType is the content type a publish sends: ct if given, else
// text/plain for a UTF-8 body and application/octet-stream for any other.
func ContentType(ct string, body []byte) string {
	switch {
	case ct != "":
		return ct
	case utf8.Valid(body):
		return "text/plain"
	}
	return "application/octet-stream"
}

// Messages builds messages first to first+n-1 (numbered from 1), stamped
// with now. Each carries the requested delay in topology.HeaderDelayMS,
// so that a peek or a consumer can tell how late it arrived.
func (d Delayed) Messages(first, n int, now time.Time) []broker.Message {
	headers := make(map[string]any, len(d.Headers)+1)
	for k, v := range d.Headers {
		headers[k] = v
	}
	headers[topology.HeaderDelayMS] = d.Trace.Delay.Milliseconds()
	ct := ContentType(d.ContentType, d.Body)
	msgs := make([]broker.Message, n)
	for i := range msgs {
		msgs[i] = broker.Message{
			Exchange: d.Trace.Exchange, RoutingKey: d.Trace.Key, BCC: d.Trace.BCC, Body: d.Body, Headers: headers,
			ContentType: ct, Persistent: d.Persistent, Timestamp: now,
		}
		if d.IDPrefix != "" {
			msgs[i].MessageID = d.IDPrefix + strconv.Itoa(first+i)
		}
	}
	return msgs
}

// MaxBody is the largest body a publish sends: RabbitMQ's default
// max_message_size. A larger one would close the channel mid-run.
const MaxBody = 128 << 20

// Check refuses, before anything is sent, what the broker or AMQP would
// refuse halfway through publishing count messages: no messages, a body
// over MaxBody, a content type or message id longer than a short string,
// a body that is not the UTF-8 its content type promises. It returns a
// *FieldError naming "count", "body", "content-type" or "id-prefix".
func (d Delayed) Check(count int) error {
	switch {
	case count < 1:
		return fieldErr("count", "must be at least 1, got %d", count)
	case len(d.Body) > MaxBody:
		return fieldErr("body", "is %d bytes; the broker accepts at most %d", len(d.Body), MaxBody)
	case len(d.ContentType) > topology.MaxShortString:
		return fieldErr("content-type", "is %d bytes; AMQP allows at most %d", len(d.ContentType), topology.MaxShortString)
	case d.IDPrefix != "" && len(d.IDPrefix)+len(strconv.Itoa(count)) > topology.MaxShortString:
		return fieldErr("id-prefix", "makes message ids of up to %d bytes; AMQP allows at most %d", len(d.IDPrefix)+len(strconv.Itoa(count)), topology.MaxShortString)
	case textual(d.ContentType) && !utf8.Valid(d.Body):
		return fieldErr("body", "is not valid UTF-8 but content type %s says text; use application/octet-stream for binary bodies", d.ContentType)
	}
	return nil
}

// textual reports whether a content type promises UTF-8 text.
func textual(ct string) bool {
	ct = strings.ToLower(ct)
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(mt)
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		strings.Contains(strings.ReplaceAll(ct, " ", ""), "charset=utf-8")
}

// MaxUnpaced is the most messages one publish sends without a rate:
// enough to watch a ladder work or load it for a test, not enough to
// flood a broker by a slipped key. A paced publish (a rate) may send any
// number: the rate bounds what reaches the broker. The console's form has
// no rate, so this is its cap.
const MaxUnpaced = 10000

// Unpaced is the rate of a publish that goes as fast as confirms allow on
// purpose ("max"): any count may be sent so.
var Unpaced = math.Inf(1)

// ErrNeedsRate is why a count above MaxUnpaced was refused without a rate.
var ErrNeedsRate = errors.New("needs a rate")

// PublishRequest is a publish as an operator asks for it, from rungs
// publish or the console's form: Count messages delayed by Delay through
// Ladder to Dest ("" for the ladder's default), at most Rate a second (0:
// as fast as confirms allow; Unpaced: the same, asked for, so any Count).
// Message's Trace is Plan's to set.
type PublishRequest struct {
	Ladder  topology.Ladder
	Delay   time.Duration
	Dest    string
	Message Delayed
	Count   int
	Rate    float64
}

// Check refuses what is wrong in the request itself, before the broker is
// read: the one count rule (at least 1; more than MaxUnpaced only with a
// rate) and what Delayed.Check refuses. It returns a *FieldError.
func (r PublishRequest) Check() error {
	if r.Rate < 0 {
		return fieldErr("rate", "cannot be negative")
	}
	if err := CheckCount(r.Count, r.Rate); err != nil {
		return err
	}
	return r.Message.Check(r.Count)
}

// CheckCount is the one count rule of a publish of count messages at rate
// a second (0: no rate given): at least 1, and more than MaxUnpaced only
// with a rate, Unpaced included. The refusal wraps ErrNeedsRate and says
// how to go on.
func CheckCount(count int, rate float64) error {
	switch {
	case count < 1:
		return fieldErr("count", "must be at least 1, got %d", count)
	case count > MaxUnpaced && rate == 0:
		return fieldErr("count", "of %d %w: more than %d messages at once could flood the broker; give a rate (1000/s) to pace them, or the rate max to publish as fast as confirms allow", count, ErrNeedsRate, MaxUnpaced)
	}
	return nil
}

// Plan checks the request, traces the delay through the ladder and checks
// the route over g, the broker's bindings (nil: not checked; the
// mandatory flag catches the rest): the messages to send, or why none may
// be sent (a *RouteError when the bindings would not deliver them).
func (r PublishRequest) Plan(g *topology.Graph) (Delayed, error) {
	if err := r.Check(); err != nil {
		return Delayed{}, err
	}
	tr, err := Route(r.Ladder, r.Delay, r.Dest, g)
	if err != nil {
		return Delayed{}, err
	}
	d := r.Message
	d.Trace = tr
	return d, nil
}

// publishBatch bounds how many messages are in memory and in flight at once.
const publishBatch = 5000

// Send publishes count of the messages d builds, numbered from 1, in
// batches with confirms, holding back so that at most rate go a second
// (0 or +Inf: no pace). It returns what the broker answered so far, also
// when ctx ends or a batch fails, with that error.
func (d Delayed) Send(ctx context.Context, pub broker.Publisher, count int, rate float64) (broker.PublishResult, error) {
	var total broker.PublishResult
	start := time.Now()
	batch := publishBatch
	if math.IsInf(rate, 1) {
		rate = 0
	}
	if rate > 0 {
		// A twentieth of a second's worth at a time keeps the pace even
		// without a timer per message.
		batch = max(1, min(publishBatch, int(rate/20)))
	}
	for sent := 0; sent < count; {
		if wait := paceWait(sent, rate, time.Since(start)); wait > 0 {
			select {
			case <-ctx.Done():
				return total, ctx.Err()
			case <-time.After(wait):
			}
		}
		n := min(batch, count-sent)
		res, err := pub.Publish(ctx, d.Messages(sent+1, n, time.Now()))
		total.Confirmed += res.Confirmed
		total.Returned += res.Returned
		total.Nacked += res.Nacked
		total.Failed += res.Failed
		sent += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// paceWait is how long to hold back before the next batch so that sent
// messages after elapsed stay within rate a second (0: no cap).
func paceWait(sent int, rate float64, elapsed time.Duration) time.Duration {
	if rate <= 0 {
		return 0
	}
	return max(0, time.Duration(float64(sent)/rate*float64(time.Second))-elapsed)
}
