package bench

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/bridge"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// BridgeOptions configure the bridge phase (rungs bench --bridge N).
type BridgeOptions struct {
	// N is the messages of each round, each phase.
	N int
	// Rounds alternate the limit and the bridge (default 3): on a shared
	// machine the broker's limit moves from minute to minute, and a ratio
	// of two figures taken minutes apart would measure that instead.
	Rounds int
	// BrokerPID names the broker's process for its CPU time (0: found as
	// the drain phase finds it; -1: none).
	BrokerPID int
	Log       io.Writer
}

// BridgeRound is one round's figures. The CPU figures are the broker's
// CPU time per message (µs), 0 where its clock cannot be read.
type BridgeRound struct {
	LimitPerS   float64 `json:"limit_per_s"`
	BridgePerS  float64 `json:"bridge_per_s"`
	Ratio       float64 `json:"ratio"`
	LimitCPUus  float64 `json:"limit_broker_cpu_us_per_msg"`
	BridgeCPUus float64 `json:"bridge_broker_cpu_us_per_msg"`
}

// BridgeReport is the bridge phase's result: each round, and the medians.
type BridgeReport struct {
	RunInfo
	N      int           `json:"n"`
	Vhost  string        `json:"vhost"`
	Ladder LadderShape   `json:"ladder"`
	Rounds []BridgeRound `json:"rounds"`
	// The medians of the rounds. CPURatio is LimitCPUus ÷ BridgeCPUus:
	// the ratio the bridge would reach where the broker's CPU is the
	// bound, as it is on a small machine.
	LimitPerS   float64 `json:"limit_per_s"`
	BridgePerS  float64 `json:"bridge_per_s"`
	Ratio       float64 `json:"ratio"`
	LimitCPUus  float64 `json:"limit_broker_cpu_us_per_msg"`
	BridgeCPUus float64 `json:"bridge_broker_cpu_us_per_msg"`
	CPURatio    float64 `json:"cpu_ratio"`
	// CopyCPUus is the broker's CPU per message for the bridge's copies
	// alone: the same messages published straight into the ladder, with
	// the key and headers the bridge gives them. It tells the ladder's
	// routing cost from the intake's (0 without the broker's clock).
	CopyCPUus float64  `json:"copy_broker_cpu_us_per_msg"`
	Problems  []string `json:"problems"`
}

// bridgeExchange is the intake exchange the phase's bridge takes.
const bridgeExchange = "bench.delayed"

