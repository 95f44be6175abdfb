package broker_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
)

// A saved drain capacity reads back from the real broker, beside the
// figures of other kinds, and is forgotten. The key is the test's own, so
// that no ladder of a test running beside it meets the figure.
func TestDrainCapacitySaved(t *testing.T) {
	env := brokertest.Require(t)
	ctx := context.Background()
	key := fmt.Sprintf("test-%d", rand.Uint64())
	want := broker.DrainCapacity{HopsPerS: 4321.5, RabbitMQ: "x.y.z", Measured: time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC), N: 100_000, Load: "1.00 1.00 1.00"}
	t.Cleanup(func() { _ = env.Mgmt.ForgetDrainCapacity(ctx, key) })
	if err := env.Mgmt.SaveDrainCapacity(ctx, key, want); err != nil {
		t.Fatal(err)
	}
	got, err := env.Mgmt.DrainCapacities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g := got[key]; g.HopsPerS != want.HopsPerS || g.RabbitMQ != want.RabbitMQ || !g.Measured.Equal(want.Measured) || g.N != want.N || g.Load != want.Load {
		t.Errorf("read back %+v, want %+v", g, want)
	}
	if err := env.Mgmt.ForgetDrainCapacity(ctx, key); err != nil {
		t.Fatal(err)
	}
	if got, err = env.Mgmt.DrainCapacities(ctx); err != nil {
		t.Fatal(err)
	} else if _, ok := got[key]; ok {
		t.Errorf("%s still saved after ForgetDrainCapacity: %v", key, got)
	}
	ro := env.Config
	ro.ReadOnly = true
	m, err := broker.NewManagement(ro)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SaveDrainCapacity(ctx, key, want); err != broker.ErrReadOnly {
		t.Errorf("read-only save: %v, want ErrReadOnly", err)
	}
}
