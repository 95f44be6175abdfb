package bridge_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/bridge"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// BenchmarkBridgeIntake measures the bridge's intake rate against the
// broker's publish+consume limit, in the same run on the same broker:
//
//   - limit: producers publish n messages (confirms) to a quorum queue
//     while a consumer takes them (acks), as the bench's limit phase
//     does: messages/s until the last is consumed;
//   - bridge: the same producers publish n messages to the intake
//     exchange, x-delay one hour (nothing comes due), while a bridge
//     schedules them: messages/s until the bridge confirmed the last
//     into the ladder.
//
// The ratio is the figure (target ≥ 0.5): the bridge does the limit's
// work (an enqueue and a dequeue) plus an enqueue into a rung. n is
// RUNGS_BRIDGE_BENCH_N (default 20,000). Run with -benchtime=1x.
func BenchmarkBridgeIntake(b *testing.B) {
	env := brokertest.Require(b)
	n := 20000
	if s := os.Getenv("RUNGS_BRIDGE_BENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	for i := 0; i < b.N; i++ {
		cfg := env.NewVhost(b)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		v, err := env.Mgmt.Version(ctx)
		if err != nil {
			b.Fatal(err)
		}
		conn, err := broker.Dial(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		// Alternate rounds, and take medians: on a shared machine the
		// broker's limit moves from minute to minute, and a ratio of two
		// figures measured minutes apart would measure that instead.
		var limits, rates, ratios []float64
		for r := 0; r < benchRounds; r++ {
			limit := limitRate(ctx, b, conn, cfg, n)
			rate := bridgeRate(ctx, b, conn, cfg, v, n)
			limits, rates, ratios = append(limits, limit), append(rates, rate), append(ratios, rate/limit)
			b.Logf("RabbitMQ %s, round %d, %d messages: limit %.0f msg/s, bridge intake %.0f msg/s, ratio %.2f", v, r+1, n, limit, rate, rate/limit)
		}
		b.ReportMetric(median(limits), "limit-msg/s")
		b.ReportMetric(median(rates), "bridge-msg/s")
		b.ReportMetric(median(ratios), "ratio")
		conn.Close()
		cancel()
	}
}

// publishAll publishes msgs in batches of 250 on four streams at once,
// as producers would.
func publishAll(ctx context.Context, b *testing.B, conn *broker.Conn, msgs []broker.Message) {
	const producers = 4
	errs := make(chan error, producers)
	for p := 0; p < producers; p++ {
		go func() {
			s := conn.Stream()
			defer s.Close()
			for lo := p * 250; lo < len(msgs); lo += producers * 250 {
				if _, err := s.Publish(ctx, msgs[lo:min(lo+250, len(msgs))]); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for p := 0; p < producers; p++ {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}

func limitRate(ctx context.Context, b *testing.B, conn *broker.Conn, cfg broker.Config, n int) float64 {
	q := topology.Plan{Queues: []topology.Queue{{Name: "limit", Durable: true, Args: topology.Args{"x-queue-type": "quorum"}}}}
	if _, err := conn.Apply(ctx, q); err != nil {
		b.Fatal(err)
	}
	cons, err := broker.Dial(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer cons.Close()
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	in, err := cons.Consume(cctx, "limit", 1000)
	if err != nil {
		b.Fatal(err)
	}
	msgs := make([]broker.Message, n)
	for i := range msgs {
		msgs[i] = broker.Message{RoutingKey: "limit", Body: []byte("job"), Persistent: true, MessageID: fmt.Sprint(i)}
	}
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		for got := 0; got < n; got++ {
			d, ok := <-in
			if !ok {
				return
			}
			_ = d.Ack()
		}
	}()
	publishAll(ctx, b, conn, msgs)
	<-done
	return float64(n) / time.Since(start).Seconds()
}

func bridgeRate(ctx context.Context, b *testing.B, conn *broker.Conn, cfg broker.Config, v topology.Version, n int) float64 {
	o, err := testOptions(cfg.Vhost, "bench.delayed", "delays", v)
	if err != nil {
		b.Fatal(err)
	}
	bconn, err := broker.Dial(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer bconn.Close()
	if o.Publish, err = broker.Dial(ctx, cfg); err != nil {
		b.Fatal(err)
	}
	defer o.Publish.Close()
	br, err := bridge.New(bconn, o)
	if err != nil {
		b.Fatal(err)
	}
	if err := br.Declare(ctx); err != nil {
		b.Fatal(err)
	}
	msgs := make([]broker.Message, n)
	for i := range msgs {
		msgs[i] = broker.Message{Exchange: "bench.delayed", RoutingKey: "k", Body: []byte("job"), Persistent: true,
			MessageID: fmt.Sprint(i), Headers: map[string]any{"x-delay": int64(3600_000)}}
	}
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- br.Run(rctx) }()
	start := time.Now()
	publishAll(ctx, b, conn, msgs)
	for br.Progress().Scheduled < int64(n) {
		if ctx.Err() != nil {
			b.Fatalf("bridge scheduled %d of %d", br.Progress().Scheduled, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	rate := float64(n) / time.Since(start).Seconds()
	stop()
	if err := <-ran; err != nil {
		b.Fatal(err)
	}
	return rate
}

const benchRounds = 3

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
