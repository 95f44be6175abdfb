package bench

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
)

// TestRunBridge runs the bridge phase briefly against the real broker. It
// checks correctness only: every round's bridge scheduled every message
// and parked none, the figures add up, the run's vhost is gone; rates on a
// shared machine are not assertions.
func TestRunBridge(t *testing.T) {
	env := brokertest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := RunBridge(ctx, env.Config, env.Mgmt, BridgeOptions{N: 300, Rounds: 2, Log: logWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		t.Error(p)
	}
	if len(rep.Rounds) != 2 {
		t.Fatalf("%d rounds, want 2", len(rep.Rounds))
	}
	for i, r := range rep.Rounds {
		if r.LimitPerS <= 0 || r.BridgePerS <= 0 || math.Abs(r.Ratio-r.BridgePerS/r.LimitPerS) > 1e-9 {
			t.Errorf("round %d: %+v", i+1, r)
		}
	}
	if rep.Ratio <= 0 || rep.Ladder.Rungs == 0 || rep.Broker.RabbitMQ == "" {
		t.Errorf("report: ratio %v, ladder %+v, broker %+v", rep.Ratio, rep.Ladder, rep.Broker)
	}
	if (rep.BridgeCPUus > 0) != (rep.CPURatio > 0) {
		t.Errorf("CPU figures: bridge %v µs, ratio %v", rep.BridgeCPUus, rep.CPURatio)
	}
	if md := rep.Markdown(); !strings.Contains(md, "| median |") {
		t.Errorf("markdown:\n%s", md)
	}
	vhosts, err := env.Mgmt.Vhosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(vhosts, rep.Vhost) || rep.Vhost == "" {
		t.Errorf("vhost %q still there after the run", rep.Vhost)
	}
}

// A bridge phase of no messages is refused before anything is created.
func TestRunBridgeRefusesNoMessages(t *testing.T) {
	_, err := RunBridge(context.Background(), broker.Config{}, nil, BridgeOptions{N: 0})
	if !errors.Is(err, ErrOptions) {
		t.Fatalf("err = %v, want ErrOptions", err)
	}
}
