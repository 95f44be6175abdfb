package topology

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// inFlightAt is where a message published at pub with delay d waits at
// now, with the headers RabbitMQ and rungs publish would have given it:
// x-delay-ms and the timestamp in its first rung, x-death (whole seconds)
// for every rung it expired out of. ok is false once it left the ladder.
func inFlightAt(l Ladder, tr Trace, pub, now time.Time, withHeaders bool) (InFlight, bool) {
	e := now.Sub(pub)
	for i, h := range tr.Hops {
		if e < h.Start || e >= h.End {
			continue
		}
		m := InFlight{Queue: h.Queue, Key: tr.Key, Headers: map[string]any{}}
		if !withHeaders {
			return m, true
		}
		m.Headers[HeaderDelayMS] = tr.Delay.Milliseconds()
		m.Timestamp = pub.Truncate(time.Second)
		var deaths []any
		for _, p := range tr.Hops[:i] {
			deaths = append([]any{expired(p.Queue, tr.Key, 1, pub.Add(p.End).Truncate(time.Second))}, deaths...)
		}
		if len(deaths) > 0 {
			m.Headers[HeaderDeath] = deaths
		}
		return m, true
	}
	return InFlight{}, false
}

// TestDueOfHoldsTheTruth: for any ladder, delay and moment, the window
// DueOf gives holds the moment the message really leaves the ladder (a
// ladder on time), is exact when the message carries rungs' headers, and
// is never narrower than the evidence allows when it carries none.
func TestDueOfHoldsTheTruth(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		radix := rapid.SampledFrom([]int{2, 4, 16}).Draw(t, "radix")
		layout := rapid.SampledFrom([]string{"prefix", "suffix", "direct"}).Draw(t, "layout")
		unit := rapid.SampledFrom([]time.Duration{time.Second, 2 * time.Second, 100 * time.Millisecond}).Draw(t, "unit")
		l, err := Ladder{Name: "p", Layout: layout, Unit: unit, Levels: 4, Radix: radix}.Normalize()
		if err != nil {
			t.Skip(err)
		}
		units := rapid.Uint64Range(1, uint64(l.MaxDelay()/l.Unit)).Draw(t, "units")
		tr, err := l.Trace(time.Duration(units)*l.Unit, "")
		if err != nil {
			t.Fatal(err)
		}
		pub := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(rapid.Int64Range(0, 999).Draw(t, "pubms")) * time.Millisecond)
		at := pub.Add(time.Duration(rapid.Int64Range(0, int64(tr.Delay/time.Millisecond)-1).Draw(t, "atms")) * time.Millisecond)
		headers := rapid.Bool().Draw(t, "headers")
		m, ok := inFlightAt(l, tr, pub, at, headers)
		if !ok {
			t.Skip("left")
		}
		truth := pub.Add(tr.Delay)
		d, err := l.DueOf(m, at)
		if err != nil {
			t.Fatal(err)
		}
		if truth.Before(d.Earliest) || truth.After(d.Latest) {
			t.Fatalf("truth %s outside [%s, %s] (basis %s, %s)", truth, d.Earliest, d.Latest, d.Basis, d.Why)
		}
		if headers && (d.Basis == DueNone || !d.Exact(l.Unit)) {
			t.Fatalf("with headers: basis %s, width %s (%s)", d.Basis, d.Width(), d.Why)
		}
		if !headers && d.Basis != DueNone {
			t.Fatalf("without headers: basis %s", d.Basis)
		}
	})
}

// TestDueOfCeleryETA: a Celery task's eta dates it, as kombu writes it
// (isoformat with offset and microseconds, or naive UTC), and an eta
// outside what its rung allows falls back to the rung's window.
func TestDueOfCeleryETA(t *testing.T) {
	l, err := Ladder{Layout: "celery"}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	l.Targets = []string{"celery"}
	pub := time.Date(2026, 5, 1, 10, 0, 0, 250e6, time.UTC)
	tr, err := l.Trace(90*time.Second, "celery")
	if err != nil {
		t.Fatal(err)
	}
	now := pub.Add(70 * time.Second)
	m, ok := inFlightAt(l, tr, pub, now, false)
	if !ok {
		t.Fatal("not in flight")
	}
	// kombu routes the countdown's whole seconds (90 of 90.477), so the
	// task leaves the ladder before its eta; the worker runs it at the
	// eta, and that is when it is due: not a second early.
	for _, eta := range []time.Time{pub.Add(90 * time.Second), pub.Add(90*time.Second + 477*time.Millisecond)} {
		for _, v := range []any{eta.Format("2006-01-02T15:04:05.000000+00:00"), eta.Format("2006-01-02T15:04:05.000000"), []byte(CeleryETA(eta))} {
			m.Headers = map[string]any{HeaderCeleryETA: v, HeaderCeleryID: "3f2a"}
			d, err := l.DueOf(m, now)
			if err != nil {
				t.Fatal(err)
			}
			if d.Basis != DueETA || !d.Exact(l.Unit) || !d.Earliest.Equal(eta) || !d.Latest.Equal(eta) {
				t.Errorf("eta %v: %s [%s, %s] %s, want due at the eta", v, d.Basis, d.Earliest, d.Latest, d.Why)
			}
		}
	}
	m.Headers = map[string]any{HeaderCeleryETA: pub.Add(time.Hour).Format(time.RFC3339)}
	if d, _ := l.DueOf(m, now); d.Basis != DueNone || d.Why == "" {
		t.Errorf("an eta past the rung's window: %s %s", d.Basis, d.Why)
	}
	m.Headers = map[string]any{HeaderCeleryETA: "soon"}
	if d, _ := l.DueOf(m, now); d.Basis != DueNone {
		t.Errorf("an unreadable eta: %s", d.Basis)
	}
}

// TestDueOfRescheduled: a reschedule's headers date the copy in the first
// rung of its new path, and x-death takes over below it.
func TestDueOfRescheduled(t *testing.T) {
	l, err := Ladder{Name: "p", Layout: "prefix", Unit: time.Second, Levels: 8, Radix: 2}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := l.Trace(100*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	m := InFlight{Queue: tr.Hops[0].Queue, Key: tr.Key, Timestamp: at.Add(-time.Hour), Headers: map[string]any{
		HeaderRescheduledAt: at, HeaderDelayMS: int64(100000), HeaderReplayedAt: at,
		HeaderSavedDeath: []any{expired("old", "k", 1, at.Add(-time.Minute))},
	}}
	d, err := l.DueOf(m, at.Add(10*time.Second))
	if err != nil || d.Basis != DueRungs || !d.Earliest.Equal(at.Add(100*time.Second)) || d.Width() != time.Second {
		t.Fatalf("%+v %v", d, err)
	}
	m.Headers[HeaderDelayMS] = int64(5000)
	if d, _ := l.DueOf(m, at.Add(10*time.Second)); d.Basis != DueNone {
		t.Errorf("another delay than the key's: %s", d.Basis)
	}
}
