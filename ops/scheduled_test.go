package ops

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// TestFilterDueBoundsNeverHide: a due filter keeps every message that may
// fire in the span asked about, and drops only those that cannot.
func TestFilterDueBoundsNeverHide(t *testing.T) {
	base := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		at := func(name string) time.Time {
			return base.Add(time.Duration(rapid.IntRange(0, 3600).Draw(t, name)) * time.Second)
		}
		e := at("earliest")
		m := ScheduledMessage{Earliest: e, Latest: e.Add(time.Duration(rapid.IntRange(0, 600).Draw(t, "width")) * time.Second)}
		f := Filter{}
		if rapid.Bool().Draw(t, "before") {
			f.DueBefore = at("dueBefore")
		}
		if rapid.Bool().Draw(t, "after") {
			f.DueAfter = at("dueAfter")
		}
		mt, err := f.Compile()
		if err != nil {
			return // bounds that select nothing are refused
		}
		// A moment in the window inside the span exists iff it matches.
		lo, hi := m.Earliest, m.Latest
		if !f.DueAfter.IsZero() && f.DueAfter.After(lo) {
			lo = f.DueAfter
		}
		possible := !lo.After(hi) && (f.DueBefore.IsZero() || lo.Before(f.DueBefore))
		if got := mt.Match(m, nil); got != possible {
			t.Fatalf("match %v, a moment in the span is possible: %v (%+v, %s)", got, possible, m, f)
		}
	})
}

func TestFilterFields(t *testing.T) {
	m := ScheduledMessage{MessageID: "order-8812", CorrelationID: "c1", TaskID: "3f2a9c", Dest: "work",
		Headers: map[string]any{"tenant": []byte("acme"), "n": int64(7)}}
	body := []byte(`{"order": 8812}`)
	for f, want := range map[*Filter]bool{
		{}:                                      true,
		{MessageID: "order-8812"}:               true,
		{MessageID: "order-88"}:                 false,
		{MessageID: "order-88*"}:                true,
		{MessageID: "3f2a*"}:                    true,
		{MessageID: "3f2a9c"}:                   true,
		{CorrelationID: "c1"}:                   true,
		{CorrelationID: "c2"}:                   false,
		{Where: []string{"tenant=acme", "n=7"}}: true,
		{Where: []string{"tenant=other"}}:       false,
		{Body: "8812"}:                          true,
		{Body: "8813"}:                          false,
		{Dest: "work"}:                          true,
		{Dest: "other"}:                         false,
	} {
		mt, err := f.Compile()
		if err != nil {
			t.Fatal(err)
		}
		if got := mt.Match(m, body); got != want {
			t.Errorf("%s: %v, want %v", f, got, want)
		}
	}
	var fe *FieldError
	if _, err := (Filter{Where: []string{"=x"}}).Compile(); !errors.As(err, &fe) || fe.Field != "where" {
		t.Errorf("bad where: %v", err)
	}
	now := time.Now()
	if _, err := (Filter{DueAfter: now.Add(time.Hour), DueBefore: now}).Compile(); !errors.As(err, &fe) || fe.Field != "due" {
		t.Errorf("empty span: %v", err)
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2h": now.Add(2 * time.Hour), "+90s": now.Add(90 * time.Second), "2026-05-01T11:00:00Z": now.Add(time.Hour),
	} {
		if got, err := ParseWhen(in, now); err != nil || !got.Equal(want) {
			t.Errorf("%s: %s %v", in, got, err)
		}
	}
	for _, in := range []string{"2026-05-01T09:00:00Z", "0s", "soon", ""} {
		if _, err := ParseWhen(in, now); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// TestScanKeepsTheEarliest: the bounded heap keeps the N earliest whatever
// the order they come in.
func TestScanKeepsTheEarliest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keep := rapid.IntRange(1, 20).Draw(t, "keep")
		offs := rapid.SliceOf(rapid.IntRange(0, 1000)).Draw(t, "offsets")
		base := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
		h := &dueHeap{}
		for _, o := range offs {
			pushKeep(h, ScheduledMessage{Earliest: base.Add(time.Duration(o) * time.Second)}, keep)
		}
		got := popAll(h)
		if len(got) != min(keep, len(offs)) {
			t.Fatalf("kept %d of %d, keep %d", len(got), len(offs), keep)
		}
		sorted := append([]int(nil), offs...)
		for i := range sorted {
			for j := i + 1; j < len(sorted); j++ {
				if sorted[j] < sorted[i] {
					sorted[i], sorted[j] = sorted[j], sorted[i]
				}
			}
		}
		for i, m := range got {
			if !m.Earliest.Equal(base.Add(time.Duration(sorted[i]) * time.Second)) {
				t.Fatalf("position %d: %s, want offset %d", i, m.Earliest, sorted[i])
			}
		}
	})
}

