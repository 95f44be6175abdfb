package topology

import (
	"errors"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// expired is an x-death entry as amqp091 decodes it.
func expired(queue, key string, count int64, at time.Time) map[string]any {
	return map[string]any{"queue": queue, "reason": "expired", "count": count, "time": at,
		"exchange": "x", "routing-keys": []any{key}}
}

func TestEstimateRemaining(t *testing.T) {
	// 5 binary levels of 100ms: rungs of 1.6s, 800ms, 400ms, 200ms, 100ms.
	suffix := mustLadder(t, Ladder{Name: "s", Layout: "suffix", Unit: 100 * time.Millisecond, Levels: 5})
	prefix4 := mustLadder(t, Ladder{Name: "p", Unit: time.Second, Levels: 3, Radix: 4, Targets: []string{"work"}})
	now := time.Date(2026, 3, 1, 12, 0, 10, 500e6, time.UTC)
	sec := func(s int) time.Time { return time.Date(2026, 3, 1, 12, 0, s, 0, time.UTC) }
	// Key 1.0.1.1.0 = 2.2s: s.delay.16 (1.6s), s.delay.4 (400ms), s.delay.2 (200ms).
	const key = "1.0.1.1.0"
	cases := map[string]struct {
		l         Ladder
		m         InFlight
		margin    time.Duration
		basis     Basis
		spent     time.Duration
		remaining time.Duration
		why       string
	}{
		"second rung, x-death from the first": {
			l: suffix, m: InFlight{Queue: "s.delay.4", Key: key, Headers: map[string]any{
				HeaderDeath: []any{expired("s.delay.16", key, 1, sec(9))}}},
			// Entered before 12:00:10; now is 12:00:10.5: at least 500ms
			// spent, more than the rung's 400ms: it is only left to pass
			// s.delay.2.
			basis: BasisDeath, spent: 400 * time.Millisecond, remaining: 200 * time.Millisecond,
		},
		"the margin is subtracted from the time spent": {
			l: suffix, m: InFlight{Queue: "s.delay.4", Key: key, Headers: map[string]any{
				HeaderDeath: []any{expired("s.delay.16", key, 1, sec(9))}}},
			margin: 300 * time.Millisecond, basis: BasisDeath, spent: 200 * time.Millisecond, remaining: 200*time.Millisecond + 200*time.Millisecond,
		},
		"third rung, two expiries in any order": {
			l: suffix, m: InFlight{Queue: "s.delay.2", Key: key, Headers: map[string]any{
				HeaderDeath: []any{expired("s.delay.4", key, 1, sec(10)), expired("s.delay.16", key, 1, sec(9))}}},
			// Entered before 12:00:11: nothing spent for sure.
			basis: BasisDeath, spent: 0, remaining: 200 * time.Millisecond,
		},
		"first rung, published by rungs": {
			l: suffix, m: InFlight{Queue: "s.delay.16", Key: key, Timestamp: sec(8).Add(700 * time.Millisecond),
				Headers: map[string]any{HeaderDelayMS: int64(2200)}},
			basis: BasisPublish, spent: 1500 * time.Millisecond, remaining: 700 * time.Millisecond,
		},
		"overdue: the time spent is at most the TTL": {
			l: suffix, m: InFlight{Queue: "s.delay.16", Key: key, Timestamp: sec(1), Headers: map[string]any{HeaderDelayMS: int64(2200)}},
			basis: BasisPublish, spent: 1600 * time.Millisecond, remaining: 600 * time.Millisecond,
		},
		"first rung, retried by the library": {
			l: suffix, m: InFlight{Queue: "s.delay.16", Key: key, Timestamp: sec(0), Headers: map[string]any{
				HeaderDelayMS: int64(2200),
				HeaderHistory: HistoryValue([]Attempt{{N: 1, At: sec(2), Delay: time.Second}, {N: 2, At: sec(9), Delay: 2200 * time.Millisecond}}, 0)}},
			basis: BasisRetry, spent: 500 * time.Millisecond, remaining: 1700 * time.Millisecond,
		},
		"first rung, timestamp of another delay": {
			l: suffix, m: InFlight{Queue: "s.delay.16", Key: key, Timestamp: sec(8), Headers: map[string]any{HeaderDelayMS: int64(5000)}},
			basis: BasisNone, remaining: 2200 * time.Millisecond, why: "another delay",
		},
		"first rung, replayed after it was published": {
			l: suffix, m: InFlight{Queue: "s.delay.16", Key: key, Timestamp: sec(5), Headers: map[string]any{
				HeaderDelayMS: int64(2200), HeaderReplayedAt: sec(9)}},
			basis: BasisNone, remaining: 2200 * time.Millisecond, why: "replayed",
		},
		"first rung, retry history older than a replay": {
			l: suffix, m: InFlight{Queue: "s.delay.16", Key: key, Headers: map[string]any{
				HeaderReplayedAt: sec(9), HeaderHistory: HistoryValue([]Attempt{{N: 1, At: sec(3), Delay: 2200 * time.Millisecond}}, 0)}},
			basis: BasisNone, remaining: 2200 * time.Millisecond, why: "history",
		},
		"first rung, no headers": {
			l: suffix, m: InFlight{Queue: "s.delay.16", Key: key},
			basis: BasisNone, remaining: 2200 * time.Millisecond,
		},
		"second rung without x-death": {
			l: suffix, m: InFlight{Queue: "s.delay.4", Key: key, Timestamp: sec(8), Headers: map[string]any{HeaderDelayMS: int64(2200)}},
			basis: BasisNone, remaining: 600 * time.Millisecond, why: "none of the rungs above",
		},
		"x-death counts a second pass": {
			l: suffix, m: InFlight{Queue: "s.delay.4", Key: key, Headers: map[string]any{
				HeaderDeath: []any{expired("s.delay.16", key, 2, sec(9))}}},
			basis: BasisNone, remaining: 600 * time.Millisecond, why: "not one expiry",
		},
		"x-death of another key": {
			l: suffix, m: InFlight{Queue: "s.delay.4", Key: key, Headers: map[string]any{
				HeaderDeath: []any{expired("s.delay.16", "1.0.1.0.0", 1, sec(9))}}},
			basis: BasisNone, remaining: 600 * time.Millisecond, why: "another routing key",
		},
		"x-death misses a rung of the path": {
			l: suffix, m: InFlight{Queue: "s.delay.2", Key: key, Headers: map[string]any{
				HeaderDeath: []any{expired("s.delay.4", key, 1, sec(10))}}},
			basis: BasisNone, remaining: 200 * time.Millisecond, why: "the key's path 2s",
		},
		"latest death is a work queue": {
			l: suffix, m: InFlight{Queue: "s.delay.4", Key: key, Headers: map[string]any{HeaderDeath: []any{
				map[string]any{"queue": "work", "reason": "rejected", "count": int64(1), "time": sec(10)},
				expired("s.delay.16", key, 1, sec(9))}}},
			basis: BasisNone, remaining: 600 * time.Millisecond, why: "latest entry",
		},
		"replayed after its last expiry": {
			l: suffix, m: InFlight{Queue: "s.delay.4", Key: key, Headers: map[string]any{
				HeaderDeath: []any{expired("s.delay.16", key, 1, sec(5))}, HeaderReplayedAt: sec(9)}},
			basis: BasisNone, remaining: 600 * time.Millisecond, why: "handled again",
		},
		"off the key's path": {
			l: suffix, m: InFlight{Queue: "s.delay.8", Key: key},
			basis: BasisNone, remaining: 800*time.Millisecond + 600*time.Millisecond, why: "does not pass",
		},
		"radix 4, digit 2 of level 1": {
			// 2.2.3.work = 2·16 + 2·4 + 3 = 43s: p.rung.02.2 (32s), p.rung.01.2 (8s), p.rung.00.3 (3s).
			l: prefix4, m: InFlight{Queue: "p.rung.01.2", Key: "2.2.3.work", Headers: map[string]any{
				HeaderDeath: []any{expired("p.rung.02.2", "2.2.3.work", 1, sec(5))}}},
			basis: BasisDeath, spent: 4500 * time.Millisecond, remaining: 3500*time.Millisecond + 3*time.Second,
		},
		"radix 4, a rung of the wrong digit": {
			l: prefix4, m: InFlight{Queue: "p.rung.01.2", Key: "2.2.3.work", Headers: map[string]any{
				HeaderDeath: []any{expired("p.rung.02.1", "2.2.3.work", 1, sec(5)), expired("p.rung.02.1", "2.2.3.work", 1, sec(5))}}},
			basis: BasisNone, remaining: 11 * time.Second, why: "off the key's path",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, err := tc.l.EstimateRemaining(tc.m, now, tc.margin)
			if err != nil {
				t.Fatal(err)
			}
			if e.Basis != tc.basis || e.Spent != tc.spent || e.Remaining != tc.remaining {
				t.Errorf("basis %s, spent %s, remaining %s; want %s, %s, %s (%s)", e.Basis, e.Spent, e.Remaining, tc.basis, tc.spent, tc.remaining, e.Why)
			}
			if !strings.Contains(e.Why, tc.why) {
				t.Errorf("why %q, want it to mention %q", e.Why, tc.why)
			}
		})
	}
}

