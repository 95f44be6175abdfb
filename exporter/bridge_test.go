package exporter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// A bridge's objects on the real broker (rungs bridge declares them; here
// they are applied alone, with no bridge consuming): the exporter reports
// the intake's depth, its consumers, what is due and what was parked, by
// the bridge's intake exchange.
func TestExporterBridgeRealBroker(t *testing.T) {
	env := brokertest.Require(t)
	t.Parallel()
	cfg := env.NewVhost(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, v := brokertest.Management(t, cfg)
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	n := topology.NamesOfBridge("orders.delayed", "")
	if _, err := conn.Apply(ctx, topology.BridgePlan(n, "direct", v)); err != nil {
		t.Fatal(err)
	}
	msg := func(ex, key string) broker.Message {
		return broker.Message{Exchange: ex, RoutingKey: key, Body: []byte("x"), Headers: map[string]any{"x-delay": int64(5000)}}
	}
	if _, err := conn.Publish(ctx, []broker.Message{msg(n.Exchange, "eu"), msg(n.Exchange, "us"), msg("", n.Parked)}); err != nil {
		t.Fatal(err)
	}
	brokertest.AwaitStats(t, cfg, n.Parked, func(s topology.QueueStats) bool { return s.Ready == 1 })
	brokertest.AwaitStats(t, cfg, n.Intake, func(s topology.QueueStats) bool { return s.Ready == 2 })
	body := scrape(t, New(m, Options{Vhosts: []string{cfg.Vhost}}))
	labels := fmt.Sprintf(`{bridge="orders.delayed",vhost="%s"}`, cfg.Vhost)
	has(t, body, "rungs_bridge_intake_messages"+labels+" 2")
	has(t, body, "rungs_bridge_consumers"+labels+" 0")
	has(t, body, "rungs_bridge_due_messages"+labels+" 0")
	has(t, body, "rungs_bridge_parked_messages"+labels+" 1")
	has(t, body, "rungs_bridge_intake_lag_seconds"+labels+" 0")
	has(t, body, "rungs_up 1")
}
