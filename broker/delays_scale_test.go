//go:build scale

package broker_test

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// The inventory of delays beside 10,000 other queues: it lists every
// queue (a delay is known by its arguments, which the API cannot filter
// on), 500 a page in a few columns. Its cost is measured against the whole
// vhost's snapshot, and it finds exactly the delay queues.
func TestDelaySnapshotBesideTenThousandQueues(t *testing.T) {
	cfg := brokertest.NewVhost(t)
	start := time.Now()
	brokertest.DeclareOthers(t, cfg, "other-", 10000)
	t.Logf("declared 10,000 queues in %s", time.Since(start).Round(time.Millisecond))
	// The delay queues last: Laravel's expire when unused for twice their
	// delay, and declaring 10,000 queues takes longer than some delays.
	ch := brokertest.RawChannel(t, cfg)
	for _, ms := range []int64{30000, 60000} {
		name := "default.delay." + topology.FormatCount(ms)
		if _, err := ch.QueueDeclare(name, true, false, false, false, amqp.Table{
			"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "default", "x-message-ttl": ms, "x-expires": 2 * ms,
		}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	r0, b0 := m.Cost()
	t0 := time.Now()
	snap, _, err := m.DelaySnapshot(ctx, cfg.Vhost)
	if err != nil {
		t.Fatal(err)
	}
	inventory := time.Since(t0)
	r1, b1 := m.Cost()
	full, err := m.Snapshot(ctx, cfg.Vhost)
	if err != nil {
		t.Fatal(err)
	}
	whole := time.Since(t0) - inventory
	r2, b2 := m.Cost()
	if len(snap.Queues) < 10002 || len(full.Queues) < 10002 {
		t.Fatalf("read %d and %d queues, want 10,002", len(snap.Queues), len(full.Queues))
	}
	inv := topology.TakeInventory(snap, nil)
	if inv.Queues() != 2 || len(inv.Groups) != 1 || inv.Groups[0].ID() != "laravel-queue-rabbitmq/default" {
		t.Fatalf("inventory: %+v", inv.Groups)
	}
	t.Logf("inventory: %d requests, %d KB, %s; whole snapshot: %d requests, %d KB, %s (bytes %.2fx, time %.2fx of it)",
		r1-r0, (b1-b0)>>10, inventory.Round(time.Millisecond), r2-r1, (b2-b1)>>10, whole.Round(time.Millisecond),
		float64(b1-b0)/float64(b2-b1), inventory.Seconds()/whole.Seconds())
}
