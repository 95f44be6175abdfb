package topology

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Headers migrate writes.
const (
	// HeaderMigrated is a table on a message migrated into another ladder:
	// from, from-layout, from-queue, to, to-layout, at (a timestamp),
	// delay-ms (what its old key spelled), remaining-ms (what it was
	// published into the new ladder with) and basis (see Basis).
	HeaderMigrated = "x-rungs-migrated"
	// HeaderRemainingMS is the remaining delay migrate estimated for a
	// message it could not place and parked instead, in ms.
	HeaderRemainingMS = "x-rungs-remaining-ms"
)

// Errors EstimateRemaining and Place fail with.
var (
	ErrNotRung  = errors.New("not a rung of the ladder")
	ErrNotBound = errors.New("destination is not bound to the ladder")
)

// InFlight is a message waiting in one of a ladder's rungs, as a consumer
// of that rung sees it.
type InFlight struct {
	Queue     string // the rung it was taken from
	Key       string // its routing key (dead-lettering keeps it)
	Headers   map[string]any
	Timestamp time.Time // the timestamp property; zero if unset
}

// Basis says what an Estimate of the time already spent in the current rung
// rests on.
type Basis string

// Bases, from the strongest evidence to none.
const (
	// BasisDeath: the message expired out of the rungs above this one, and
	// x-death records when (the broker's clock). It entered this rung when
	// it left the last of them.
	BasisDeath Basis = "x-death"
	// BasisRetry: this is the first rung of its path, and rungs' retry
	// library published it (x-rungs-history's last entry, with this delay).
	BasisRetry Basis = "x-rungs-history"
	// BasisPublish: this is the first rung of its path, and `rungs publish`
	// published it (timestamp property, x-rungs-delay-ms of this delay).
	BasisPublish Basis = "timestamp"
	// BasisNone: nothing trustworthy says when it entered this rung; it is
	// assumed to have just entered (it cannot be early, only late, by up to
	// the rung's TTL).
	BasisNone Basis = "none"
)

// Estimate is a message's remaining delay, worked out from where it waits,
// its routing key and its headers.
type Estimate struct {
	Rung Rung
	// Total is the delay the routing key spells, and Dest its destination.
	Total time.Duration
	Dest  string
	// OnPath says the key's path passes through Rung (it always does,
	// unless the message was put there by hand). Before is the time the
	// path spends in the rungs above Rung (OnPath only); After is the time
	// it will spend in the rungs below once it leaves Rung.
	OnPath bool
	Before time.Duration
	After  time.Duration
	// Anchor is the whole-second time the message entered Rung according to
	// Basis (the event that put it there, truncated); zero for BasisNone.
	Anchor time.Time
	// Spent is a lower bound of the time it has been in Rung, in [0, TTL].
	Spent time.Duration
	// Remaining is Rung.TTL - Spent + After: never less than the time the
	// message would still spend in this ladder.
	Remaining time.Duration
	Basis     Basis
	// Why explains a BasisNone when a better basis was looked for.
	Why string
}

// Due is when the message would leave the ladder, at the earliest, as of
// now: now + Remaining.
func (e Estimate) Due(now time.Time) time.Time { return now.Add(e.Remaining) }

