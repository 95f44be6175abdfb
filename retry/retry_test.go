package retry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// fakePublisher confirms everything (or fails with err) and keeps what it
// was given.
type fakePublisher struct {
	sent []broker.Message
	err  error
}

func (f *fakePublisher) Publish(_ context.Context, msgs []broker.Message) (broker.PublishResult, error) {
	if f.err != nil {
		return broker.PublishResult{Unsent: len(msgs)}, f.err
	}
	f.sent = append(f.sent, msgs...)
	return broker.PublishResult{Confirmed: len(msgs)}, nil
}

func testLadder(t *testing.T, l topology.Ladder) topology.Ladder {
	t.Helper()
	n, err := l.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// redeliver turns a published message into the delivery the worker gets
// when it comes back, with the x-death the ladder's rungs add.
func redeliver(m broker.Message, queue string) broker.Delivery {
	h := map[string]any{}
	for k, v := range m.Headers {
		h[k] = v
	}
	h[topology.HeaderDeath] = []any{map[string]any{"queue": "jobs.rung.00", "reason": "expired", "count": int64(1), "exchange": m.Exchange, "routing-keys": []any{m.RoutingKey}}}
	h[topology.HeaderDeliveryCount] = int64(0)
	return broker.Delivery{Exchange: "jobs.rung.00.expired", RoutingKey: m.RoutingKey, Body: m.Body, Headers: h,
		MessageID: m.MessageID, ContentType: m.ContentType, Persistent: m.Persistent, Timestamp: m.Timestamp}
}

func TestRetryTenTimesKeepsKeyAndHistory(t *testing.T) {
	l := testLadder(t, topology.Ladder{Name: "jobs", Levels: 10, Radix: 2, Unit: time.Second, Targets: []string{"work"}})
	pub := &fakePublisher{}
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r, err := New(pub, l, "work", "", Policy{Steps: []time.Duration{3 * time.Second}, MaxAttempts: 11},
		WithClock(func() time.Time { return clock }), WithRand(func() float64 { return 0 }))
	if err != nil {
		t.Fatal(err)
	}
	if r.Parking() != "work.parked" {
		t.Errorf("default parking queue %q", r.Parking())
	}
	d := broker.Delivery{Body: []byte(`{"job":1}`), MessageID: "j1", ContentType: "application/json", Persistent: true,
		Headers: map[string]any{"tenant": "acme", topology.HeaderDeath: []any{map[string]any{"queue": "elsewhere", "reason": "rejected"}}}}
	for i := 1; i <= 11; i++ {
		if got := Attempt(d); got != i {
			t.Fatalf("delivery %d reads as attempt %d", i, got)
		}
		out, err := r.Retry(context.Background(), d, errors.New("boom\nwith a second line"))
		if err != nil {
			t.Fatal(err)
		}
		m := pub.sent[len(pub.sent)-1]
		if _, ok := m.Headers[topology.HeaderDeath]; ok {
			t.Fatalf("retry %d kept x-death", i)
		}
		if _, ok := m.Headers[topology.HeaderDeliveryCount]; ok {
			t.Fatalf("retry %d kept x-delivery-count", i)
		}
		if m.Headers["tenant"] != "acme" || string(m.Body) != `{"job":1}` || m.MessageID != "j1" || !m.Persistent || m.ContentType != "application/json" {
			t.Fatalf("retry %d lost the job: %+v", i, m)
		}
		if n, _ := topology.HeaderInt(m.Headers[topology.HeaderAttempt]); n != int64(i) {
			t.Fatalf("retry %d: x-rungs-attempt %d", i, n)
		}
		if h := topology.ParseHistory(m.Headers); len(h) != i || h[i-1].N != i || h[i-1].Reason != "boom with a second line" {
			t.Fatalf("retry %d: history %+v", i, h)
		}
		if i < 11 {
			// The key is rebuilt from the delay and the queue: it does not grow.
			if out.Action != Retried || m.RoutingKey != "0.0.0.0.0.0.0.0.1.1.work" || m.Exchange != "jobs.ingest" || out.Delay != 3*time.Second {
				t.Fatalf("retry %d: %+v, key %q", i, out, m.RoutingKey)
			}
		} else {
			if out.Action != Parked || m.Exchange != "" || m.RoutingKey != "work.parked" || m.Headers[topology.HeaderReason] != "boom with a second line" || m.Headers[topology.HeaderQueue] != "work" {
				t.Fatalf("last attempt: %+v, %+v", out, m)
			}
			if h := topology.ParseHistory(m.Headers); !h[10].Parked {
				t.Fatalf("the parked attempt is not marked: %+v", h[10])
			}
		}
		d = redeliver(m, "work")
	}
}

func TestRetryParksPermanentErrorsAtOnce(t *testing.T) {
	l := testLadder(t, topology.Ladder{Name: "jobs", Levels: 10, Radix: 2, Targets: []string{"work"}})
	pub := &fakePublisher{}
	r, err := New(pub, l, "work", "dead", Policy{Initial: time.Second, MaxAttempts: 5})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Retry(context.Background(), broker.Delivery{}, Permanent(errors.New("no such order")))
	if err != nil || out.Action != Parked || pub.sent[0].RoutingKey != "dead" {
		t.Fatalf("Retry() = %+v, %v", out, err)
	}
}

func TestRetryReportsPublishFailure(t *testing.T) {
	l := testLadder(t, topology.Ladder{Name: "jobs", Levels: 10, Radix: 2, Targets: []string{"work"}})
	r, err := New(&fakePublisher{err: errors.New("connection lost")}, l, "work", "", Policy{Initial: time.Second, MaxAttempts: 5})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Retry(context.Background(), broker.Delivery{MessageID: "j9"}, errors.New("boom"))
	if err == nil || !strings.Contains(err.Error(), "left unacknowledged") || !strings.Contains(err.Error(), "j9") {
		t.Fatalf("Retry() error = %v", err)
	}
}

func TestNewRefusesWhatTheLadderCannotDo(t *testing.T) {
	short := testLadder(t, topology.Ladder{Name: "s", Levels: 4, Radix: 2, Unit: time.Second, Targets: []string{"work"}}) // 15s
	suffix := testLadder(t, topology.Ladder{Name: "x", Layout: "suffix", Levels: 4, Unit: time.Second})
	ok := Policy{Initial: time.Second, Max: 8 * time.Second, MaxAttempts: 10}
	cases := map[string]struct {
		l       topology.Ladder
		queue   string
		parking string
		p       Policy
		want    error
	}{
		"longer than the ladder": {short, "work", "", Policy{Initial: time.Second, MaxAttempts: 6}, topology.ErrDelayTooLong},
		"jitter past the top":    {short, "work", "", Policy{Initial: 10 * time.Second, Jitter: 1, MaxAttempts: 2}, topology.ErrDelayTooLong},
		"bad policy":             {short, "work", "", Policy{MaxAttempts: 2}, ErrBadPolicy},
		"suffix destination":     {suffix, "work", "", ok, topology.ErrNoDest},
		"parking is the queue":   {short, "work", "work", ok, topology.ErrBadDest},
		"no queue":               {short, "", "", ok, topology.ErrBadDest},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := New(&fakePublisher{}, tc.l, tc.queue, tc.parking, tc.p); !errors.Is(err, tc.want) {
				t.Errorf("New() = %v, want %v", err, tc.want)
			}
		})
	}
	// The suffix ladder delivers to its done queue, which a worker may consume.
	if _, err := New(&fakePublisher{}, suffix, "x.done", "", ok); err != nil {
		t.Errorf("suffix ladder, done queue: %v", err)
	}
}

