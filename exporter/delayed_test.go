package exporter

import (
	"fmt"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// Messages a delayed retry holds are exported per rung beside the ones
// waiting to be dead-lettered, and counted in flight.
func TestExporterDelayedRetry(t *testing.T) {
	x := New(&fakeInspector{snap: fixture.DelayedRetry()}, Options{Reach: ops.ReachVhost, Vhosts: []string{"/"}})
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
	m, ver := brokertest.Management(t, cfg)
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

// A quorum queue outside any ladder under delayed retry by a policy,
// whose consumer rejected a message: on 4.3 a scrape exports what it
// holds, its settings and the vhost's sum; the second scrape reads the
// candidate's statistics again without listing the vhost. 3.10 and 4.0
// refuse the policy and have no delayed retry: no such series at all.
func TestExporterDelayedRetryQueues(t *testing.T) {
	cfg := brokertest.Require(t).NewVhost(t)
	m, ver := brokertest.Management(t, cfg)
	hold := brokertest.DelayedRetryHold.Milliseconds()
	code := brokertest.PutPolicy(t, cfg, "retry", fmt.Sprintf(`{"pattern":"^orders$","apply-to":"quorum_queues","definition":{"delayed-retry-type":"failed","delayed-retry-min":%d,"delayed-retry-max":%d}}`, hold, 2*hold))
	if ver.QuorumDelayedRetryPolicy() != (code == 201) {
		t.Fatalf("%v: policy with delayed-retry keys answered %d", ver, code)
	}
	ch := brokertest.RawChannel(t, cfg)
	if _, err := ch.QueueDeclare("orders", true, false, false, false, amqp.Table{"x-queue-type": "quorum"}); err != nil {
		t.Fatal(err)
	}
	brokertest.PublishTo(t, cfg, "orders", 1)
	brokertest.Reject(t, cfg, "orders")
	brokertest.AwaitStats(t, cfg, "orders", func(s topology.QueueStats) bool { return s.Delayed == 1 || s.Ready == 1 })
	x := New(m, Options{Vhosts: []string{cfg.Vhost}})
	body := scrape(t, x)
	if !ver.QuorumDelayedRetry() {
		if strings.Contains(body, "\nrungs_delayed_retry_") || strings.Contains(body, "\nrungs_vhost_delayed_retry_") {
			t.Errorf("%v: delayed retry exported:\n%s", ver, body)
		}
		return
	}
	labels := fmt.Sprintf(`{queue="orders",vhost="%s"}`, cfg.Vhost)
	has(t, body, "rungs_delayed_retry_messages"+labels+" 1")
	has(t, body, fmt.Sprintf("rungs_delayed_retry_min_seconds%s %g", labels, brokertest.DelayedRetryHold.Seconds()))
	has(t, body, fmt.Sprintf("rungs_delayed_retry_max_seconds%s %g", labels, 2*brokertest.DelayedRetryHold.Seconds()))
	has(t, body, fmt.Sprintf(`rungs_delayed_retry_info{ignored="false",policy="retry",queue="orders",source="policy",type="failed",vhost="%s"} 1`, cfg.Vhost))
	has(t, body, fmt.Sprintf(`rungs_vhost_delayed_retry_held_messages{vhost="%s"} 1`, cfg.Vhost))
	r0, _ := m.Cost()
	body = scrape(t, x)
	r1, _ := m.Cost()
	has(t, body, "rungs_delayed_retry_messages"+labels+" 1")
	// The observer's statistics request and the one candidate's.
	if r1-r0 != 2 {
		t.Errorf("second scrape made %d requests, want 2 (the statistics, the candidate)", r1-r0)
	}
}