func TestEstimateRemainingRefusesForeignMessages(t *testing.T) {
	l := mustLadder(t, Ladder{Name: "s", Layout: "suffix", Unit: time.Second, Levels: 4})
	if _, err := l.EstimateRemaining(InFlight{Queue: "s.done", Key: "0.0.0.1"}, time.Now(), 0); !errors.Is(err, ErrNotRung) {
		t.Errorf("done queue: %v", err)
	}
	if _, err := l.EstimateRemaining(InFlight{Queue: "s.delay.1", Key: "1.1"}, time.Now(), 0); !errors.Is(err, ErrBadKey) {
		t.Errorf("short key: %v", err)
	}
}

func TestMigrationPlace(t *testing.T) {
	suffix := mustLadder(t, Ladder{Name: "s", Layout: "suffix", Unit: 100 * time.Millisecond, Levels: 8})
	prefix := mustLadder(t, Ladder{Name: "p", Unit: time.Second, Levels: 4, Radix: 2, Targets: []string{"work"}})
	nsb := mustLadder(t, Ladder{Layout: "nsb", Targets: []string{"sales"}})
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]struct {
		g        Migration
		m        InFlight
		key      string
		exchange string
		target   string
		park     string
	}{
		// 1.0.0.0.0.0.0.1 = 12.9s, waiting in its first rung (12.8s) with
		// no basis: 12.9s, rounded up to 13s.
		"suffix to prefix's done queue": {
			g: Migration{From: suffix, To: prefix}, m: InFlight{Queue: "s.delay.128", Key: "1.0.0.0.0.0.0.1"},
			key: "1.1.0.1", exchange: "p.ingest", target: "p.done",
		},
		"suffix to a prefix destination": {
			g: Migration{From: suffix, To: prefix, Dest: "work"}, m: InFlight{Queue: "s.delay.1", Key: "0.0.0.0.0.0.1.1"},
			key: "0.0.0.1.work", exchange: "p.ingest", target: "work",
		},
		"prefix keeps its destination": {
			g: Migration{From: prefix, To: nsb, Dest: "ignored"}, m: InFlight{Queue: "p.rung.01", Key: "0.0.1.0.sales"},
			key: strings.Repeat("0.", 26) + "1.0.sales", exchange: "nsb.v2.delay-level-01", target: "sales",
		},
		"beyond the target's maximum": {
			g: Migration{From: suffix, To: mustLadder(t, Ladder{Name: "q", Unit: time.Second, Levels: 2, Radix: 2})}, m: InFlight{Queue: "s.delay.128", Key: "1.0.0.0.0.0.0.0"},
			park: "exceeds the maximum of ladder q (3s)",
		},
		"suffix has no destinations": {
			g: Migration{From: prefix, To: suffix}, m: InFlight{Queue: "p.rung.00", Key: "0.0.0.1.work"},
			park: "ladder s (suffix) has no destinations; the message is for work",
		},
		"nsb needs a destination": {
			g: Migration{From: suffix, To: nsb}, m: InFlight{Queue: "s.delay.1", Key: "0.0.0.0.0.0.0.1"},
			park: "needs a destination and the message names none",
		},
		"destination not bound": {
			g: Migration{From: nsb, To: prefix}, m: InFlight{Queue: "nsb.v2.delay-level-00", Key: strings.Repeat("0.", 27) + "1.billing"},
			park: "destination billing is not bound to ladder p",
		},
		"foreign key": {
			g: Migration{From: suffix, To: prefix}, m: InFlight{Queue: "s.delay.1", Key: "banana"},
			park: "routing key does not belong to ladder s",
		},
		"not a rung": {
			g: Migration{From: suffix, To: prefix}, m: InFlight{Queue: "s.done", Key: "0.0.0.0.0.0.0.0"},
			park: "not a rung",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := tc.g.Place(tc.m, now)
			if tc.park != "" {
				if !strings.Contains(p.Park, tc.park) {
					t.Errorf("park %q, want %q", p.Park, tc.park)
				}
				return
			}
			if p.Park != "" || p.Trace.Key != tc.key || p.Trace.Exchange != tc.exchange || p.Trace.Target != tc.target {
				t.Errorf("park %q, key %s, exchange %s, target %s; want %s, %s, %s", p.Park, p.Trace.Key, p.Trace.Exchange, p.Trace.Target, tc.key, tc.exchange, tc.target)
			}
			if p.Trace.Delay < p.Estimate.Remaining {
				t.Errorf("placed with %s, less than the %s remaining", p.Trace.Delay, p.Estimate.Remaining)
			}
		})
	}
}

