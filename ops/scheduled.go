package ops

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// Scheduled messages (issue 24): find the messages waiting in a ladder,
// when each is due and why we think so, and act on exactly those a filter
// selects. Reading is a scan of every rung (broker.Conn.Scan, a peek of
// the whole rung, weighed by GatePeek); acting is one broker Move per rung
// that holds every unselected message and republishes the selected ones
// with confirms (PlanAction).

// DefaultKeep is how many of the earliest-due matches a scan keeps.
const DefaultKeep = 200

// PreviewBytes is how much of a body a ScheduledMessage keeps.
const PreviewBytes = 120

// ScheduledMessage is one message waiting in a ladder, as a scan saw it.
type ScheduledMessage struct {
	Ladder string
	// Rung is the queue it waits in, Position its place there (0 the head)
	// when the scan read it.
	Rung     string
	Position int
	// Dest is the queue it is due at; Delay the whole delay its routing key
	// spells, RoutingKey that key.
	Dest       string
	Delay      time.Duration
	RoutingKey string
	// MessageID and CorrelationID are its properties; TaskID a Celery
	// task's id header.
	MessageID     string
	CorrelationID string
	TaskID        string
	// Earliest and Latest bound when it leaves the ladder (see
	// topology.Ladder.DueOf); Exact says the window is a second and a
	// ladder unit wide at most, so one time can be named.
	Earliest, Latest time.Time
	Exact            bool
	// Basis is the evidence the due time rests on; Why what kept better
	// evidence out (for topology.DueNone).
	Basis topology.DueBasis
	Why   string
	// Preview is the start of the body as text (invalid UTF-8 replaced),
	// BodyBytes its whole size.
	Preview     string
	BodyBytes   int
	ContentType string
	Headers     map[string]any
	Redelivered bool
	// SeenAt is when the scan read it: time left is counted from there.
	SeenAt time.Time
	// Stacked counts the older delay prefixes a Celery key still carries
	// (topology.CeleryStacked), RetriesLeft how many more delayed retries
	// a kombu that stacks them can publish before the key passes 255
	// bytes.
	Stacked, RetriesLeft int
	// destKey is the destination as its routing key names it ("" the
	// ladder's default): what a reschedule traces it to.
	destKey string
}

// Left is the time until it is due, at the earliest, from now; 0 when
// that has passed.
func (m ScheduledMessage) Left(now time.Time) time.Duration { return max(m.Earliest.Sub(now), 0) }

// Schedule describes delivery d, read from rung queue of ladder l at now.
// An error means d's routing key does not belong to the ladder, or queue
// is not one of its rungs.
func Schedule(l topology.Ladder, queue string, d broker.Delivery, pos int, now time.Time) (ScheduledMessage, error) {
	return schedule(l, defaultDest(l), queue, d, pos, now)
}

// defaultDest is where ladder l delivers a message whose key names no
// destination ("" when it cannot say).
func defaultDest(l topology.Ladder) string {
	if tr, err := l.Trace(l.Unit, ""); err == nil {
		return tr.Target
	}
	return ""
}

// schedule is Schedule with l's default destination worked out once, as
// a scan of a million messages needs it.
func schedule(l topology.Ladder, dflt, queue string, d broker.Delivery, pos int, now time.Time) (ScheduledMessage, error) {
	due, err := l.DueOf(topology.InFlight{Queue: queue, Key: d.RoutingKey, Headers: d.Headers, Timestamp: d.Timestamp}, now)
	if err != nil {
		return ScheduledMessage{}, err
	}
	m := ScheduledMessage{
		Ladder: l.Name, Rung: queue, Position: pos, Dest: due.Estimate.Dest, destKey: due.Estimate.Dest, Delay: due.Estimate.Total, RoutingKey: d.RoutingKey,
		MessageID: d.MessageID, CorrelationID: d.CorrelationID,
		Earliest: due.Earliest, Latest: due.Latest, Exact: due.Exact(l.Unit), Basis: due.Basis, Why: due.Why,
		BodyBytes: len(d.Body), ContentType: d.ContentType, Headers: d.Headers, Redelivered: d.Redelivered, SeenAt: now,
	}
	if l.Layout == "celery" {
		if id, ok := d.Headers[topology.HeaderCeleryID]; ok {
			m.TaskID = headerText(id)
		}
		m.Stacked, m.RetriesLeft = l.KeyStack(d.RoutingKey)
	}
	if m.Dest == "" {
		m.Dest = dflt
	}
	m.Preview = preview(d.Body)
	return m, nil
}