// A retried or parked copy answers the same caller: the properties an
// application sets survive, and none that would break the copy is added.
func TestRetryKeepsTheMessagesProperties(t *testing.T) {
	l := testLadder(t, topology.Ladder{Name: "jobs", Levels: 3, Unit: time.Second, Targets: []string{"work"}})
	pub := &fakePublisher{}
	r, err := New(pub, l, "work", "", Policy{Steps: []time.Duration{3 * time.Second}, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	d := broker.Delivery{Body: []byte("x"), MessageID: "m1", ContentType: "text/plain", ContentEncoding: "gzip",
		CorrelationID: "c-42", ReplyTo: "amq.rabbitmq.reply-to.abc", Type: "order.created", AppID: "shop", Priority: 7,
		Persistent: true, Timestamp: time.Unix(1700000000, 0), Headers: map[string]any{}}
	for _, action := range []Action{Retried, Parked} {
		out, err := r.Retry(context.Background(), d, errors.New("boom"))
		if err != nil || out.Action != action {
			t.Fatalf("outcome %+v, %v; want %v", out, err, action)
		}
		m := pub.sent[len(pub.sent)-1]
		got := broker.Delivery{MessageID: m.MessageID, ContentType: m.ContentType, ContentEncoding: m.ContentEncoding,
			CorrelationID: m.CorrelationID, ReplyTo: m.ReplyTo, Type: m.Type, AppID: m.AppID, Priority: m.Priority,
			Persistent: m.Persistent, Timestamp: m.Timestamp}
		want := d
		want.Body, want.Headers = nil, nil
		if got.MessageID != want.MessageID || got.ContentType != want.ContentType || got.ContentEncoding != want.ContentEncoding ||
			got.CorrelationID != want.CorrelationID || got.ReplyTo != want.ReplyTo || got.Type != want.Type ||
			got.AppID != want.AppID || got.Priority != want.Priority || got.Persistent != want.Persistent || !got.Timestamp.Equal(want.Timestamp) {
			t.Errorf("%v copy has properties %+v, want %+v", action, got, want)
		}
		d = redeliver(m, "work")
		d.ContentEncoding, d.CorrelationID, d.ReplyTo, d.Type, d.AppID, d.Priority = m.ContentEncoding, m.CorrelationID, m.ReplyTo, m.Type, m.AppID, m.Priority
	}
}
