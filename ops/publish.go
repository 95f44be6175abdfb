package ops

import (
	"strconv"
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