func headerText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// preview copies the start of a body, so that the body itself is not kept.
func preview(b []byte) string {
	if len(b) > PreviewBytes {
		b = b[:PreviewBytes]
	}
	return strings.ToValidUTF8(string(bytes.Clone(b)), string(utf8.RuneError))
}

// Filter selects scheduled messages; every field set must match. The zero
// Filter selects every message.
type Filter struct {
	// MessageID is the message-id property or a Celery task id; a trailing
	// "*" makes it a prefix.
	MessageID string
	// CorrelationID is the correlation-id property, exactly.
	CorrelationID string
	// Where are HEADER=VALUE terms in Where's language (as replay takes).
	Where []string
	// Body is text the body contains.
	Body string
	// Dest is the destination queue.
	Dest string
	// DueAfter keeps messages that may be due at or after it (their
	// window's end is not before it); DueBefore those that may be due
	// before it (their window's start is before it). A window straddling
	// either bound is kept: a filter never hides a message that may fire
	// in the span asked about.
	DueAfter, DueBefore time.Time
}

// Empty reports whether the filter selects everything.
func (f Filter) Empty() bool {
	return f.MessageID == "" && f.CorrelationID == "" && len(f.Where) == 0 && f.Body == "" && f.Dest == "" &&
		f.DueAfter.IsZero() && f.DueBefore.IsZero()
}

// String is the filter in words, for confirmations.
func (f Filter) String() string {
	var p []string
	add := func(k, v string) {
		if v != "" {
			p = append(p, k+" "+v)
		}
	}
	add("message-id", f.MessageID)
	add("correlation-id", f.CorrelationID)
	for _, w := range f.Where {
		add("header", w)
	}
	if f.Body != "" {
		add("body containing", strconv.Quote(f.Body))
	}
	add("destination", f.Dest)
	if !f.DueAfter.IsZero() {
		add("due after", f.DueAfter.UTC().Format(time.RFC3339))
	}
	if !f.DueBefore.IsZero() {
		add("due before", f.DueBefore.UTC().Format(time.RFC3339))
	}
	if len(p) == 0 {
		return "every message"
	}
	return strings.Join(p, ", ")
}

// Matcher is a checked Filter.
type Matcher struct {
	f     Filter
	where func(map[string]any) bool
}

// Compile checks the filter: a bad --where term or due bounds that
// exclude everything are FieldErrors ("where", "due").
func (f Filter) Compile() (Matcher, error) {
	m := Matcher{f: f}
	if len(f.Where) > 0 {
		w, err := Where(f.Where)
		if err != nil {
			return m, err
		}
		m.where = w
	}
	if !f.DueAfter.IsZero() && !f.DueBefore.IsZero() && !f.DueAfter.Before(f.DueBefore) {
		return m, fieldErr("due", "due after %s and before %s selects nothing", f.DueAfter.UTC().Format(time.RFC3339), f.DueBefore.UTC().Format(time.RFC3339))
	}
	return m, nil
}

// Match reports whether the filter selects message s, whose headers and
// body are those given (s keeps only a preview).
func (m Matcher) Match(s ScheduledMessage, body []byte) bool {
	f := m.f
	if f.MessageID != "" {
		if p, ok := strings.CutSuffix(f.MessageID, "*"); ok {
			if !strings.HasPrefix(s.MessageID, p) && !strings.HasPrefix(s.TaskID, p) {
				return false
			}
		} else if s.MessageID != f.MessageID && s.TaskID != f.MessageID {
			return false
		}
	}
	switch {
	case f.CorrelationID != "" && s.CorrelationID != f.CorrelationID,
		f.Dest != "" && s.Dest != f.Dest,
		!f.DueAfter.IsZero() && s.Latest.Before(f.DueAfter),
		!f.DueBefore.IsZero() && !s.Earliest.Before(f.DueBefore),
		f.Body != "" && !bytes.Contains(body, []byte(f.Body)),
		m.where != nil && !m.where(s.Headers):
		return false
	}
	return true
}