// message is the simulated life of one message, as rungs' tools and the
// broker would write its headers, with the true times on this host's clock.
type message struct {
	key     string
	headers map[string]any
	stamp   time.Time
	clock   time.Time // the simulation's now
}

func (m *message) strip() {
	saved, _ := m.headers[HeaderDeath].([]any)
	m.headers = StripBrokerHeaders(m.headers)
	if saved != nil {
		m.headers[HeaderSavedDeath] = saved
	}
}

// record is how a clock off by off (behind when positive) writes t: in
// whole seconds, truncated, as AMQP timestamps are.
func record(t time.Time, off time.Duration) time.Time {
	return t.Add(-off).Truncate(time.Second)
}

// die updates x-death as RabbitMQ does when the message expires from queue:
// a repeat raises the count of the (queue, reason) entry and moves it to the
// front, keeping its first time; a new entry goes to the front.
func (m *message) die(queue string, at time.Time) {
	list, _ := m.headers[HeaderDeath].([]any)
	for i, e := range list {
		if t := e.(map[string]any); t["queue"] == queue && t["reason"] == "expired" {
			t["count"] = t["count"].(int64) + 1
			rest := append(append([]any{t}, list[:i]...), list[i+1:]...)
			m.headers[HeaderDeath] = rest
			return
		}
	}
	m.headers[HeaderDeath] = append([]any{expired(queue, m.key, 1, at)}, list...)
}

