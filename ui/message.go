package ui

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// DefaultMaxBody is how much of each body a peek shows unless told.
const DefaultMaxBody = 2048

// Block is one labelled part of a message's description.
type Block struct {
	Label string
	// Head goes beside the label (body: its size and kind); Lines follow.
	Head  string
	Lines []string
	// Hops is set on the x-death blocks, which the console draws as a
	// timeline of its own from them; Lines is the plain drawing.
	Hops []topology.DeathHop
}

// MessageBlocks describes a message as labelled blocks, in the order peek
// shows them: exchange, routing key, properties, redelivered, headers,
// body (cut at maxBody bytes, 0: all), then its story: the x-death
// timeline, a replay's saved x-death, rungs' retry history and a direct
// ladder message's path.
func MessageBlocks(m broker.PeekedMessage, story topology.Story, maxBody int) []Block {
	ex := m.Exchange
	if ex == "" {
		ex = "(default exchange)"
	}
	red := "no"
	if m.Redelivered {
		red = "yes"
	}
	if m.DeliveryCount >= 0 {
		red += fmt.Sprintf(", x-delivery-count %d before this peek", m.DeliveryCount)
	}
	bs := []Block{
		{Label: "exchange", Lines: []string{ex}},
		{Label: "routing key", Lines: []string{m.RoutingKey}},
		{Label: "properties", Lines: []string{strings.Join(PropertyList(m), ", ")}},
		{Label: "redelivered", Lines: []string{red}},
	}
	if hs := HeaderLines(m.Headers); len(hs) > 0 {
		bs = append(bs, Block{Label: "headers", Lines: hs})
	}
	kind, body := Body(m.Body, m.ContentType, maxBody)
	bs = append(bs, Block{Label: "body", Head: fmt.Sprintf("%d bytes, %s", len(m.Body), kind), Lines: body})
	switch {
	case story.DeathErr != nil:
		bs = append(bs, Block{Label: "x-death", Lines: []string{story.DeathErr.Error()}})
	case len(story.Hops) > 0:
		bs = append(bs, Block{Label: "x-death", Lines: DeathLines(story.Hops), Hops: story.Hops})
	}
	if len(story.Saved) > 0 {
		bs = append(bs, Block{Label: "saved x-death", Lines: DeathLines(story.Saved), Hops: story.Saved})
	}
	if len(story.Retries) > 0 {
		bs = append(bs, Block{Label: "retries", Lines: HistoryLines(story.Retries)})
	}
	if story.Path != nil {
		bs = append(bs, Block{Label: "path", Lines: PathLines(*story.Path)})
	}
	return bs
}

// PathLines draws a direct ladder message's path, rebuilt from its routing
// key: the broker strips the BCC header that routes it, so a peek cannot
// show the keys it carries.
func PathLines(tr topology.Trace) []string {
	hops := make([]string, 0, len(tr.Hops)+1)
	for _, h := range tr.Hops {
		hops = append(hops, fmt.Sprintf("%s (%s)", h.Queue, topology.FormatDelay(h.TTL)))
	}
	hops = append(hops, tr.Target)
	return []string{
		fmt.Sprintf("%s to %s, rebuilt from the routing key (the broker strips BCC)", topology.FormatDelay(tr.Delay), tr.Target),
		"BCC " + strings.Join(tr.BCC, "  "),
		strings.Join(hops, " → "),
	}
}

// MessageText is a message as plain text, the way `rungs peek` prints it: a
// title line, then labelled blocks.
func MessageText(m broker.PeekedMessage, story topology.Story, maxBody int) []string {
	out := []string{fmt.Sprintf("#%d  %s", m.Position+1, messageID(m))}
	for _, b := range MessageBlocks(m, story, maxBody) {
		ls := b.Lines
		if b.Head != "" {
			ls = append([]string{b.Head}, ls...)
		}
		for i, l := range ls {
			label := ""
			if i == 0 {
				label = b.Label
			}
			out = append(out, fmt.Sprintf("  %-12s  %s", label, l))
		}
	}
	return out
}

func messageID(m broker.PeekedMessage) string {
	if m.MessageID == "" {
		return "(no message-id)"
	}
	return m.MessageID
}

// PropertyList lists a message's AMQP properties as "name value", the
// delivery mode first.
func PropertyList(m broker.PeekedMessage) []string {
	var ps []string
	if m.Persistent {
		ps = append(ps, "persistent")
	} else {
		ps = append(ps, "transient")
	}
	add := func(name, v string) {
		if v != "" {
			ps = append(ps, name+" "+v)
		}
	}
	add("content-type", m.ContentType)
	add("content-encoding", m.Properties.ContentEncoding)
	if !m.Timestamp.IsZero() {
		add("timestamp", m.Timestamp.UTC().Format(time.DateTime+" MST"))
	}
	add("correlation-id", m.Properties.CorrelationID)
	add("reply-to", m.Properties.ReplyTo)
	add("expiration", m.Properties.Expiration)
	add("type", m.Properties.Type)
	add("app-id", m.Properties.AppID)
	add("user-id", m.Properties.UserID)
	if m.Properties.Priority > 0 {
		add("priority", fmt.Sprint(m.Properties.Priority))
	}
	return ps
}

// shownElsewhere are headers drawn in blocks of their own.
var shownElsewhere = map[string]bool{
	topology.HeaderDeath: true, topology.HeaderSavedDeath: true, topology.HeaderHistory: true,
}

// HeaderLines prints headers as key=value, sorted, one per line, leaving
// out x-death, x-rungs-x-death and x-rungs-history (blocks of their own).
func HeaderLines(h map[string]any) []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		if !shownElsewhere[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = k + "=" + HeaderText(h[k])
	}
	return lines
}

// HeaderText shows a header value compactly: text as is, times in UTC,
// byte arrays in hex, tables and arrays as JSON.
func HeaderText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case map[string]any, []any:
		b, err := json.Marshal(JSONSafe(x))
		if err == nil {
			return string(b)
		}
	}
	return fmt.Sprint(v)
}

// JSONSafe converts header values to what encoding/json prints well: times
// as RFC 3339, byte arrays as base64, other odd types as text.
func JSONSafe(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = JSONSafe(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = JSONSafe(e)
		}
		return out
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case nil, string, bool, int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, float32, float64:
		return x
	}
	return fmt.Sprint(v)
}

// Body shows a body as pretty JSON, text or a hex dump, cut at max bytes
// (0: all). kind says which, and how much was cut.
func Body(body []byte, contentType string, max int) (kind string, lines []string) {
	cut := func(b []byte) ([]byte, string) {
		if max > 0 && len(b) > max {
			return b[:max], fmt.Sprintf(", first %d shown", max)
		}
		return b, ""
	}
	switch BodyKind(body, contentType) {
	case "empty":
		return "empty", nil
	case "JSON":
		var pretty bytes.Buffer
		if json.Indent(&pretty, bytes.TrimSpace(body), "", "  ") == nil {
			shown, note := cut(pretty.Bytes())
			return "JSON" + note, splitLines(string(shown))
		}
	case "text":
		shown, note := cut(body)
		for !utf8.Valid(shown) && len(shown) > 0 {
			shown = shown[:len(shown)-1]
		}
		return "text" + note, splitLines(string(shown))
	}
	shown, note := cut(body)
	return "binary, hex" + note, splitLines(hex.Dump(shown))
}

// BodyKind names how Body shows a body: "empty", "JSON", "text" or
// "binary". It formats nothing, so a list can name every visible body's
// kind each frame without pretty-printing it.
func BodyKind(body []byte, contentType string) string {
	if len(body) == 0 {
		return "empty"
	}
	trimmed := bytes.TrimSpace(body)
	looksJSON := strings.Contains(contentType, "json") || len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
	switch {
	case looksJSON && json.Valid(body):
		return "JSON"
	case utf8.Valid(body) && printable(body):
		return "text"
	}
	return "binary"
}

func printable(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if !unicode.IsPrint(r) && !unicode.IsSpace(r) {
			return false
		}
		b = b[n:]
	}
	return true
}

func splitLines(s string) []string {
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}

// DeathRows are the cells of a dead-letter timeline, one hop a row: since
// the first hop, queue, its place in a ladder, reason and count, time, and
// the exchange and keys it had entered the queue with.
func DeathRows(hops []topology.DeathHop) [][]string {
	rows := make([][]string, len(hops))
	for i, h := range hops {
		since := "+" + topology.FormatDelay(h.Since)
		if h.Time.IsZero() {
			since = "?"
		}
		role := h.Role
		switch h.Role {
		case topology.RoleRung:
			role = fmt.Sprintf("rung %d (%s)", h.Rung.Level, topology.FormatDelay(h.Rung.TTL))
		case "":
			role = "-"
		}
		at := ""
		if !h.Time.IsZero() {
			at = h.Time.UTC().Format(time.TimeOnly)
		}
		from := "from " + strings.TrimSpace(orDefault(h.Exchange)+" key "+strings.Join(h.RoutingKeys, ","))
		rows[i] = []string{since, h.Queue, role, fmt.Sprintf("%s ×%d", h.Reason, h.Count), at, from}
	}
	return rows
}

// DeathLines draws a timeline, one hop a line:
//
//	+0s  jobs.rung.02  rung 2 (4s)  expired ×1  13:29:12  from jobs.ingest key 0.1.0.1.work
func DeathLines(hops []topology.DeathHop) []string { return AlignRows(DeathRows(hops)) }

func orDefault(exchange string) string {
	if exchange == "" {
		return "(default exchange)"
	}
	return exchange
}

// HistoryLines draws a retry history, one attempt a line.
func HistoryLines(h []topology.Attempt) []string {
	rows := make([][]string, len(h))
	for i, a := range h {
		next := "retried after " + topology.FormatDelay(a.Delay)
		if a.Parked {
			next = "parked"
		}
		at := ""
		if !a.At.IsZero() {
			at = a.At.UTC().Format(time.DateTime)
		}
		rows[i] = []string{fmt.Sprintf("attempt %d", a.N), at, next, a.Reason}
	}
	return AlignRows(rows)
}

// AlignRows pads plain-text columns to a common width, two spaces apart,
// and trims each line's end.
func AlignRows(rows [][]string) []string {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		var b strings.Builder
		for j, c := range r {
			b.WriteString(c)
			if j < len(r)-1 {
				b.WriteString(strings.Repeat(" ", width[j]-utf8.RuneCountInString(c)+2))
			}
		}
		out[i] = strings.TrimRight(b.String(), " ")
	}
	return out
}
