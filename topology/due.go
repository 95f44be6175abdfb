package topology

import (
	"strings"
	"time"
)

// Headers `rungs scheduled` reads and writes.
const (
	// HeaderCeleryETA is the ISO 8601 time kombu stamps on a Celery task
	// published with eta or countdown: the worker runs it no earlier.
	HeaderCeleryETA = "eta"
	// HeaderCeleryID is a Celery task's id.
	HeaderCeleryID = "id"
	// HeaderRescheduledAt is when `rungs scheduled reschedule` put the
	// message back into a ladder (a timestamp), with x-rungs-delay-ms the
	// new delay: together they date it as a publish would.
	HeaderRescheduledAt = "x-rungs-rescheduled-at"
	// HeaderRescheduledFrom names the rung a rescheduled message was taken
	// from, and HeaderRescheduledDue the due time it had there (RFC 3339;
	// the earliest of its window).
	HeaderRescheduledFrom = "x-rungs-rescheduled-from"
	HeaderRescheduledDue  = "x-rungs-rescheduled-due"
	// HeaderScheduledRun names the action that moved a message: the same
	// action passing the rung its copy went to leaves it alone.
	HeaderScheduledRun = "x-rungs-scheduled-run"
)

// DueBasis says what a message's due time rests on.
type DueBasis string

// Bases of a due time, strongest first.
const (
	// DueRungs: rungs' own headers (the retry library's history, rungs
	// publish's delay and timestamp, a reschedule's time) date the message's
	// entry into its rung.
	DueRungs DueBasis = "rungs"
	// DueDeath: the broker's x-death dates its expiry out of the rung above.
	DueDeath DueBasis = "x-death"
	// DueETA: Celery's eta header, checked against where the message waits.
	DueETA DueBasis = "eta"
	// DueNone: nothing dates it; Due is the window its rung allows.
	DueNone DueBasis = "none"
)

// Due is when a message waiting in a rung leaves its ladder: a window,
// Earliest to Latest, that is exact (a second or so wide) when the message
// carries evidence, and as wide as its rung's TTL when it carries none.
// A due time is never made up: without evidence the window says so.
type Due struct {
	Estimate Estimate
	Earliest time.Time
	Latest   time.Time
	Basis    DueBasis
	// Why says what kept a better basis out, for DueNone (and for an eta
	// that disagrees with where the message waits).
	Why string
}

// Width is how uncertain the due time is.
func (d Due) Width() time.Duration { return d.Latest.Sub(d.Earliest) }

// Exact reports whether the window is no wider than the clock's whole
// second plus one unit of the ladder: precise enough to name one time.
func (d Due) Exact(unit time.Duration) bool { return d.Width() <= time.Second+unit }

// DueOf works out when message m, waiting in one of the ladder's rungs,
// leaves the ladder, as of now.
//
// Where it waits and its routing key bound it physically: it leaves its
// rung within the rung's TTL, then passes the rungs below (Estimate.After),
// so it leaves the ladder in [now+After, now+TTL+After]. Evidence narrows
// that window:
//
//   - an anchor EstimateRemaining accepts (x-death, rungs' headers): it
//     entered the rung in [Anchor, Anchor+1s) (recorded times are whole
//     seconds), so it leaves the ladder in that second plus TTL+After;
//   - a reschedule's x-rungs-rescheduled-at, on the first rung of the
//     path of the delay x-rungs-delay-ms records, likewise;
//   - Celery's eta on a Celery ladder: kombu sends the task through the
//     ladder with the eta's countdown in whole seconds, so it leaves within
//     the second before eta, and the worker runs it at eta: it is due at
//     eta exactly.
//
// Every window is clipped to the physical one, so a clock or header that
// disagrees with where the message waits can only narrow toward the truth;
// a window entirely outside it (an overdue rung, a stale header) falls back
// to the physical window with the reason in Why.
func (l Ladder) DueOf(m InFlight, now time.Time) (Due, error) {
	est, err := l.EstimateRemaining(m, now, 0)
	if err != nil {
		return Due{}, err
	}
	lo := now.Add(est.After)
	hi := lo.Add(est.Rung.TTL)
	d := Due{Estimate: est, Earliest: lo, Latest: hi, Basis: DueNone, Why: est.Why}
	var from, to time.Time
	var basis DueBasis
	switch {
	case l.Layout == "celery" && hasETA(m.Headers):
		eta, ok := celeryETA(m.Headers[HeaderCeleryETA])
		if !ok {
			d.Why = "its eta header is not an ISO 8601 time"
			return d, nil
		}
		from, to, basis = eta.Add(-time.Second), eta, DueETA
	case est.Basis == BasisDeath:
		from = est.Anchor.Add(est.Rung.TTL + est.After)
		to, basis = from.Add(time.Second), DueDeath
	case est.Basis != BasisNone:
		from = est.Anchor.Add(est.Rung.TTL + est.After)
		to, basis = from.Add(time.Second), DueRungs
	default:
		at, ok := l.rescheduledAt(m, est)
		if !ok {
			return d, nil
		}
		from = at.Add(est.Rung.TTL + est.After)
		to, basis = from.Add(time.Second), DueRungs
	}
	switch {
	case to.Before(lo):
		d.Why = "overdue: its " + string(basis) + " says it should have left its rung by " + to.UTC().Format(time.RFC3339)
		return d, nil
	case from.After(hi):
		d.Why = "its " + string(basis) + " dates it past the window its rung allows"
		return d, nil
	}
	d.Earliest, d.Latest, d.Basis, d.Why = maxTime(from, lo), minTime(to, hi), basis, ""
	if basis == DueETA {
		// It leaves the ladder in the second before its eta, and a worker
		// holds a task that arrives early until the eta: the task is due
		// at its eta, to the microsecond kombu wrote.
		d.Earliest, d.Latest = to, to
	}
	return d, nil
}

// rescheduledAt reads a reschedule's anchor: the first rung of the path of
// the delay it was rescheduled with, and no ladder x-death since.
func (l Ladder) rescheduledAt(m InFlight, est Estimate) (time.Time, bool) {
	at, ok := HeaderTime(m.Headers[HeaderRescheduledAt])
	if !ok || !est.OnPath || est.Before != 0 {
		return time.Time{}, false
	}
	ms, ok := HeaderInt(m.Headers[HeaderDelayMS])
	if !ok || time.Duration(ms)*time.Millisecond != est.Total {
		return time.Time{}, false
	}
	deaths, _ := ParseDeaths(m.Headers)
	for _, dd := range deaths {
		if role, _, ok := l.QueueRole(dd.Queue); ok && role == RoleRung && dd.Time.After(at) {
			return time.Time{}, false
		}
	}
	return at.UTC().Truncate(time.Second), true
}

func hasETA(h map[string]any) bool {
	v, ok := h[HeaderCeleryETA]
	return ok && v != nil
}

// celeryETA reads kombu's eta: Python's isoformat(), with or without a
// UTC offset (naive times are UTC, as Celery sends them with utc=True),
// with or without microseconds.
func celeryETA(v any) (time.Time, bool) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case []byte:
		s = string(x)
	case time.Time:
		return x, true
	default:
		return time.Time{}, false
	}
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// CeleryETA formats a time as kombu writes eta (isoformat with offset).
func CeleryETA(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000+00:00") }

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