// TestEstimateIsNeverEarly simulates messages handled by rungs' own tools
// (publish, the retry library, replay into a ladder, replay of a rung back
// into itself, migrate) with lag between each recorded event and the
// message's arrival in a queue, and recording clocks off, by up to the
// margin together; it stops each in some rung and checks that the estimate
// is never less than the time the message would truly still spend in the
// ladder, and with a basis at most 1s plus twice the margin more.
func TestEstimateIsNeverEarly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := drawLadder(t)
		d := drawDelay(t, l)
		dest := ""
		switch l.Layout {
		case "nsb", "nsb1", "celery":
			dest = "work"
		case "prefix", "direct":
			dest = rapid.SampledFrom([]string{"", "work"}).Draw(t, "dest")
		}
		tr, err := l.Trace(d, dest)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Hops) == 0 {
			t.Skip("no rung to wait in")
		}
		margin := rapid.SampledFrom([]time.Duration{0, 50 * time.Millisecond, time.Second, 3 * time.Second}).Draw(t, "margin")
		// lag draws when the message enters a queue after an event that
		// a clock off by off recorded: off + lag never exceeds margin.
		event := func(label string) (off, lag time.Duration) {
			off = time.Duration(rapid.Int64Range(-int64(margin), int64(margin)).Draw(t, label+"-off"))
			lag = time.Duration(rapid.Int64Range(0, int64(margin-off)).Draw(t, label+"-lag"))
			return off, lag
		}
		ms := func(label string, maxMS int64) time.Duration {
			return time.Duration(rapid.Int64Range(0, maxMS).Draw(t, label)) * time.Millisecond
		}
		start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Add(ms("start", 3_600_000))
		m := &message{clock: start, headers: map[string]any{"tenant": "acme"}}
		// Whatever happened to the message before: an old publish of some
		// delay, maybe of this very delay, and old retries.
		m.stamp = record(start.Add(-ms("age", 86_400_000)), 0)
		if rapid.Bool().Draw(t, "old-delay-ms") {
			m.headers[HeaderDelayMS] = rapid.SampledFrom([]int64{d.Milliseconds(), tr.Delay.Milliseconds(), 1234}).Draw(t, "old-delay")
		}
		if rapid.Bool().Draw(t, "old-history") {
			m.headers[HeaderHistory] = HistoryValue([]Attempt{{N: 1, At: m.stamp, Delay: tr.Delay}}, 0)
		}
		if rapid.Bool().Draw(t, "old-x-death") {
			m.headers[HeaderDeath] = []any{expired("elsewhere", "k", 1, m.stamp)}
		}
		m.key = tr.Key
		off, lag := event("enter")
		switch how := rapid.SampledFrom([]string{"publish", "retry", "replay", "migrate"}).Draw(t, "enter"); how {
		case "publish":
			m.headers = StripBrokerHeaders(m.headers)
			delete(m.headers, HeaderHistory)
			delete(m.headers, HeaderReplayedAt)
			m.headers[HeaderDelayMS] = tr.Delay.Milliseconds()
			m.stamp = record(m.clock, off)
		case "retry":
			m.headers = StripBrokerHeaders(m.headers)
			h := append(ParseHistory(m.headers), Attempt{N: 9, At: record(m.clock, off), Delay: tr.Delay})
			m.headers[HeaderHistory] = HistoryValue(h, 0)
			m.headers[HeaderDelayMS] = tr.Delay.Milliseconds()
		case "replay", "migrate":
			m.strip()
			m.headers[HeaderReplayedAt] = record(m.clock, off)
			if how == "migrate" {
				m.headers[HeaderMigrated] = map[string]any{"at": record(m.clock, off), "remaining-ms": tr.Delay.Milliseconds()}
			}
		}
		m.clock = m.clock.Add(lag)
		entered := m.clock
		stop := rapid.IntRange(0, len(tr.Hops)-1).Draw(t, "stop")
		for i := 0; i < stop; i++ {
			h := tr.Hops[i]
			if rapid.IntRange(0, 9).Draw(t, "replay-rung") == 0 {
				// replay --to-origin of a rung: back into it, x-death saved.
				m.clock = m.clock.Add(ms("before-replay", h.TTL.Milliseconds()))
				off, lag := event("replay-rung")
				m.strip()
				m.headers[HeaderReplayedAt] = record(m.clock, off)
				m.clock = m.clock.Add(lag)
				entered = m.clock
			}
			// It expires at the end of its TTL, or later if the broker lags.
			m.clock = entered.Add(h.TTL + ms("expiry-lag", 2000))
			off, lag := event("expire")
			m.die(h.Queue, record(m.clock, off))
			m.clock = m.clock.Add(lag)
			entered = m.clock
		}
		h := tr.Hops[stop]
		spent := time.Duration(rapid.Int64Range(0, int64(h.TTL)-1).Draw(t, "spent"))
		now := entered.Add(spent)
		truth := h.TTL - spent + tr.Delay - h.End

		e, err := l.EstimateRemaining(InFlight{Queue: h.Queue, Key: m.key, Headers: m.headers, Timestamp: m.stamp}, now, margin)
		if err != nil {
			t.Fatal(err)
		}
		if e.Remaining < truth {
			t.Fatalf("early by %s: estimate %s (basis %s, anchor %s), truly %s left in %s; headers %v",
				truth-e.Remaining, e.Remaining, e.Basis, e.Anchor, truth, h.Queue, m.headers)
		}
		if e.Basis != BasisNone && e.Remaining-truth > time.Second+2*margin {
			t.Fatalf("late by %s with basis %s", e.Remaining-truth, e.Basis)
		}
		if e.Remaining > h.TTL+e.After || e.After != tr.Delay-h.End || !e.OnPath || e.Before != h.Start {
			t.Fatalf("estimate %+v for hop %+v", e, h)
		}
	})
}