// ParseWhen reads a time a front end was given: RFC 3339, or a span from
// now ("90s", "2h", "1d"). The result must be after now.
func ParseWhen(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		if !t.After(now) {
			return t, fmt.Errorf("%s is in the past", s)
		}
		return t, nil
	}
	d, err := topology.ParseDelay(strings.TrimPrefix(s, "+"))
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time (2026-01-02T15:04:05Z) nor a span (90s, 2h)", s)
	}
	if d <= 0 {
		return time.Time{}, fmt.Errorf("%q is not in the future", s)
	}
	return now.Add(d), nil
}

// ScanRequest asks for a scan of one ladder.
type ScanRequest struct {
	Ladder topology.Ladder
	// Snap holds the ladder's queues as the broker lists them (type,
	// arguments, depth); Ladders the vhost's ladders, for the gate.
	Snap    topology.Snapshot
	Ladders []topology.Ladder
	Filter  Filter
	// Keep is how many of the earliest-due matches to keep (DefaultKeep).
	Keep            int
	Force, ReadOnly bool
}

// ScanRung is one rung a scan reads, and the gate's verdict on reading it.
type ScanRung struct {
	Queue topology.Queue
	Gate  PeekGate
}

// ScanPlan is a checked scan: the rungs to read, each gated.
type ScanPlan struct {
	Ladder topology.Ladder
	Rungs  []ScanRung
	// Ready is the rungs' depth as listed (statistics may lag).
	Ready  int
	Filter Filter
	Keep   int
	// Notes are what the gate says reading changes (quorum counts, a
	// rung not checked), once each.
	Notes   []string
	matcher Matcher
}

// ScanRefusal is a scan the peek gate refused for one rung.
type ScanRefusal struct {
	Rung string
	Gate PeekGate
}

func (e *ScanRefusal) Error() string { return e.Gate.Why }

// ErrNoRungs is a ladder none of whose rungs exist.
var ErrNoRungs = errors.New("none of the ladder's rungs exist")

// PlanScan checks a scan: the filter, and each existing rung through
// GatePeek (facts may be nil: quorum rungs are then unchecked, which the
// gate refuses without Force). A refusal is a *ScanRefusal for the first
// rung refused; read-only mode refuses what changes the broker.
func PlanScan(ctx context.Context, facts PeekFacter, req ScanRequest) (ScanPlan, error) {
	p := ScanPlan{Ladder: req.Ladder, Filter: req.Filter, Keep: req.Keep}
	if p.Keep <= 0 {
		p.Keep = DefaultKeep
	}
	var err error
	if p.matcher, err = req.Filter.Compile(); err != nil {
		return p, err
	}
	ladders := req.Ladders
	if len(ladders) == 0 {
		ladders = []topology.Ladder{req.Ladder}
	}
	noted := map[string]bool{}
	for _, r := range req.Ladder.Rungs() {
		q, ok := req.Snap.Queue(r.Queue)
		if !ok {
			continue
		}
		pr := PeekRequest{Queue: q, Ladders: ladders, Force: req.Force, ReadOnly: req.ReadOnly, LimitKnown: true}
		// A rung whose facts cannot be read is unchecked: a scan holds
		// every message of the rung, so it asks for force.
		if f, err := PeekFactsOf(ctx, facts, req.Ladder.Vhost, q); err != nil {
			pr.Unchecked = err
		} else if PeekReadsFacts(q) {
			pr.Version, pr.Limit, pr.LimitKnown, pr.DelayedRetries = f.Version, f.Limit, f.LimitKnown, f.DelayedRetries
		}
		g := GatePeek(pr)
		if g.Verdict != PeekOK {
			return p, &ScanRefusal{Rung: r.Queue, Gate: g}
		}
		if g.Note != "" {
			// Every rung of a ladder says the same but for its name.
			key := strings.ReplaceAll(g.Note, r.Queue, "")
			if !noted[key] {
				noted[key] = true
				p.Notes = append(p.Notes, g.Note)
			}
		}
		p.Rungs = append(p.Rungs, ScanRung{Queue: q, Gate: g})
		p.Ready += int(q.Stats.Ready)
	}
	if len(p.Rungs) == 0 {
		return p, fmt.Errorf("ladder %s: %w in vhost %s", req.Ladder.Name, ErrNoRungs, req.Ladder.Vhost)
	}
	return p, nil
}

// Scanner reads a queue without removing anything (*broker.Conn).
type Scanner interface {
	Scan(ctx context.Context, queue string, o broker.ScanOptions) (broker.ScanStats, error)
}