// TestScanFindsStackedCeleryKeys: a Celery task retried with a delay by a
// kombu with celery/kombu#2556 carries one older prefix per retry. The
// scan places it by its first prefix, delivers it to the routing key after
// the last, and says how many more delayed retries its key can take.
func TestScanFindsStackedCeleryKeys(t *testing.T) {
	l, err := topology.Ladder{Layout: "celery", Targets: []string{"emails"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	key := func(d time.Duration, stacked int) string {
		k, err := l.Key(d, "emails")
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < stacked; i++ {
			k = k[:2*l.Levels] + strings.Repeat("0.", l.Levels) + k[2*l.Levels:]
		}
		return k
	}
	// Every key enters at the top level; the scan reads it from any rung
	// its delay passes, here the 64 s one (level 6).
	rung := "celery_delayed_6"
	feed := rungFeed{
		{Delivery: broker.Delivery{RoutingKey: key(100*time.Second, 0), MessageID: "fresh"}},
		{Delivery: broker.Delivery{RoutingKey: key(100*time.Second, 2), MessageID: "twice"}, Position: 1},
		{Delivery: broker.Delivery{RoutingKey: key(100*time.Second, 3), MessageID: "thrice"}, Position: 2},
	}
	m, err := Filter{}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	p := ScanPlan{Ladder: l, Rungs: []ScanRung{{Queue: topology.Queue{Name: rung}}}, Keep: 10, matcher: m}
	res, err := p.Run(context.Background(), feed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Foreign != 0 || res.Matched != 3 || res.Stacked != 2 {
		t.Fatalf("foreign %d, matched %d, stacked %d", res.Foreign, res.Matched, res.Stacked)
	}
	// "emails" is 6 bytes: a key is 56 bytes a prefix plus 6, so three
	// stacked (four prefixes, 230 bytes) leave none, two (174) leave one.
	for _, msg := range res.Messages {
		want := map[string][2]int{"fresh": {0, 0}, "twice": {2, 1}, "thrice": {3, 0}}[msg.MessageID]
		if msg.Dest != "emails" || msg.Stacked != want[0] || msg.RetriesLeft != want[1] {
			t.Errorf("%s: dest %q, stacked %d, %d retries left; want emails, %v", msg.MessageID, msg.Dest, msg.Stacked, msg.RetriesLeft, want)
		}
	}
	if res.FewestRetriesLeft != 0 || !strings.Contains(res.StackedNote(), "2 messages carry stacked delay prefixes") ||
		!strings.Contains(res.StackedNote(), "cannot be retried with a delay again") {
		t.Errorf("fewest left %d; note: %s", res.FewestRetriesLeft, res.StackedNote())
	}
	if (ScanResult{}).StackedNote() != "" {
		t.Error("a scan with no stacked key has a note")
	}
}

// A message met again in a lower rung is dropped when the scan remembers
// it at the head of the higher rung, or, beyond the remembered head, when
// the times prove it sat there, ready, for the whole read.
func TestReadBefore(t *testing.T) {
	base := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	seen := broker.Delivery{MessageID: "m1", Body: []byte("job")}
	other := broker.Delivery{MessageID: "m2", Body: []byte("job")}
	span := func(ttl time.Duration, whole bool, remembered ...broker.Delivery) *rungRead {
		rr := &rungRead{began: base.Add(500 * time.Millisecond), ended: base.Add(2300 * time.Millisecond), ttl: ttl, head: map[uint64]int{}, keep: headKeep, whole: whole}
		for i, d := range remembered {
			rr.remember(d, i)
		}
		return rr
	}
	moved := func(d broker.Delivery, queue, reason string, count int64, at time.Time) broker.Delivery {
		d.Headers = map[string]any{"x-death": []any{map[string]any{"queue": queue, "reason": reason, "count": count, "time": at}}, "tenant": "acme"}
		return d
	}
	seen.Headers = map[string]any{"tenant": "acme"}
	for _, c := range []struct {
		name string
		read readRungs
		d    broker.Delivery
		want bool
	}{
		{"remembered at the head, left after the read began", readRungs{"a": span(2*time.Second, true, seen)}, moved(seen, "a", "expired", 1, base.Add(time.Second)), true},
		{"remembered, left in the second the read began", readRungs{"a": span(2*time.Second, true, seen)}, moved(seen, "a", "expired", 1, base), true},
		{"a twin that left before the read's second", readRungs{"a": span(2*time.Second, true, seen)}, moved(seen, "a", "expired", 1, base.Add(-time.Second)), false},
		{"another message, the whole rung remembered", readRungs{"a": span(16*time.Second, true, seen)}, moved(other, "a", "expired", 1, base.Add(3*time.Second)), false},
		{"beyond the head: left after the read, entered long before", readRungs{"a": span(16*time.Second, false)}, moved(other, "a", "expired", 1, base.Add(3*time.Second)), true},
		{"beyond the head: left in the second the read ended", readRungs{"a": span(16*time.Second, false)}, moved(other, "a", "expired", 1, base.Add(2*time.Second)), false},
		{"beyond the head: may have entered during the read", readRungs{"a": span(2*time.Second, false)}, moved(other, "a", "expired", 1, base.Add(3*time.Second)), false},
		{"beyond the head: entered after the read began", readRungs{"a": span(16*time.Second, false)}, moved(other, "a", "expired", 1, base.Add(17*time.Second)), false},
		{"beyond the head: the last second it can have been read", readRungs{"a": span(16*time.Second, false)}, moved(other, "a", "expired", 1, base.Add(15*time.Second)), true},
		{"a rung not read", readRungs{"a": span(16*time.Second, false, seen)}, moved(seen, "c", "expired", 1, base.Add(3*time.Second)), false},
		{"rejected, not expired", readRungs{"a": span(16*time.Second, false, seen)}, moved(seen, "a", "rejected", 1, base.Add(3*time.Second)), false},
		{"passed a twice: the time is the first pass", readRungs{"a": span(16*time.Second, false, seen)}, moved(seen, "a", "expired", 2, base.Add(3*time.Second)), false},
		{"no x-death", readRungs{"a": span(16*time.Second, false, seen)}, seen, false},
		{"nothing read yet", readRungs{}, moved(seen, "a", "expired", 1, base.Add(3*time.Second)), false},
	} {
		if got := c.read.readBefore(c.d); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Each remembered message stands for one copy only.
	read := readRungs{"a": span(2*time.Second, true, seen)}
	d := moved(seen, "a", "expired", 1, base.Add(time.Second))
	if !read.readBefore(d) || read.readBefore(d) {
		t.Error("one remembered message recounted other than once")
	}
}

// movingFeed is a ladder whose rungs hand a scan their messages; a message
// listed under a rung read later with an x-death from an earlier one has
// moved down while the scan read.
type movingFeed map[string][]broker.PeekedMessage

func (f movingFeed) Scan(_ context.Context, queue string, o broker.ScanOptions) (broker.ScanStats, error) {
	for _, m := range f[queue] {
		o.Each(m)
	}
	return broker.ScanStats{Queue: queue, Seen: len(f[queue]), Stopped: broker.ScanEmpty}, nil
}

// A batch seen in the 16s rung, then met again in the 8s rung below after
// it moved, is listed once; a message that reached the 8s rung before the
// scan began is listed too.
func TestScanCountsAMovedMessageOnce(t *testing.T) {
	l, err := topology.Ladder{Name: "j", Layout: "direct", Unit: time.Second, Levels: 2, Radix: 16, Targets: []string{"work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	key, err := l.Key(24*time.Second, "work")
	if err != nil {
		t.Fatal(err)
	}
	high, low := l.Name+".rung.01.1", l.Name+".rung.00.8"
	msg := func(id string, pos int, death map[string]any) broker.PeekedMessage {
		h := map[string]any{}
		if death != nil {
			h["x-death"] = []any{death}
		}
		return broker.PeekedMessage{Delivery: broker.Delivery{MessageID: id, RoutingKey: key, Body: []byte(id), Headers: h}, Position: pos}
	}
	now := time.Now()
	feed := movingFeed{
		high: {msg("a", 0, nil), msg("b", 1, nil)},
		low: {
			msg("early", 0, map[string]any{"queue": high, "reason": "expired", "count": int64(1), "time": now.Add(-time.Minute)}),
			msg("a", 1, map[string]any{"queue": high, "reason": "expired", "count": int64(1), "time": now.Add(time.Second)}),
			msg("b", 2, map[string]any{"queue": high, "reason": "expired", "count": int64(1), "time": now.Add(time.Second)}),
		},
	}
	m, err := Filter{}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	p := ScanPlan{Ladder: l, Rungs: []ScanRung{{Queue: topology.Queue{Name: low}}, {Queue: topology.Queue{Name: high}}}, Keep: 10, matcher: m}
	res, err := p.Run(context.Background(), feed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Seen != 3 || res.Matched != 3 || res.Recounted != 2 {
		t.Fatalf("seen %d, matched %d, recounted %d; want 3, 3, 2", res.Seen, res.Matched, res.Recounted)
	}
}