// RunBridge measures the bridge's intake rate against the broker's limit,
// in a vhost of its own:
//
//   - limit: Publishers publish N persistent messages (confirms) into a
//     quorum queue while a consumer acks them (the drain phase's limit);
//   - bridge: the same publishers publish N messages with x-delay 1 h to
//     a bridge's intake while one bridge, in this process, schedules them
//     into the default ladder: N ÷ the time until the last was confirmed
//     into the ladder. Nothing comes due.
//
// The bridge does the limit's work (an enqueue and a dequeue) and an
// enqueue into a rung, so the ratio is below 1 by design; docs/bridge.md
// gives the figures per release.
func RunBridge(ctx context.Context, cfg broker.Config, mgmt *broker.Management, o BridgeOptions) (rep BridgeReport, err error) {
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	rep = BridgeReport{RunInfo: StartRun(), N: o.N, Problems: []string{}}
	if o.N < 1 {
		return rep, fmt.Errorf("%w: bridge phase of %d messages (want at least 1)", ErrOptions, o.N)
	}
	began := time.Now()
	ov, err := rep.MeetBroker(ctx, mgmt)
	if err != nil {
		return rep, err
	}
	v, ok := topology.ParseVersion(ov.RabbitMQVersion)
	if !ok {
		return rep, fmt.Errorf("the broker's release %q is not one rungs reads", ov.RabbitMQVersion)
	}
	vh, err := NewVhost(ctx, mgmt, cfg, "rungs-bench-bridge-")
	if err != nil {
		return rep, err
	}
	defer vh.Remove(ctx, 5*time.Minute, &rep.Problems)
	rep.Vhost = vh.Config.Vhost
	conn, err := broker.Dial(ctx, vh.Config)
	if err != nil {
		return rep, err
	}
	defer conn.Close()
	cpu, _ := findBrokerCPU(ctx, mgmt, ov.Node, cfg.URL, o.BrokerPID)
	b, err := newBenchBridge(ctx, vh.Config, v)
	if err != nil {
		return rep, err
	}
	defer b.close()
	rep.Ladder = ShapeOf(b.opt.Ladder)
	body := []byte("job")
	for r := 0; r < o.Rounds; r++ {
		var rd BridgeRound
		c0, _ := cpu.used()
		if rd.LimitPerS, err = drainLimit(ctx, conn, topology.Quorum, o.N, body); err != nil {
			return rep, fmt.Errorf("limit: %w", err)
		}
		c1, _ := cpu.used()
		var p bridge.Progress
		if rd.BridgePerS, p, err = b.rate(ctx, conn, o.N, body); err != nil {
			return rep, fmt.Errorf("bridge: %w", err)
		}
		if p.Scheduled != int64(o.N) || p.ParkedTotal() > 0 || p.Unconfirmed > 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("round %d: the bridge scheduled %d of %d, parked %d, had %d unconfirmed", r+1, p.Scheduled, o.N, p.ParkedTotal(), p.Unconfirmed))
		}
		c2, _ := cpu.used()
		rd.Ratio = rd.BridgePerS / rd.LimitPerS
		rd.LimitCPUus, rd.BridgeCPUus = perMessageUS(c1-c0, o.N), perMessageUS(c2-c1, o.N)
		fmt.Fprintf(o.Log, "bridge: round %d: limit %.0f/s (broker %.0f µs a message), bridge %.0f/s (broker %.0f µs a message), ratio %.2f\n",
			r+1, rd.LimitPerS, rd.LimitCPUus, rd.BridgePerS, rd.BridgeCPUus, rd.Ratio)
		rep.Rounds = append(rep.Rounds, rd)
	}
	rep.summarise()
	if _, ok := cpu.used(); ok {
		c0, _ := cpu.used()
		if err := b.copiesAlone(ctx, conn, o.N, body); err != nil {
			return rep, fmt.Errorf("copies alone: %w", err)
		}
		c1, _ := cpu.used()
		rep.CopyCPUus = perMessageUS(c1-c0, o.N)
		fmt.Fprintf(o.Log, "bridge: the copies alone, published into the ladder: broker %.0f µs a message\n", rep.CopyCPUus)
	}
	rep.Finish(began)
	return rep, nil
}

func (rep *BridgeReport) summarise() {
	pick := func(f func(BridgeRound) float64) float64 {
		xs := make([]float64, len(rep.Rounds))
		for i, r := range rep.Rounds {
			xs[i] = f(r)
		}
		return median(xs)
	}
	rep.LimitPerS = pick(func(r BridgeRound) float64 { return r.LimitPerS })
	rep.BridgePerS = pick(func(r BridgeRound) float64 { return r.BridgePerS })
	rep.Ratio = pick(func(r BridgeRound) float64 { return r.Ratio })
	rep.LimitCPUus = pick(func(r BridgeRound) float64 { return r.LimitCPUus })
	rep.BridgeCPUus = pick(func(r BridgeRound) float64 { return r.BridgeCPUus })
	if rep.BridgeCPUus > 0 {
		rep.CPURatio = rep.LimitCPUus / rep.BridgeCPUus
	}
}

func perMessageUS(d time.Duration, n int) float64 {
	return float64(d.Microseconds()) / float64(n)
}

// benchBridge is the phase's bridge over the default ladder, declared once
// and run once per round, with copies published on a connection of its own
// as rungs bridge does.
type benchBridge struct {
	opt        bridge.Options
	conn, pubs *broker.Conn
}

func newBenchBridge(ctx context.Context, cfg broker.Config, v topology.Version) (*benchBridge, error) {
	names := topology.NamesOfBridge(bridgeExchange, "")
	l, err := topology.Ladder{Name: "bench.bridge", Vhost: cfg.Vhost, Targets: []string{names.Due}}.Normalize()
	if err != nil {
		return nil, err
	}
	b := &benchBridge{opt: bridge.Options{Names: names, ExitType: "direct", Ladder: l, LadderPlan: l.Plan().ForRelease(v), Version: v}}
	if b.conn, err = broker.Dial(ctx, cfg); err != nil {
		return nil, err
	}
	if b.pubs, err = broker.Dial(ctx, cfg); err != nil {
		b.conn.Close()
		return nil, err
	}
	b.opt.Publish = b.pubs
	br, err := bridge.New(b.conn, b.opt)
	if err == nil {
		err = br.Declare(ctx)
	}
	if err != nil {
		b.close()
		return nil, err
	}
	return b, nil
}