// ScanProgress is how far a scan is, for a bar.
type ScanProgress struct {
	Rung         string
	Index, Rungs int // the rung being read, of how many
	// Seen messages read so far, of Total (the listed depth; it can be
	// passed when statistics lag); Matched of them selected.
	Seen, Total, Matched int
	Elapsed              time.Duration
	Done                 bool
}

// Fraction is the share read, in [0, 1].
func (p ScanProgress) Fraction() float64 {
	if p.Done {
		return 1
	}
	if p.Total <= 0 {
		return 0
	}
	return min(float64(p.Seen)/float64(p.Total), 1)
}

// Horizons count messages by when they are due (their window's start),
// from when the scan read them.
type Horizons struct {
	Minute, Hour, Day, Later int
}

func (h *Horizons) add(left time.Duration) {
	switch {
	case left <= time.Minute:
		h.Minute++
	case left <= time.Hour:
		h.Hour++
	case left <= 24*time.Hour:
		h.Day++
	default:
		h.Later++
	}
}

// ForecastHorizons buckets a forecast's estimates (each counts what is due
// by its horizon, so a bucket is the difference of two) into the scan's
// horizons: what the rungs' depths say, beside what the messages say. A
// bucket is never negative: the estimates are not always nested.
func ForecastHorizons(fc topology.Forecast) Horizons {
	by := func(d time.Duration) int64 {
		for _, due := range fc.Due {
			if due.By == d {
				return due.Estimate
			}
		}
		return 0
	}
	m, h, d := by(time.Minute), by(time.Hour), by(24*time.Hour)
	return Horizons{Minute: int(m), Hour: int(max(0, h-m)), Day: int(max(0, d-h)), Later: int(fc.Later.Estimate)}
}

// forecastHorizons is ForecastHorizons of the plan's rungs as listed.
func (p ScanPlan) forecastHorizons() Horizons {
	stats := map[string]topology.QueueStats{}
	for _, r := range p.Rungs {
		stats[r.Queue.Name] = r.Queue.Stats
	}
	return ForecastHorizons(p.Ladder.Forecast(stats, topology.ForecastOptions{}))
}

// ScanResult is what a scan found.
type ScanResult struct {
	Ladder topology.Ladder
	// Messages are the Keep earliest-due matches, earliest first.
	Messages []ScheduledMessage
	// Seen messages were read (each once), Matched of them selected; Foreign could not
	// be placed in the ladder (a routing key of another ladder, put there
	// by hand) and match nothing.
	Seen, Matched, Foreign int
	// Stacked counts the matches whose Celery key carries older delay
	// prefixes, FewestRetriesLeft the fewest delayed retries any of them
	// has left (see StackedNote).
	Stacked, FewestRetriesLeft int
	// Horizons and Bases count every match, kept or not.
	Horizons Horizons
	// FromDepths is the estimate of the same horizons from the rungs'
	// depths when the scan was planned (the forecast the console shows).
	FromDepths Horizons
	Bases      map[topology.DueBasis]int
	// Recounted are messages read again in a lower rung after the scan had
	// read them in a higher one (they moved on while it read the rungs
	// between): they are counted once, where they were first read.
	Recounted int
	// Held is the longest any rung was held out of reach of expiry: what
	// the scan can have added to the lateness of messages it read.
	Held    time.Duration
	Rungs   []broker.ScanStats
	Started time.Time
	Elapsed time.Duration
	// Stopped is set when the scan was cancelled (broker.StopCancelled).
	Stopped string
}

