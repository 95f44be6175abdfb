package retry_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/retry"
	"github.com/rungs-dev/rungs/topology"
)

func TestLateness(t *testing.T) {
	sent := time.UnixMilli(1_700_000_000_000)
	delayed := func(at time.Time, extra map[string]any) broker.Delivery {
		h := map[string]any{retry.HeaderSentMS: sent.UnixMilli(), topology.HeaderDelayMS: int64(1500)}
		for k, v := range extra {
			h[k] = v
		}
		return broker.Delivery{Headers: h, Received: at}
	}
	cases := map[string]struct {
		d    broker.Delivery
		late time.Duration
		ok   bool
	}{
		"late":        {delayed(sent.Add(1510*time.Millisecond), nil), 10 * time.Millisecond, true},
		"early":       {delayed(sent.Add(1400*time.Millisecond), nil), -100 * time.Millisecond, true},
		"redelivered": {broker.Delivery{Headers: delayed(sent, nil).Headers, Redelivered: true}, 0, false},
		"replayed":    {delayed(sent, map[string]any{topology.HeaderReplayed: int64(1)}), 0, false},
		"no sent":     {broker.Delivery{Headers: map[string]any{topology.HeaderDelayMS: int64(5)}}, 0, false},
		"no headers":  {broker.Delivery{}, 0, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			late, ok := retry.Lateness(tc.d, time.Now())
			if ok != tc.ok || (ok && late != tc.late) {
				t.Fatalf("Lateness = %s, %v; want %s, %v", late, ok, tc.late, tc.ok)
			}
		})
	}
}

func TestNewMetricsTwiceSharesTheSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := retry.NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := retry.NewMetrics(reg); err != nil {
		t.Fatalf("second NewMetrics on one registry: %v", err)
	}
}

// TestMetricsOnTheRealBroker retries every job once through the version's
// default queue type and checks what the worker recorded: one lateness
// observation per delayed arrival, none early.
func TestMetricsOnTheRealBroker(t *testing.T) {
	t.Parallel()
	e := newEnv(t, topology.DefaultQueueType, 100*time.Millisecond, 4)
	reg := prometheus.NewRegistry()
	m, err := retry.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	p := retry.Policy{Initial: 300 * time.Millisecond, Multiplier: 1, Max: 300 * time.Millisecond, MaxAttempts: 2}
	r, err := retry.New(e.conn, e.ladder, "work", "", p, retry.WithMetrics(m))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := r.Setup(ctx, e.conn); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var msgs []broker.Message
	for i := range n {
		msgs = append(msgs, broker.Message{RoutingKey: "work", MessageID: fmt.Sprintf("job-%d", i), Persistent: true})
	}
	if _, err := e.conn.Publish(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	done := 0
	var lates []time.Duration
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() {
		served <- r.Serve(wctx, e.conn, 8, func(_ context.Context, d broker.Delivery) error {
			if retry.Attempt(d) == 1 {
				return errors.New("first attempt fails")
			}
			return nil
		}, func(ev retry.Event) {
			mu.Lock()
			defer mu.Unlock()
			if ev.RetryErr != nil {
				t.Errorf("%s: %v", ev.Delivery.MessageID, ev.RetryErr)
			}
			if ev.Attempt == 2 && ev.Err == nil {
				if late, ok := retry.Lateness(ev.Delivery, time.Now()); ok {
					lates = append(lates, late)
				}
				if done++; done == n {
					stop()
				}
			}
		})
	}()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if done != n || len(lates) != n {
		t.Fatalf("%d of %d jobs succeeded on their retry, %d measurable", done, n, len(lates))
	}
	for _, l := range lates {
		if l < 0 {
			t.Errorf("a retried job arrived %s early", -l)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*dto.Metric{}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			got[f.GetName()] = mt
		}
	}
	h := got["rungs_retry_lateness_seconds"].GetHistogram()
	if h.GetSampleCount() != n {
		t.Errorf("lateness histogram counted %d arrivals, want %d (first attempts carry no delay and must not count)", h.GetSampleCount(), n)
	}
	if early := got["rungs_retry_early_total"].GetCounter().GetValue(); early != 0 {
		t.Errorf("%v early arrivals", early)
	}
	if lbl := got["rungs_retry_lateness_seconds"].GetLabel(); len(lbl) != 1 || lbl[0].GetValue() != "work" {
		t.Errorf("labels %v, want queue=work", lbl)
	}
	t.Logf("%d retried jobs, lateness sum %.3fs", h.GetSampleCount(), h.GetSampleSum())
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	t.Log("\n" + rec.Body.String())
}
