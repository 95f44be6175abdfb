package exporter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// Messages a delayed retry holds are exported per rung beside the ones
// waiting to be dead-lettered, and counted in flight.
func TestExporterDelayedRetry(t *testing.T) {
	x := New(&fakeInspector{snap: fixture.DelayedRetry()}, Options{Vhosts: []string{"/"}})
	body := scrape(t, x)
	has(t, body, `rungs_rung_messages_delayed{ladder="tasks",layout="prefix",level="1",queue="tasks.rung.01.3",vhost="/"} 2`)
	has(t, body, `rungs_rung_messages_delayed{ladder="tasks",layout="prefix",level="3",queue="tasks.rung.03.2",vhost="/"} 0`)
	has(t, body, `rungs_ladder_messages_in_flight{ladder="tasks",layout="prefix",vhost="/"} 372`)
}

// On the real broker: a quorum rung with delayed retry holds a message a
// nack handed back on RabbitMQ 4.3 (exported as 1); 3.10 and 4.0 ignore
// the arguments and make it ready again (exported as 0 delayed, 1 ready).
func TestExporterDelayedRetryRealBroker(t *testing.T) {
	cfg := brokertest.Require(t).NewVhost(t)
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ver, err := m.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l, rung := brokertest.DelayedRung(t, cfg, "jobs")
	brokertest.AwaitStats(t, cfg, rung, func(s topology.QueueStats) bool { return s.Delayed == 1 || s.Ready == 1 })
	body := scrape(t, New(m, Options{Vhosts: []string{cfg.Vhost}}))
	labels := fmt.Sprintf(`{ladder="jobs",layout="%s",level="0",queue="%s",vhost="%s"}`, l.Layout, rung, cfg.Vhost)
	delayed, ready := 0, 1
	if ver.QuorumDelayedRetry() {
		delayed, ready = 1, 0
	}
	has(t, body, fmt.Sprintf("rungs_rung_messages_delayed%s %d", labels, delayed))
	has(t, body, fmt.Sprintf("rungs_rung_messages_ready%s %d", labels, ready))
	has(t, body, fmt.Sprintf(`rungs_ladder_messages_in_flight{ladder="jobs",layout="%s",vhost="%s"} 1`, l.Layout, cfg.Vhost))
}
