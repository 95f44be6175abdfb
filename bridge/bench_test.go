package bridge_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker/brokertest"
)

// BenchmarkBridgeIntake is rungs bench --bridge (bench.RunBridge): the
// bridge's intake rate against the broker's publish+consume limit, in the
// same run on the same broker, three alternating rounds, with the broker's
// CPU per message in each phase where it runs on this machine. The ratio
// is the figure (target ≥ 0.5). n is RUNGS_BRIDGE_BENCH_N (default
// 20,000). Run with -benchtime=1x.
func BenchmarkBridgeIntake(b *testing.B) {
	env := brokertest.Require(b)
	n := 20000
	if s := os.Getenv("RUNGS_BRIDGE_BENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		rep, err := bench.RunBridge(ctx, env.Config, env.Mgmt, bench.BridgeOptions{N: n, Log: testLog{b}})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		b.Log("\n" + rep.Markdown())
		b.ReportMetric(rep.LimitPerS, "limit-msg/s")
		b.ReportMetric(rep.BridgePerS, "bridge-msg/s")
		b.ReportMetric(rep.Ratio, "ratio")
		if rep.CPURatio > 0 {
			b.ReportMetric(rep.LimitCPUus, "limit-broker-µs/msg")
			b.ReportMetric(rep.BridgeCPUus, "bridge-broker-µs/msg")
			b.ReportMetric(rep.CopyCPUus, "copies-broker-µs/msg")
			b.ReportMetric(rep.CPURatio, "cpu-ratio")
		}
	}
}

// testLog writes the run's lines to the benchmark's log.
type testLog struct{ b *testing.B }

func (l testLog) Write(p []byte) (int, error) {
	l.b.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