// TestEstimateBoundsHoldForAnyHeaders feeds arbitrary header values: the
// estimate never fails, and always lies between the time left after the
// rung and a full TTL more.
func TestEstimateBoundsHoldForAnyHeaders(t *testing.T) {
	l := mustLadder(t, Ladder{Name: "s", Layout: "suffix", Unit: 100 * time.Millisecond, Levels: 6})
	rapid.Check(t, func(t *rapid.T) {
		units := rapid.Uint64Range(1, 63).Draw(t, "units")
		key, _ := l.layout().Key(l, units, "")
		rung := rapid.SampledFrom(l.Rungs()).Draw(t, "rung")
		base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		when := rapid.Custom(func(t *rapid.T) any {
			return rapid.OneOf(
				rapid.Just[any](nil),
				rapid.Map(rapid.Int64Range(-100, 100), func(s int64) any { return base.Add(time.Duration(s) * time.Second) }),
				rapid.Map(rapid.Int64Range(-100, 100), func(s int64) any { return base.Unix() + s }),
				rapid.Just[any]("garbage"),
			).Draw(t, "v")
		})
		var deaths []any
		for i := rapid.IntRange(0, 4).Draw(t, "deaths"); i > 0; i-- {
			deaths = append(deaths, map[string]any{
				"queue":        rapid.SampledFrom(append([]string{"work"}, l.layout().Rungs(l)[0].Queue, rung.Queue, "s.delay.4")).Draw(t, "q"),
				"reason":       rapid.SampledFrom([]string{"expired", "rejected"}).Draw(t, "reason"),
				"count":        rapid.Int64Range(0, 3).Draw(t, "count"),
				"time":         when.Draw(t, "time"),
				"routing-keys": []any{rapid.SampledFrom([]string{key, "0.0.0.0.0.1"}).Draw(t, "rk")},
			})
		}
		headers := map[string]any{HeaderDeath: deaths, HeaderReplayedAt: when.Draw(t, "replayed"),
			HeaderDelayMS: rapid.SampledFrom([]any{nil, int64(units * 100), "x"}).Draw(t, "delay")}
		now := base.Add(time.Duration(rapid.Int64Range(0, 200_000).Draw(t, "now")) * time.Millisecond)
		e, err := l.EstimateRemaining(InFlight{Queue: rung.Queue, Key: key, Headers: headers, Timestamp: base}, now, 0)
		if err != nil {
			t.Fatal(err)
		}
		if e.Remaining < e.After || e.Remaining > e.After+rung.TTL || e.Spent < 0 || e.Spent > rung.TTL {
			t.Fatalf("estimate out of bounds: %+v", e)
		}
		if e.Basis == BasisNone && e.Spent != 0 {
			t.Fatalf("spent %s without a basis", e.Spent)
		}
	})
}
