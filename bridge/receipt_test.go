package bridge_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// syncLog is a log the bridge's goroutines may write to at once.
type syncLog struct {
	mu sync.Mutex
	sb strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sb.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sb.String()
}

// TestBridgeCountsFromReceipt runs a bridge that counts each delay from the
// broker's receipt time (timestamp_in_ms), on every release. The test
// brokers run without RabbitMQ's timestamp interceptor, so the producer
// sets the header the interceptor would: what is tested is what the bridge
// makes of it. A message whose delay passed while it waited for the bridge
// leaves at once; one with a delay partly waited is scheduled and arrives
// no earlier than its receipt time plus its delay; one without the header
// is counted from when the bridge takes it, and said once in the log.
func TestBridgeCountsFromReceipt(t *testing.T) {
	env := brokertest.Require(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg, v, conn := testVhost(t, ctx, env)
	o, err := testLadderOptions(cfg.Vhost, "jobs.delayed", "delays", 2, v)
	if err != nil {
		t.Fatal(err)
	}
	log := &syncLog{}
	o.FromReceipt, o.Log = true, log
	b := declared(t, ctx, conn, o)
	declareDests(t, ctx, conn, o.Names.Exit, map[string]string{"k": "dest"})
	in, err := conn.Consume(ctx, "dest", 10)
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- b.Run(rctx) }()

	now := time.Now()
	received := map[string]time.Time{
		"passed":  now.Add(-10 * time.Minute),
		"partial": now.Add(-55 * time.Second),
	}
	delays := map[string]int64{"passed": 60_000, "partial": 60_000, "unstamped": 1_000}
	var msgs []broker.Message
	for id, ms := range delays {
		h := map[string]any{topology.HeaderDelay: ms}
		if at, ok := received[id]; ok {
			h[topology.HeaderReceivedMS] = at.UnixMilli()
		}
		msgs = append(msgs, broker.Message{Exchange: "jobs.delayed", RoutingKey: "k", MessageID: id, Body: []byte(id), Persistent: true, Headers: h})
	}
	sent := time.Now()
	if _, err := conn.Publish(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	arrived := map[string]time.Time{}
	for len(arrived) < len(delays) {
		select {
		case d := <-in:
			arrived[d.MessageID] = time.Now()
			_ = d.Ack()
		case <-ctx.Done():
			t.Fatalf("arrived: %v; progress %+v", arrived, b.Progress())
		}
	}
	stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	p := b.Progress()
	if p.Now != 1 || p.Scheduled != 2 || p.NoReceipt != 1 || p.Exited != 2 || p.ParkedTotal() != 0 {
		t.Errorf("progress: now %d (want 1), scheduled %d (2), no receipt %d (1), exited %d (2), parked %d (0)", p.Now, p.Scheduled, p.NoReceipt, p.Exited, p.ParkedTotal())
	}
	if due := received["partial"].Add(time.Minute); arrived["partial"].Before(due) {
		t.Errorf("partial arrived %s before its receipt time plus its delay", due.Sub(arrived["partial"]))
	}
	if due := sent.Add(time.Second); arrived["unstamped"].Before(due) {
		t.Errorf("unstamped arrived %s early", due.Sub(arrived["unstamped"]))
	}
	if n := strings.Count(log.String(), topology.HeaderReceivedMS); n != 1 {
		t.Errorf("the log names the missing header %d times, want once:\n%s", n, log.String())
	}
}
