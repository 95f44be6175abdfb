package ops

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// TestStoppedDeadLetteringIsStalled stops a quorum rung's dead-lettering
// on the real broker: the binding from its dead-letter exchange to the
// next rung goes, so at-least-once dead-lettering can confirm nothing and
// keeps the expired messages in messages_dlx, retrying: the figures a
// worker stopped by a node restart leaves (e2e/stall_test.go forces that
// one). The observer, refreshing as the console does, must call the rung
// stalled once its window has passed, and never backlogged: nothing
// leaves it. RUNGS_RECORD_STALL=FILE writes the readings for health's
// tests.
func TestStoppedDeadLetteringIsStalled(t *testing.T) {
	env := brokertest.Require(t)
	cfg := env.NewVhost(t)
	ctx := context.Background()
	l, err := topology.Ladder{Name: "stall", Vhost: cfg.Vhost}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Apply(ctx, l.Plan()); err != nil {
		t.Fatal(err)
	}
	// 20s: 16s in rung 01.1, then 4s in 00.4.
	tr, err := l.Trace(20*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	first, next := tr.Hops[0].Queue, tr.Hops[1].Queue
	var cut *topology.Binding
	for _, b := range l.Plan().Bindings {
		if b.Destination == next && b.Source != tr.Exchange {
			if q, _ := (topology.Snapshot{Queues: l.Plan().Queues}).Queue(first); q.Args["x-dead-letter-exchange"] == b.Source {
				cut = &b
			}
		}
	}
	if cut == nil {
		t.Fatalf("no binding from %s's dead-letter exchange to %s", first, next)
	}
	path := "/api/bindings/" + url.PathEscape(cfg.Vhost) + "/e/" + url.PathEscape(cut.Source) + "/q/" + url.PathEscape(cut.Destination) + "/" + url.PathEscape(cut.RoutingKey)
	if code, body := brokertest.MgmtRequest(t, cfg, http.MethodDelete, path, ""); code != http.StatusNoContent {
		t.Fatalf("delete binding %s: %d %s", path, code, body)
	}
	const n = 2000
	msgs := Delayed{Trace: tr, Body: []byte("x"), Persistent: true}.Messages(0, n, time.Now())
	if res, err := conn.Publish(ctx, msgs); err != nil || res.Confirmed != n {
		t.Fatalf("publish: %+v %v", res, err)
	}
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := health.Recording{Ladder: health.RecordedLadderOf(l), N: n, DelayMS: 20_000, Target: tr.Target}
	if v, err := m.Version(ctx); err == nil {
		rec.Version = v.String()
	}
	o := NewObserver(Scope{Vhost: cfg.Vhost, Ladders: []string{l.Name}}).WithIntervals(time.Second, 0)
	start := time.Now()
	var stalledAt time.Duration
	// A deadline for waiting (16s TTL, then the window), not a measure.
	for time.Since(start) < 2*time.Minute {
		if o, _, err = o.Refresh(ctx, m, time.Now); err != nil {
			t.Fatal(err)
		}
		rec.Add(time.Since(start), o.Snapshot().Queues)
		for _, r := range o.Report(time.Now()).Ladders[0].Rows {
			if r.Queue != first {
				continue
			}
			if r.Backlogged {
				t.Errorf("%s judged backlogged at %s with nothing leaving: %s", first, time.Since(start).Round(time.Second), r.Status)
			}
			if r.Stalled && stalledAt == 0 {
				stalledAt = time.Since(start)
				t.Logf("%s stalled after %s: %s", first, stalledAt.Round(time.Second), r.Status)
			}
		}
		if stalledAt > 0 && time.Since(start) > stalledAt+10*time.Second {
			break
		}
		time.Sleep(time.Second)
	}
	if stalledAt == 0 {
		t.Errorf("%s never judged stalled", first)
	}
	if p := os.Getenv("RUNGS_RECORD_STALL"); p != "" {
		js, err := json.MarshalIndent(rec, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, js, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