// Run scans the plan's rungs one at a time, highest level first, holding
// each rung only while it is read. It keeps the Keep earliest-due matches
// and counts the rest, so its memory does not grow with the ladder.
// progress, if set, is called from Run's goroutine at most every 100 ms
// and once at the end (Done). A cancelled ctx ends the scan with what it
// found so far and ctx's error.
func (p ScanPlan) Run(ctx context.Context, s Scanner, progress func(ScanProgress)) (ScanResult, error) {
	res := ScanResult{Ladder: p.Ladder, Bases: map[topology.DueBasis]int{}, Started: time.Now(), FromDepths: p.forecastHorizons()}
	keep := &dueHeap{}
	rungs := p.ordered()
	pr := ScanProgress{Rungs: len(rungs), Total: p.Ready}
	var shown time.Time
	report := func(done bool) {
		if progress == nil || !done && time.Since(shown) < 100*time.Millisecond {
			return
		}
		shown = time.Now()
		pr.Seen, pr.Matched, pr.Elapsed, pr.Done = res.Seen, res.Matched, time.Since(res.Started), done
		if pr.Seen > pr.Total {
			pr.Total = pr.Seen
		}
		progress(pr)
	}
	var err error
	dflt := defaultDest(p.Ladder)
	read, budget := readRungs{}, headBudget
	for i, r := range rungs {
		pr.Index, pr.Rung = i, r.Queue.Name
		report(false)
		var st broker.ScanStats
		// A rung of level 0 hands its messages to their destination: none
		// of them can be met again, so none is remembered.
		_, rung, _ := p.Ladder.QueueRole(r.Queue.Name)
		level := rung.Level
		cur := &rungRead{began: time.Now(), head: map[uint64]int{}, keep: min(headKeep, budget)}
		st, err = s.Scan(ctx, r.Queue.Name, broker.ScanOptions{Listed: int(r.Queue.Stats.Messages()), Each: func(pm broker.PeekedMessage) {
			if read.readBefore(pm.Delivery) {
				res.Recounted++
				return
			}
			res.Seen++
			if level > 0 {
				cur.remember(pm.Delivery, pm.Position)
			}
			now := time.Now()
			m, err := schedule(p.Ladder, dflt, r.Queue.Name, pm.Delivery, pm.Position, now)
			if err != nil {
				res.Foreign++
				return
			}
			if !p.matcher.Match(m, pm.Body) {
				report(false)
				return
			}
			res.Matched++
			if m.Stacked > 0 {
				if res.Stacked == 0 || m.RetriesLeft < res.FewestRetriesLeft {
					res.FewestRetriesLeft = m.RetriesLeft
				}
				res.Stacked++
			}
			res.Bases[m.Basis]++
			res.Horizons.add(m.Earliest.Sub(now))
			pushKeep(keep, m, p.Keep)
			report(false)
		}})
		if level > 0 && st.Stopped == broker.ScanEmpty {
			cur.ended, cur.ttl, cur.whole = time.Now(), rung.TTL, st.Seen <= cur.keep
			budget -= min(st.Seen, cur.keep)
			read[r.Queue.Name] = cur
		}
		res.Rungs = append(res.Rungs, st)
		res.Held = max(res.Held, st.Held)
		if err != nil {
			break
		}
	}
	res.Messages = popAll(keep)
	res.Elapsed = time.Since(res.Started)
	if ctx.Err() != nil {
		res.Stopped = broker.StopCancelled
	}
	report(true)
	return res, err
}

// readRungs are the rungs a scan has read to the end, by queue.
type readRungs map[string]*rungRead

// rungRead is what a scan keeps of a rung it read: when, the rung's TTL,
// and fingerprints of the messages at its head. One TTL holds every
// message of a rung, so they leave it in queue order: the ones that move
// on while the scan reads lower rungs are its head.
type rungRead struct {
	began, ended time.Time
	ttl          time.Duration
	head         map[uint64]int
	// keep is how many of its first messages head holds at most; whole
	// says it holds every message read.
	keep  int
	whole bool
}

// A scan remembers up to headKeep messages of each rung's head, more than
// leave a rung in the seconds a scan of the lower rungs takes, and
// headBudget in all, so that its memory stays a few megabytes however
// large the ladder.
const (
	headKeep   = 20000
	headBudget = 200000
)

// remember records a message read at position pos of the rung.
func (rr *rungRead) remember(d broker.Delivery, pos int) {
	if pos < rr.keep {
		rr.head[fingerprint(d)]++
	}
}

// readBefore reports whether a message read now, in a lower rung, was read
// already in a higher one. Its x-death names the rung it expired from and
// when (whole seconds). If the scan read that rung and remembers a message
// of the same fingerprint at its head, which cannot have left before the
// read began, it is that message. Beyond the remembered head it is that
// message only if the times prove it: it expired after the rung's read
// ended, and had entered before the read began (its expiry less the
// rung's TTL), so it sat there, ready, while the scan read everything
// ready. Each bound takes the side that keeps a message rather than drop
// it: a message the scan did not see is never dropped.
//
// Without it, a scan of Celery's ladder on a loaded 3.10.8 listed 29
// messages for 20 tasks: a batch that moved from a rung read early to one
// read later was counted in both.
func (r readRungs) readBefore(d broker.Delivery) bool {
	if len(r) == 0 {
		return false
	}
	deaths, err := topology.ParseDeaths(d.Headers)
	if err != nil {
		return false
	}
	for _, death := range deaths {
		rr, ok := r[death.Queue]
		if !ok || death.Reason != "expired" || death.Time.IsZero() || death.Count != 1 {
			continue
		}
		if fp := fingerprint(d); rr.head[fp] > 0 && !death.Time.Before(rr.began.Truncate(time.Second)) {
			rr.head[fp]--
			return true
		}
		if rr.whole {
			continue
		}
		leftAfter := !death.Time.Before(rr.ended)
		enteredBefore := !death.Time.Add(time.Second - rr.ttl).After(rr.began)
		if leftAfter && enteredBefore {
			return true
		}
	}
	return false
}

