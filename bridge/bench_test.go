package bridge_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/bench"
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
// work (an enqueue and a dequeue) plus an enqueue into a rung. Where the
// broker runs on this machine, each phase also reports the broker's CPU
// time per message: on 2 cores the broker is the bound, so limit-µs over
// bridge-µs (cpu-ratio) is the ratio the bridge could reach if it cost
// the broker nothing more than it does. n is RUNGS_BRIDGE_BENCH_N
// (default 20,000). Run with -benchtime=1x.
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
		cpu := brokerCPU(ctx, b, env, cfg)
		// Alternate rounds, and take medians: on a shared machine the
		// broker's limit moves from minute to minute, and a ratio of two
		// figures measured minutes apart would measure that instead.
		var limits, rates, ratios, limitUS, bridgeUS []float64
		for r := 0; r < benchRounds; r++ {
			limit, lcpu := limitRate(ctx, b, conn, cfg, n, cpu)
			rate, bcpu := bridgeRate(ctx, b, conn, cfg, v, n, cpu)
			lus, bus := perMessage(lcpu, n), perMessage(bcpu, n)
			limits, rates, ratios = append(limits, limit), append(rates, rate), append(ratios, rate/limit)
			limitUS, bridgeUS = append(limitUS, lus), append(bridgeUS, bus)
			b.Logf("RabbitMQ %s, round %d, %d messages: limit %.0f msg/s (broker %.0f µs/msg), bridge intake %.0f msg/s (broker %.0f µs/msg), ratio %.2f",
				v, r+1, n, limit, lus, rate, bus, rate/limit)
		}
		if us := ladderCPU(ctx, b, conn, cfg, v, n, cpu); us > 0 {
			b.Logf("RabbitMQ %s: the same messages published straight into the ladder cost the broker %.0f µs/msg", v, us)
			b.ReportMetric(us, "ladder-broker-µs/msg")
		}
		b.ReportMetric(median(limits), "limit-msg/s")
		b.ReportMetric(median(rates), "bridge-msg/s")
		b.ReportMetric(median(ratios), "ratio")
		if median(bridgeUS) > 0 {
			b.ReportMetric(median(limitUS), "limit-broker-µs/msg")
			b.ReportMetric(median(bridgeUS), "bridge-broker-µs/msg")
			b.ReportMetric(median(limitUS)/median(bridgeUS), "cpu-ratio")
		}
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

// limitRate is the limit in messages/s, and the broker's CPU time from
// the first publish to the last message consumed.
func limitRate(ctx context.Context, b *testing.B, conn *broker.Conn, cfg broker.Config, n int, cpu func() time.Duration) (float64, time.Duration) {
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
	start, c0 := time.Now(), cpu()
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
	return float64(n) / time.Since(start).Seconds(), cpu() - c0
}

// bridgeRate is the bridge's intake rate in messages/s, and the broker's
// CPU time from the first publish to the last message scheduled (the
// ladder's declaration is before both).
func bridgeRate(ctx context.Context, b *testing.B, conn *broker.Conn, cfg broker.Config, v topology.Version, n int, cpu func() time.Duration) (float64, time.Duration) {
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
	start, c0 := time.Now(), cpu()
	publishAll(ctx, b, conn, msgs)
	for br.Progress().Scheduled < int64(n) {
		if ctx.Err() != nil {
			b.Fatalf("bridge scheduled %d of %d", br.Progress().Scheduled, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	rate, used := float64(n)/time.Since(start).Seconds(), cpu()-c0
	stop()
	if err := <-ran; err != nil {
		b.Fatal(err)
	}
	return rate, used
}

const benchRounds = 3

// ladderCPU is the broker's CPU time per message for the bridge's copies
// alone: n messages published (confirmed) straight into the bridge's
// ladder with the key and headers the bridge gives them, without a bridge.
// It tells the ladder's own routing cost from the intake's.
func ladderCPU(ctx context.Context, b *testing.B, conn *broker.Conn, cfg broker.Config, v topology.Version, n int, cpu func() time.Duration) float64 {
	o, err := testOptions(cfg.Vhost, "bench.delayed", "delays", v)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := o.Ladder.Trace(time.Hour, o.Names.Due)
	if err != nil {
		b.Fatal(err)
	}
	msgs := make([]broker.Message, n)
	for i := range msgs {
		msgs[i] = broker.Message{Exchange: tr.Exchange, RoutingKey: tr.Key, BCC: tr.BCC, Body: []byte("job"), Persistent: true, MessageID: fmt.Sprint(i),
			Headers: map[string]any{"x-delay": int64(3600_000), topology.HeaderBridgeKey: "k", topology.HeaderBridgeDue: int64(0), topology.HeaderDelayMS: int64(3600_000), topology.HeaderReplayID: "bench." + fmt.Sprint(i)}}
	}
	c0 := cpu()
	publishAll(ctx, b, conn, msgs)
	return perMessage(cpu()-c0, n)
}

// brokerCPU is the broker's CPU clock where it runs on this machine, else
// a clock that stays at 0 (the per-message figures are then left out).
func brokerCPU(ctx context.Context, b *testing.B, env brokertest.Env, cfg broker.Config) func() time.Duration {
	ov, err := env.Mgmt.Overview(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if used, ok := bench.BrokerCPU(ctx, env.Mgmt, ov.Node, cfg.URL); ok {
		return used
	}
	b.Log("the broker's CPU clock cannot be read from here: no per-message CPU figures")
	return func() time.Duration { return 0 }
}

func perMessage(d time.Duration, n int) float64 {
	return float64(d.Microseconds()) / float64(n)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