// EstimateRemaining works out how long a message waiting in one of the
// ladder's rungs still has to wait, so that it can be moved into another
// ladder without ever arriving before it would have here.
//
// Where the message waits and its routing key fix its future exactly: it
// stays in the rung until the rung's TTL is up, then passes the rungs of the
// key's lower digits, After in all. Only the time it has already spent in the
// rung is unknown; it lies in [0, TTL], and Remaining takes a lower bound of
// it, so that Remaining is never less than the truth:
//
//	Remaining = TTL - Spent + After,  Spent = clamp(now - (Anchor + 1s + margin), 0, TTL)
//
// Anchor is the recorded time of the event that put the message into the
// rung. Recorded times are whole seconds, truncated, so the event happened
// before Anchor+1s; margin covers the rest: the time between the event and
// the message's arrival in the rung (a publisher stamps a message before it
// sends it, perhaps in a batch) and the recorder's clock being behind this
// host's. The estimate is never early as long as those stay within margin.
// Anchors, in order:
//
//   - BasisDeath: x-death's most recent entry is the expiry out of a rung of
//     this ladder, and the ladder's entries are exactly the key's path above
//     this rung (each expired once, with this key): the latest of their times.
//   - BasisRetry: this is the path's first rung, no rung of the ladder is in
//     x-death, and x-rungs-history's last entry retried with this delay.
//   - BasisPublish: likewise, no history, x-rungs-delay-ms is this delay and
//     the timestamp property is set: rungs publish stamps both.
//
// An anchor must also be no older than any later handling of the message
// that rungs records (x-rungs-replayed-at, x-rungs-parked-at, history and
// x-death times): a message replayed or parked since then re-entered a
// ladder later than the anchor says. Without an anchor, Spent is 0.
//
// The estimate trusts what rungs and RabbitMQ write. A message some other
// tool copied into the ladder while keeping old x-death or timestamps could
// make Spent too large; none of rungs' own tools (publish, replay, migrate,
// the retry library) can.
func (l Ladder) EstimateRemaining(m InFlight, now time.Time, margin time.Duration) (Estimate, error) {
	role, rung, ok := l.QueueRole(m.Queue)
	if !ok || role != RoleRung {
		return Estimate{}, fmt.Errorf("%w: %q is not a rung of %s", ErrNotRung, m.Queue, l.Name)
	}
	units, dest, err := l.layout().Decode(l, m.Key)
	if err != nil {
		return Estimate{}, err
	}
	below := pow(l.Radix, rung.Level) // units per step of the rung's digit
	e := Estimate{
		Rung: rung, Total: time.Duration(units) * l.Unit, Dest: dest,
		After:  time.Duration(units%below) * l.Unit,
		OnPath: int(units/below%uint64(l.Radix)) == rung.Digit,
		Basis:  BasisNone,
	}
	if e.OnPath {
		e.Before = e.Total - time.Duration(units%(below*uint64(l.Radix)))*l.Unit
	}
	e.Anchor, e.Basis, e.Why = l.anchor(m, e, units)
	if e.Basis != BasisNone {
		e.Spent = now.Sub(e.Anchor.Add(time.Second + max(margin, 0)))
	}
	e.Spent = min(max(e.Spent, 0), rung.TTL)
	e.Remaining = rung.TTL - e.Spent + e.After
	return e, nil
}

// anchor finds when the message entered its rung (see EstimateRemaining).
func (l Ladder) anchor(m InFlight, e Estimate, units uint64) (time.Time, Basis, string) {
	if !e.OnPath {
		return time.Time{}, BasisNone, "its routing key's path does not pass this rung"
	}
	deaths, err := ParseDeaths(m.Headers)
	if err != nil {
		return time.Time{}, BasisNone, err.Error()
	}
	// latest is the newest time rungs or the broker recorded for anything
	// that happened to the message; an anchor older than it is stale.
	var latest time.Time
	later := func(t time.Time, ok bool) {
		if ok && t.After(latest) {
			latest = t
		}
	}
	later(HeaderTime(m.Headers[HeaderReplayedAt]))
	later(HeaderTime(m.Headers[HeaderParkedAt]))
	history := ParseHistory(m.Headers)
	for _, a := range history {
		later(a.At, !a.At.IsZero())
	}
	var rungDeaths []Death
	for _, d := range deaths {
		later(d.Time, !d.Time.IsZero())
		if role, _, ok := l.QueueRole(d.Queue); ok && role == RoleRung {
			rungDeaths = append(rungDeaths, d)
		}
	}
	fresh := func(t time.Time) bool { return !t.IsZero() && !latest.After(t) }

	if len(rungDeaths) > 0 {
		if role, _, ok := l.QueueRole(deaths[0].Queue); !ok || role != RoleRung {
			return time.Time{}, BasisNone, "x-death's latest entry is not a rung of " + l.Name
		}
		var sum time.Duration
		var at time.Time
		for _, d := range rungDeaths {
			_, r, _ := l.QueueRole(d.Queue)
			switch {
			case d.Reason != "expired" || d.Count != 1 || d.Time.IsZero():
				return time.Time{}, BasisNone, fmt.Sprintf("x-death: %s, not one expiry", d)
			case r.Level <= e.Rung.Level:
				return time.Time{}, BasisNone, "x-death names a rung at or below this one (" + d.Queue + ")"
			case int(units/pow(l.Radix, r.Level)%uint64(l.Radix)) != r.Digit:
				return time.Time{}, BasisNone, "x-death names a rung off the key's path (" + d.Queue + ")"
			case len(d.RoutingKeys) > 0 && d.RoutingKeys[0] != m.Key:
				return time.Time{}, BasisNone, "x-death records another routing key for " + d.Queue
			}
			sum += r.TTL
			if d.Time.After(at) {
				at = d.Time
			}
		}
		switch {
		case sum != e.Before:
			return time.Time{}, BasisNone, fmt.Sprintf("x-death records %s of rungs above this one, the key's path %s", FormatDelay(sum), FormatDelay(e.Before))
		case !fresh(at):
			return time.Time{}, BasisNone, "handled again after its last expiry (replayed or parked)"
		}
		return at, BasisDeath, ""
	}
	if e.Before != 0 {
		return time.Time{}, BasisNone, "x-death records none of the rungs above this one"
	}
	if n := len(history); n > 0 {
		last := history[n-1]
		if last.Parked || last.Delay != e.Total || !fresh(last.At) {
			return time.Time{}, BasisNone, "x-rungs-history's last entry is not this delay's retry"
		}
		return last.At, BasisRetry, ""
	}
	delay, ok := HeaderInt(m.Headers[HeaderDelayMS])
	switch {
	case !ok:
		return time.Time{}, BasisNone, "no x-death, x-rungs-history or x-rungs-delay-ms"
	case time.Duration(delay)*time.Millisecond != e.Total:
		return time.Time{}, BasisNone, "x-rungs-delay-ms is another delay than its key's"
	case m.Timestamp.IsZero():
		return time.Time{}, BasisNone, "no timestamp property"
	}
	ts := m.Timestamp.UTC().Truncate(time.Second)
	if !fresh(ts) {
		return time.Time{}, BasisNone, "handled again after it was published (replayed or parked)"
	}
	return ts, BasisPublish, ""
}