// fingerprint identifies a message across a hop: everything a client set,
// none of what dead-lettering or a read changes (x-death and its kin, the
// delivery counts, the routing, the per-message TTL, the redelivered flag).
func fingerprint(d broker.Delivery) uint64 {
	h := fnv.New64a()
	for _, s := range [...]string{d.MessageID, d.CorrelationID, d.Type, d.AppID, d.ContentType, d.ContentEncoding, d.ReplyTo} {
		_, _ = io.WriteString(h, s)
		_, _ = h.Write([]byte{0})
	}
	var n [9]byte
	binary.LittleEndian.PutUint64(n[:8], uint64(d.Timestamp.Unix()))
	n[8] = d.Priority
	_, _ = h.Write(n[:])
	if len(d.Headers) > 0 {
		keys := make([]string, 0, len(d.Headers))
		for k := range d.Headers {
			if !hopHeader(k) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(h, "%q=%v|", k, d.Headers[k])
		}
	}
	_, _ = h.Write(d.Body)
	return h.Sum64()
}

// hopHeader reports whether the broker sets or changes a header as a
// message moves or is read.
func hopHeader(k string) bool {
	switch k {
	case topology.HeaderDeath, "x-delivery-count", "x-acquired-count", "CC", "BCC":
		return true
	}
	return strings.HasPrefix(k, "x-first-death-") || strings.HasPrefix(k, "x-last-death-")
}

// StackedNote says what stacked Celery keys mean, for a scan that found
// any; "" when it found none.
func (r ScanResult) StackedNote() string {
	if r.Stacked == 0 {
		return ""
	}
	left := "the longest cannot be retried with a delay again: its key would pass AMQP's 255 bytes and the retry would fail"
	if r.FewestRetriesLeft > 0 {
		left = fmt.Sprintf("the longest has %s with a delay left before its key passes AMQP's 255 bytes and the retry fails", topology.Counted(r.FewestRetriesLeft, "retry", "retries"))
	}
	return fmt.Sprintf("%s carry stacked delay prefixes in their routing keys (kombu before the fix for celery/kombu#2556 adds one per delayed retry); %s: upgrade kombu",
		topology.Counted(r.Stacked, "message", "messages"), left)
}

// ordered is the rungs highest level first. Messages only move down a
// ladder, so one that leaves a rung already read is met again in a lower
// one (a scan may count it twice, never miss it), and one leaving a rung
// not yet read is still ahead.
func (p ScanPlan) ordered() []ScanRung {
	rungs := append([]ScanRung(nil), p.Rungs...)
	level := func(r ScanRung) int {
		_, rung, _ := p.Ladder.QueueRole(r.Queue.Name)
		return rung.Level
	}
	sort.SliceStable(rungs, func(i, j int) bool { return level(rungs[i]) > level(rungs[j]) })
	return rungs
}

// dueHeap is a max-heap by due time: its root is the latest-due message
// kept, the one a sooner match replaces.
type dueHeap []ScheduledMessage

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if !h[i].Earliest.Equal(h[j].Earliest) {
		return h[i].Earliest.After(h[j].Earliest)
	}
	return h[i].Latest.After(h[j].Latest)
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)   { *h = append(*h, x.(ScheduledMessage)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// pushKeep adds m to h, keeping the n earliest.
func pushKeep(h *dueHeap, m ScheduledMessage, n int) {
	if h.Len() < n {
		heap.Push(h, m)
	} else if m.Earliest.Before((*h)[0].Earliest) {
		(*h)[0] = m
		heap.Fix(h, 0)
	}
}

// popAll empties h, earliest first.
func popAll(h *dueHeap) []ScheduledMessage {
	out := make([]ScheduledMessage, h.Len())
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(h).(ScheduledMessage)
	}
	return out
}
