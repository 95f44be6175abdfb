package topology

import (
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// retryTier is Sneakers' shape: work rejects into jobs-retry through the
// exchange jobs-retry, which expires into jobs-retry-requeue and back to
// work.
func retryTier() (Snapshot, DelayQueue) {
	snap := Snapshot{
		Exchanges: []Exchange{{Name: "jobs-retry", Type: "topic"}, {Name: "jobs-retry-requeue", Type: "topic"}},
		Queues: []Queue{
			{Name: "work", Args: Args{"x-dead-letter-exchange": "jobs-retry"}, Stats: QueueStats{Consumers: 1}},
			ttlQueue("jobs-retry", 60000, "jobs-retry-requeue", nil),
		},
		Bindings: []Binding{
			{Source: "jobs-retry", Destination: "jobs-retry", DestinationType: ToQueue, RoutingKey: "#"},
			{Source: "jobs-retry-requeue", Destination: "work", DestinationType: ToQueue, RoutingKey: "#"},
		},
	}
	inv := TakeInventory(snap, nil)
	return snap, inv.Groups[0].Queues[0]
}

func death(queue, reason string, count int64, at time.Time) map[string]any {
	return map[string]any{"queue": queue, "reason": reason, "count": count, "time": at, "exchange": "", "routing-keys": []any{"work"}}
}

func TestEstimateDelayBases(t *testing.T) {
	snap, q := retryTier()
	route := DeadLetterRoute(snap)
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	rejected := now.Add(-20 * time.Second)
	cases := map[string]struct {
		m     DelayMessage
		basis Basis
		spent time.Duration
	}{
		"rejected once into the tier":                 {DelayMessage{Queue: q, Key: "work", Headers: map[string]any{HeaderDeath: []any{death("work", "rejected", 1, rejected)}}}, BasisDeath, 20*time.Second - time.Second - time.Second},
		"rejected again: time is the first":           {DelayMessage{Queue: q, Key: "work", Headers: map[string]any{HeaderDeath: []any{death("work", "rejected", 3, rejected)}}}, BasisNone, 0},
		"died out of a queue that does not lead here": {DelayMessage{Queue: q, Key: "work", Headers: map[string]any{HeaderDeath: []any{death("other", "rejected", 1, rejected)}}}, BasisNone, 0},
		"published straight in":                       {DelayMessage{Queue: q, Key: "work", Timestamp: rejected}, BasisNone, 0},
		"expiration and timestamp":                    {DelayMessage{Queue: q, Key: "work", Timestamp: rejected, Expiration: "30000"}, BasisExpiration, 18 * time.Second},
		"republished after its death":                 {DelayMessage{Queue: q, Key: "work", Timestamp: now.Add(-5 * time.Second), Headers: map[string]any{HeaderDeath: []any{death("work", "rejected", 1, rejected)}}}, BasisNone, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, err := EstimateDelay(tc.m, now, time.Second, route)
			if err != nil {
				t.Fatal(err)
			}
			if e.Basis != tc.basis || e.Spent != tc.spent {
				t.Fatalf("basis %s spent %s (%s), want %s %s", e.Basis, e.Spent, e.Why, tc.basis, tc.spent)
			}
			if e.Remaining != e.Total-e.Spent {
				t.Fatalf("remaining %s of %s, spent %s", e.Remaining, e.Total, e.Spent)
			}
		})
	}
}

// TestEstimateDelayNeverEarly: whatever the message's true entry into the
// queue, and whatever the recorded times (each at or before the event
// they record, within a second), the remaining delay is at least the
// truth, as long as the lag from event to entry stays within the margin.
func TestEstimateDelayNeverEarly(t *testing.T) {
	snap, q := retryTier()
	route := DeadLetterRoute(snap)
	rapid.Check(t, func(t *rapid.T) {
		base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
		margin := time.Duration(rapid.IntRange(0, 2000).Draw(t, "margin_ms")) * time.Millisecond
		event := base.Add(time.Duration(rapid.IntRange(0, 120000).Draw(t, "event_ms")) * time.Millisecond)
		entered := event.Add(time.Duration(rapid.Int64Range(0, margin.Milliseconds()).Draw(t, "lag_ms")) * time.Millisecond)
		now := entered.Add(time.Duration(rapid.IntRange(0, 120000).Draw(t, "wait_ms")) * time.Millisecond)
		m := DelayMessage{Queue: q, Key: "work"}
		exp := int64(0)
		switch rapid.IntRange(0, 2).Draw(t, "how") {
		case 0:
			m.Headers = map[string]any{HeaderDeath: []any{death("work", "rejected", rapid.Int64Range(1, 3).Draw(t, "count"), event.Truncate(time.Second))}}
		case 1:
			exp = rapid.Int64Range(0, 90000).Draw(t, "exp")
			m.Expiration, m.Timestamp = strconv.FormatInt(exp, 10), event
		case 2:
			m.Timestamp = event.Add(-time.Duration(rapid.IntRange(0, 100000).Draw(t, "older")) * time.Millisecond)
		}
		ttl := q.TTL
		if m.Expiration != "" && time.Duration(exp)*time.Millisecond < ttl {
			ttl = time.Duration(exp) * time.Millisecond
		}
		due := entered.Add(ttl)
		if !now.Before(due) {
			return // already expired on the broker: not in the queue
		}
		e, err := EstimateDelay(m, now, margin, route)
		if err != nil {
			t.Fatal(err)
		}
		if now.Add(e.Remaining).Before(due) {
			t.Fatalf("early: due %s, estimated %s (basis %s, spent %s)", due, now.Add(e.Remaining), e.Basis, e.Spent)
		}
	})
}

func TestPlaceDelay(t *testing.T) {
	snap, q := retryTier()
	route := DeadLetterRoute(snap)
	l, err := Ladder{Name: "jobs", Layout: "prefix", Unit: time.Second, Levels: 8, Radix: 2, Targets: []string{"work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	p := DelayMove{To: l}.PlaceDelay(DelayMessage{Queue: q, Key: "work"}, time.Now(), route)
	if p.Park != "" || p.Dest != "work" || p.Trace.Delay != time.Minute {
		t.Fatalf("placement: %+v", p)
	}
	other, _ := Ladder{Name: "jobs", Layout: "prefix", Unit: time.Second, Levels: 8, Radix: 2, Targets: []string{"else"}}.Normalize()
	if p := (DelayMove{To: other}).PlaceDelay(DelayMessage{Queue: q, Key: "work"}, time.Now(), route); p.Park == "" {
		t.Fatal("a destination the ladder does not deliver to is placed")
	}
	short, _ := Ladder{Name: "jobs", Layout: "prefix", Unit: time.Second, Levels: 4, Radix: 2, Targets: []string{"work"}}.Normalize()
	if p := (DelayMove{To: short}).PlaceDelay(DelayMessage{Queue: q, Key: "work"}, time.Now(), route); p.Park == "" {
		t.Fatal("a delay beyond the ladder's maximum is placed")
	}
}