// pow is radix^n; Normalize guarantees radix^Levels fits a uint64.
func pow(radix, n int) uint64 {
	p := uint64(1)
	for i := 0; i < n; i++ {
		p *= uint64(radix)
	}
	return p
}

// Place traces a message moved in from elsewhere: Trace's checks, and the
// destination must be one the ladder delivers to (its default when dest is
// empty, else a bound target), since a prefix ladder would otherwise take it
// to its unroutable queue rather than refuse it.
func (l Ladder) Place(d time.Duration, dest string) (Trace, error) {
	tr, err := l.Trace(d, dest)
	if err != nil {
		return tr, err
	}
	if dest != "" && !slices.Contains(l.Targets, dest) {
		return tr, fmt.Errorf("%w: %q is not bound to %s", ErrNotBound, dest, l.Name)
	}
	return tr, nil
}

// Migration moves messages in flight from one ladder into another.
type Migration struct {
	From, To Ladder
	// Dest is the destination in To for messages whose key names none
	// ("" is To's default, its done queue).
	Dest string
	// Margin is added to the uncertainty of recorded times (see
	// EstimateRemaining).
	Margin time.Duration
}

// Placement is what a Migration does with one message.
type Placement struct {
	Estimate Estimate
	// Dest is its destination in the target ladder.
	Dest string
	// Trace is its path through the target ladder, when it can be placed.
	Trace Trace
	// Park is why it cannot be placed (it then goes to a parking queue);
	// "" when it can. Reasons are worded to group alike messages.
	Park string
}

// Place works out where one message waiting in a rung of From goes in To:
// its remaining delay, rounded up to To's unit, to the destination its key
// names (or Dest).
func (g Migration) Place(m InFlight, now time.Time) Placement {
	est, err := g.From.EstimateRemaining(m, now, g.Margin)
	p := Placement{Estimate: est}
	switch {
	case errors.Is(err, ErrNotRung):
		p.Park = err.Error()
		return p
	case err != nil:
		p.Park = "its routing key does not belong to ladder " + g.From.Name
		return p
	}
	p.Dest = est.Dest
	if p.Dest == "" {
		p.Dest = g.Dest
	}
	tr, err := g.To.Place(est.Remaining, p.Dest)
	switch {
	case err == nil:
		p.Trace = tr
	case errors.Is(err, ErrDelayTooLong):
		p.Park = fmt.Sprintf("its remaining delay exceeds the maximum of ladder %s (%s)", g.To.Name, FormatDelay(g.To.MaxDelay()))
	case errors.Is(err, ErrNoDest):
		p.Park = fmt.Sprintf("ladder %s (%s) has no destinations; the message is for %s", g.To.Name, g.To.Layout, p.Dest)
	case errors.Is(err, ErrBadDest) && p.Dest == "":
		p.Park = fmt.Sprintf("ladder %s (%s) needs a destination and the message names none (see --dest)", g.To.Name, g.To.Layout)
	case errors.Is(err, ErrNotBound):
		p.Park = fmt.Sprintf("destination %s is not bound to ladder %s", p.Dest, g.To.Name)
	default:
		p.Park = err.Error()
	}
	return p
}
