package bridge_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// BenchmarkBridgePunctuality measures how late messages arrive through a
// bridge and the default ladder with n in flight, as the plugin's figures
// were measured: n messages (RUNGS_BRIDGE_PUNCT_N, default 100,000)
// published to the intake by four producers with x-delay uniform over
// [lo, lo+spread) (RUNGS_BRIDGE_PUNCT_SPREAD, default 30s), where lo
// (RUNGS_BRIDGE_PUNCT_LO, default 150s) exceeds the time publishing takes,
// so that all are in flight at once; lateness is arrival minus publish
// time (a millisecond header, not the AMQP timestamp's whole seconds)
// minus x-delay. The broker's memory (every node, mem_used) is sampled
// each second; its peak above the run's start is reported. Run with
// -benchtime=1x; it takes lo + 30 s and the publishing.
func BenchmarkBridgePunctuality(b *testing.B) {
	env := brokertest.Require(b)
	n, lo, spread := 100000, 150*time.Second, 30*time.Second
	if s := os.Getenv("RUNGS_BRIDGE_PUNCT_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("RUNGS_BRIDGE_PUNCT_LO"); s != "" {
		lo, _ = time.ParseDuration(s)
	}
	if s := os.Getenv("RUNGS_BRIDGE_PUNCT_SPREAD"); s != "" {
		spread, _ = time.ParseDuration(s)
	}
	// RUNGS_BRIDGE_PUNCT_LADDER=1 measures the same messages published
	// straight into the ladder by the ladder's routing key, without the
	// bridge: what the bridge adds to a ladder's own lateness.
	direct := os.Getenv("RUNGS_BRIDGE_PUNCT_LADDER") == "1"
	for i := 0; i < b.N; i++ {
		punctuality(b, env, n, lo, spread, direct)
	}
}

func punctuality(b *testing.B, env brokertest.Env, n int, lo, spread time.Duration, direct bool) {
	ctx, cancel := context.WithTimeout(context.Background(), lo+20*time.Minute)
	defer cancel()
	cfg, v, conn := testVhost(b, ctx, env)
	o, err := testOptions(cfg.Vhost, "punct.delayed", "delays", v)
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
	br := declared(b, ctx, bconn, o)
	declareDests(b, ctx, conn, o.Names.Exit, map[string]string{"k": "dest"})
	base, _ := env.Mgmt.NodeMemory(ctx)
	var peak int64
	var memMu sync.Mutex
	sctx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	go func() {
		for sctx.Err() == nil {
			if m, err := env.Mgmt.NodeMemory(sctx); err == nil {
				memMu.Lock()
				peak = max(peak, m)
				memMu.Unlock()
			}
			time.Sleep(time.Second)
		}
	}()
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	take := "dest"
	if direct {
		ran <- nil
		take = o.Names.Due
	} else {
		go func() { ran <- br.Run(rctx) }()
	}

	cons, err := broker.Dial(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer cons.Close()
	in, err := cons.Consume(ctx, take, 2000)
	if err != nil {
		b.Fatal(err)
	}
	late := make([]time.Duration, 0, n)
	seen := map[string]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for d := range in {
			sent, _ := topology.NormalizeArg(d.Headers["sent-ms"]).(int64)
			delay, _ := topology.NormalizeArg(d.Headers["x-delay"]).(int64)
			if !seen[d.MessageID] {
				seen[d.MessageID] = true
				late = append(late, d.Received.Sub(time.UnixMilli(sent+delay)))
			}
			_ = d.Ack()
			if len(seen) == n {
				return
			}
		}
	}()
	// Four producers (RUNGS_BRIDGE_PUNCT_PRODUCERS), each on a
	// connection of its own, as the plugin's figures had ten clients: one
	// stream would make publishing, not the bridge, the bound at a
	// million.
	producers := 4
	if s := os.Getenv("RUNGS_BRIDGE_PUNCT_PRODUCERS"); s != "" {
		producers, _ = strconv.Atoi(s)
		producers = max(producers, 1)
	}
	start := time.Now()
	pubErr := make(chan error, producers)
	for p := range producers {
		go func() {
			rng := rand.New(rand.NewPCG(100000, uint64(p)))
			pc, err := broker.Dial(ctx, cfg)
			if err != nil {
				pubErr <- err
				return
			}
			defer pc.Close()
			s := pc.Stream()
			defer s.Close()
			msgs := make([]broker.Message, 0, 250)
			for i := p; i < n; i += producers {
				m := broker.Message{Exchange: o.Names.Exchange, RoutingKey: "k", MessageID: strconv.Itoa(i), Body: []byte("job"), Persistent: true,
					Timestamp: time.Now(), Headers: map[string]any{"x-delay": lo.Milliseconds() + rng.Int64N(spread.Milliseconds()), "sent-ms": time.Now().UnixMilli()}}
				if direct {
					tr, err := o.Ladder.Trace(time.Duration(m.Headers["x-delay"].(int64))*time.Millisecond, o.Names.Due)
					if err != nil {
						pubErr <- err
						return
					}
					m.Exchange, m.RoutingKey, m.BCC = tr.Exchange, tr.Key, tr.BCC
				}
				msgs = append(msgs, m)
				if len(msgs) == cap(msgs) || i+producers >= n {
					if _, err := s.Publish(ctx, msgs); err != nil {
						pubErr <- err
						return
					}
					msgs = msgs[:0]
				}
			}
			pubErr <- nil
		}()
	}
	for range producers {
		if err := <-pubErr; err != nil {
			b.Fatal(err)
		}
	}
	published := time.Since(start)
	select {
	case <-done:
	case <-ctx.Done():
		b.Fatalf("%d of %d arrived", len(seen), n)
	}
	stop()
	<-ran
	stopSampling()
	slices.Sort(late)
	rank := func(p float64) time.Duration { return late[min(len(late)-1, int(p*float64(len(late))))] }
	memMu.Lock()
	defer memMu.Unlock()
	p := br.Progress()
	b.ReportMetric(rank(0.5).Seconds(), "p50-s")
	b.ReportMetric(rank(0.99).Seconds(), "p99-s")
	b.ReportMetric(late[len(late)-1].Seconds(), "max-s")
	b.ReportMetric(float64(peak-base)/(1<<20), "mem-peak-MiB")
	through := "bridge and default ladder"
	if direct {
		through = "default ladder alone"
	}
	b.Logf("RabbitMQ %s, %s, %d messages in flight (published in %s, x-delay %s to %s): late p50 %s, p99 %s, max %s, min %s; broker memory %s MiB at start, peak %s MiB (+%s); bridge: %+v",
		v, through, n, published.Round(time.Second), lo, lo+spread, rank(0.5).Round(time.Millisecond), rank(0.99).Round(time.Millisecond),
		late[len(late)-1].Round(time.Millisecond), late[0].Round(time.Millisecond), mib(base), mib(peak), mib(peak-base), p)
}

func mib(b int64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }
