package retry_test

// Integration tests against the real broker (scripts/broker.sh), on classic
// and quorum ladders, each in a vhost of its own.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/retry"
	"github.com/rungs-dev/rungs/topology"
)

type env struct {
	conn   *broker.Conn
	ladder topology.Ladder
}

// newEnv applies a binary ladder of the given queue type in a fresh vhost.
func newEnv(t *testing.T, qt topology.QueueType, unit time.Duration, levels int) env {
	t.Helper()
	return newLadderEnv(t, topology.Ladder{Name: "jobs", Unit: unit, Levels: levels, Radix: 2, QueueType: qt})
}

// newLadderEnv applies a ladder in a fresh vhost.
func newLadderEnv(t *testing.T, l topology.Ladder) env {
	t.Helper()
	cfg := brokertest.NewVhost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	l.Vhost = cfg.Vhost
	l, err = l.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Apply(ctx, l.Plan()); err != nil {
		t.Fatal(err)
	}
	return env{conn: conn, ladder: l}
}

// arrival is one delivery of a job to the worker.
type arrival struct {
	attempt int
	at      time.Time
	key     string
	// retried is when the worker called Retry for it, and what came of it.
	retried time.Time
	out     retry.Outcome
}

// failEverything runs a worker that fails every job until each of n jobs
// has been parked, and returns every arrival per job id.
func failEverything(t *testing.T, e env, p retry.Policy, n int, within time.Duration) (*retry.Retrier, map[string][]arrival) {
	t.Helper()
	// Retry reads the clock just before it publishes: that is when a
	// retry's delay starts, and Serve handles one job at a time.
	var mu sync.Mutex
	var published time.Time
	clock := func() time.Time {
		now := time.Now()
		mu.Lock()
		published = now
		mu.Unlock()
		return now
	}
	r, err := retry.New(e.conn, e.ladder, "work", "work.dead", p, retry.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := r.Setup(ctx, e.conn); err != nil {
		t.Fatal(err)
	}
	var msgs []broker.Message
	for i := range n {
		msgs = append(msgs, broker.Message{RoutingKey: r.Queue(), MessageID: fmt.Sprintf("job-%d", i), Body: []byte("work"),
			Persistent: true, Headers: map[string]any{"tenant": "acme"}})
	}
	if _, err := e.conn.Publish(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	seen := map[string][]arrival{}
	parked := 0
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		done <- r.Serve(wctx, e.conn, 8, func(context.Context, broker.Delivery) error {
			return errors.New("simulated failure")
		}, func(ev retry.Event) {
			mu.Lock()
			defer mu.Unlock()
			if ev.RetryErr != nil {
				t.Errorf("%s: %v", ev.Delivery.MessageID, ev.RetryErr)
			}
			seen[ev.Delivery.MessageID] = append(seen[ev.Delivery.MessageID], arrival{
				attempt: ev.Attempt, at: ev.Delivery.Received, key: ev.Delivery.RoutingKey, retried: published, out: ev.Outcome,
			})
			if ev.Outcome.Action == retry.Parked {
				parked++
				if parked == n {
					stop()
				}
			}
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	if parked != n {
		t.Fatalf("%d of %d jobs parked within %s: %v", parked, n, within, seen)
	}
	return r, seen
}

// checkJourney checks a job's arrivals: every attempt in order, none early,
// the same key length each time, parked after the last.
func checkJourney(t *testing.T, id string, as []arrival, p retry.Policy) {
	t.Helper()
	if len(as) != p.MaxAttempts {
		t.Fatalf("%s arrived %d times, want %d", id, len(as), p.MaxAttempts)
	}
	for i, a := range as {
		if a.attempt != i+1 {
			t.Fatalf("%s: arrival %d reads as attempt %d (the count did not survive the hops)", id, i+1, a.attempt)
		}
		if i == 0 {
			continue
		}
		prev := as[i-1]
		if prev.out.Action != retry.Retried {
			t.Fatalf("%s: attempt %d was %s, yet it came back", id, i, prev.out.Action)
		}
		if base := p.Base(i); prev.out.Delay < base {
			t.Fatalf("%s: retry %d waits %s, below the policy's %s", id, i, prev.out.Delay, base)
		}
		if waited := a.at.Sub(prev.retried); waited < prev.out.Delay {
			t.Fatalf("%s: retry %d came back after %s, before its delay %s", id, i, waited, prev.out.Delay)
		}
		if i > 1 && len(a.key) != len(as[i-1].key) {
			t.Fatalf("%s: the key grew from %q to %q", id, as[i-1].key, a.key)
		}
	}
	if last := as[len(as)-1].out; last.Action != retry.Parked {
		t.Fatalf("%s: the last attempt was %s, not parked", id, last.Action)
	}
}

// checkParked reads the parking queue: every job there once, with its
// history, its attempt count and the reason.
func checkParked(t *testing.T, e env, r *retry.Retrier, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ids := map[string]bool{}
	for {
		d, ok, err := e.conn.Get(ctx, r.Parking(), true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if ids[d.MessageID] {
			t.Errorf("%s parked twice", d.MessageID)
		}
		ids[d.MessageID] = true
		max := r.Policy().MaxAttempts
		h := retry.History(d)
		if len(h) != max || !h[max-1].Parked || h[0].Reason != "simulated failure" || h[0].Queue != r.Queue() {
			t.Errorf("%s: history %+v", d.MessageID, h)
		}
		for i, a := range h[:max-1] {
			if a.N != i+1 || a.Delay < r.Policy().Base(i+1) {
				t.Errorf("%s: history entry %d = %+v", d.MessageID, i, a)
			}
		}
		if n, _ := topology.HeaderInt(d.Headers[topology.HeaderAttempt]); n != int64(max) {
			t.Errorf("%s: parked with x-rungs-attempt %d, want %d", d.MessageID, n, max)
		}
		if d.Headers[topology.HeaderReason] != "simulated failure" || d.Headers["tenant"] != "acme" || string(d.Body) != "work" {
			t.Errorf("%s: parked as %+v", d.MessageID, d)
		}
		if _, ok := d.Headers[topology.HeaderDeath]; ok {
			t.Errorf("%s: parked with an x-death", d.MessageID)
		}
	}
	if len(ids) != n {
		t.Errorf("%d jobs in %s, want %d", len(ids), r.Parking(), n)
	}
}

func TestBackoffClassicAndQuorum(t *testing.T) {
	for _, qt := range []topology.QueueType{topology.Classic, topology.Quorum} {
		t.Run(string(qt), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, qt, 100*time.Millisecond, 6)
			p := retry.Policy{Initial: 200 * time.Millisecond, Multiplier: 2, Max: 800 * time.Millisecond, Jitter: 0.25, MaxAttempts: 5}
			const n = 20
			r, seen := failEverything(t, e, p, n, 40*time.Second)
			for id, as := range seen {
				checkJourney(t, id, as, p)
			}
			checkParked(t, e, r, n)
		})
	}
}

// The retry library on a direct ladder: every retry must carry the BCC keys
// of its delay, or it would stop in the unroutable queue.
func TestBackoffDirect(t *testing.T) {
	for _, qt := range []topology.QueueType{topology.Classic, topology.Quorum} {
		t.Run(string(qt), func(t *testing.T) {
			t.Parallel()
			e := newLadderEnv(t, topology.Ladder{Name: "jobs", Layout: "direct", Unit: 10 * time.Millisecond, Levels: 4, Radix: 4, QueueType: qt})
			p := retry.Policy{Initial: 100 * time.Millisecond, Multiplier: 2, Max: 800 * time.Millisecond, Jitter: 0.25, MaxAttempts: 5}
			const n = 20
			r, seen := failEverything(t, e, p, n, 40*time.Second)
			for id, as := range seen {
				checkJourney(t, id, as, p)
			}
			checkParked(t, e, r, n)
		})
	}
}

// TestTenRetriesThroughTheSameRungs sends jobs through the same two rungs
// ten times: with x-death left on the message RabbitMQ's cycle detection
// would drop it on the second pass.
func TestTenRetriesThroughTheSameRungs(t *testing.T) {
	for _, qt := range []topology.QueueType{topology.Classic, topology.Quorum} {
		t.Run(string(qt), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, qt, 100*time.Millisecond, 5)
			// 300ms = rung.01 (200ms) then rung.00 (100ms), every time.
			p := retry.Policy{Steps: []time.Duration{300 * time.Millisecond}, MaxAttempts: 11}
			naive := naiveRetryIsDropped(t, e)
			const n = 5
			r, seen := failEverything(t, e, p, n, 40*time.Second)
			for id, as := range seen {
				checkJourney(t, id, as, p)
			}
			checkParked(t, e, r, n)
			// The control proves that this test would catch a retry that
			// keeps x-death. RabbitMQ 3.x drops it; later versions may not.
			if survived := <-naive; survived != nil {
				if v := brokerVersion(t); strings.HasPrefix(v, "3.") {
					t.Errorf("RabbitMQ %s: %v", v, survived)
				} else {
					t.Logf("RabbitMQ %s: %v", v, survived)
				}
			}
		})
	}
}

func brokerVersion(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := brokertest.Require(t).Mgmt.Overview(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return o.RabbitMQVersion
}

// naiveRetryIsDropped is the control: a job republished with its x-death
// through the rungs it already passed. On RabbitMQ 3.x it vanishes.
func naiveRetryIsDropped(t *testing.T, e env) <-chan error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	out := make(chan error, 1)
	if _, err := e.conn.EnsureQueue(ctx, "naive", e.ladder.QueueType); err != nil {
		t.Fatal(err)
	}
	l := e.ladder
	l.Targets = []string{"naive"}
	if _, err := e.conn.Apply(ctx, l.Plan()); err != nil {
		t.Fatal(err)
	}
	tr, err := l.Trace(300*time.Millisecond, "naive")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.conn.Publish(ctx, []broker.Message{{Exchange: tr.Exchange, RoutingKey: tr.Key, BCC: tr.BCC, MessageID: "naive", Body: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer cancel()
		get := func(within time.Duration) (d broker.Delivery, ok bool) {
			_ = testutil.Until(t, within, func() error {
				var err error
				if d, ok, err = e.conn.Get(ctx, "naive", true); err != nil || ok {
					return nil
				}
				return errors.New("nothing yet")
			})
			return d, ok
		}
		first, ok := get(5 * time.Second)
		if !ok {
			out <- errors.New("control: the first pass never arrived")
			return
		}
		// Republish as a hand-written retry loop does: headers and all.
		if _, err := e.conn.Publish(ctx, []broker.Message{{Exchange: tr.Exchange, RoutingKey: tr.Key, BCC: tr.BCC, MessageID: "naive", Body: first.Body, Headers: first.Headers}}); err != nil {
			out <- err
			return
		}
		if _, ok := get(3 * time.Second); ok {
			out <- fmt.Errorf("control (%s): the naive retry with x-death survived its second pass", l.QueueType)
			return
		}
		t.Logf("control (%s): the naive retry with x-death was dropped by cycle detection", l.QueueType)
		out <- nil
	}()
	return out
}