func (b *benchBridge) close() {
	b.pubs.Close()
	b.conn.Close()
}

// rate runs a bridge while n messages are published to its intake, and
// returns n ÷ the time until the bridge had confirmed the last into the
// ladder, and what the bridge did.
func (b *benchBridge) rate(ctx context.Context, conn *broker.Conn, n int, body []byte) (float64, bridge.Progress, error) {
	br, err := bridge.New(b.conn, b.opt)
	if err != nil {
		return 0, bridge.Progress{}, err
	}
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- br.Run(rctx) }()
	start := time.Now()
	got, _, err := PublishN(ctx, conn, n, func(i int) broker.Message {
		return broker.Message{Exchange: bridgeExchange, RoutingKey: "k", Body: body, Persistent: true,
			MessageID: strconv.Itoa(i), Headers: map[string]any{"x-delay": int64(time.Hour / time.Millisecond)}}
	}, nil)
	if err == nil && got != n {
		err = fmt.Errorf("%d of %d confirmed", got, n)
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for err == nil && br.Progress().Scheduled < int64(n) {
		select {
		case <-tick.C:
		case <-ctx.Done():
			err = fmt.Errorf("the bridge scheduled %d of %d: %w", br.Progress().Scheduled, n, ctx.Err())
		}
	}
	rate := float64(n) / time.Since(start).Seconds()
	// Stopping lets the batches under way settle: the next round starts
	// from an empty intake.
	stop()
	if rerr := <-ran; err == nil {
		err = rerr
	}
	return rate, br.Progress(), err
}

// copiesAlone publishes n messages straight into the ladder as the bridge
// schedules them for an hour: the entry and key of its trace, and the
// headers it adds.
func (b *benchBridge) copiesAlone(ctx context.Context, conn *broker.Conn, n int, body []byte) error {
	tr, err := b.opt.Ladder.Trace(time.Hour, b.opt.Names.Due)
	if err != nil {
		return err
	}
	ms := time.Hour.Milliseconds()
	got, _, err := PublishN(ctx, conn, n, func(i int) broker.Message {
		return broker.Message{Exchange: tr.Exchange, RoutingKey: tr.Key, BCC: tr.BCC, Body: body, Persistent: true, MessageID: strconv.Itoa(i),
			Headers: map[string]any{"x-delay": ms, topology.HeaderBridgeKey: "k", topology.HeaderBridgeDue: time.Now().UnixMilli() + ms,
				topology.HeaderDelayMS: ms, topology.HeaderReplayID: "bench." + strconv.Itoa(i)}}
	}, nil)
	if err == nil && got != n {
		err = fmt.Errorf("%d of %d confirmed", got, n)
	}
	return err
}

// Markdown is the bridge report as docs/bridge.md shows it.
func (r BridgeReport) Markdown() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "RabbitMQ %s, %d messages a round, %d CPUs, load average %s before, %s after\n\n", r.Broker.RabbitMQ, r.N, r.Machine.CPUs, r.Machine.LoadBefore, r.Machine.LoadAfter)
	sb.WriteString("| round | limit msg/s | bridge msg/s | ratio | broker µs/msg, limit | broker µs/msg, bridge |\n|---|---|---|---|---|---|\n")
	for i, rd := range r.Rounds {
		fmt.Fprintf(&sb, "| %d | %.0f | %.0f | %.2f | %s | %s |\n", i+1, rd.LimitPerS, rd.BridgePerS, rd.Ratio, cpuCell(rd.LimitCPUus), cpuCell(rd.BridgeCPUus))
	}
	fmt.Fprintf(&sb, "| median | %.0f | %.0f | **%.2f** | %s | %s |\n", r.LimitPerS, r.BridgePerS, r.Ratio, cpuCell(r.LimitCPUus), cpuCell(r.BridgeCPUus))
	if r.CPURatio > 0 {
		fmt.Fprintf(&sb, "\nThe broker's CPU per message, limit ÷ bridge: %.2f (the ratio where the broker's CPU is the bound).\n", r.CPURatio)
	}
	if r.CopyCPUus > 0 {
		fmt.Fprintf(&sb, "The bridge's copies alone, published straight into the ladder: %.0f µs a message.\n", r.CopyCPUus)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(&sb, "\nproblem: %s\n", p)
	}
	return sb.String()
}

func cpuCell(us float64) string {
	if us <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f", us)
}
