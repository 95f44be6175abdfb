package broker_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker/brokertest"
)

// TestListingsWhileObjectsComeAndGo lists vhosts and queues while another
// client creates and deletes them, as other tests and applications do on a
// shared broker. RabbitMQ 3.x lists an object deleted mid-listing as an
// empty array; every listing must still succeed and name only real objects.
func TestListingsWhileObjectsComeAndGo(t *testing.T) {
	e := newEnv(t)
	admin := brokertest.Require(t).Mgmt
	prefix := e.vhost + "-churn-"
	ch := brokertest.RawChannel(t, e.cfg)

	ctx := ctxFor(t, 2*time.Minute)
	stop := make(chan struct{})
	var churned atomic.Int64 // vhosts created and deleted
	var wg sync.WaitGroup
	// churn runs step with 0, 1, 2, … until stop closes or step fails.
	churn := func(step func(i int) bool) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if !step(i) {
					return
				}
			}
		}()
	}
	churn(func(i int) bool {
		name := fmt.Sprintf("%s%d", prefix, i%4)
		_ = admin.CreateVhost(ctx, name)
		_ = admin.DeleteVhost(ctx, name)
		churned.Add(1)
		return true
	})
	churn(func(i int) bool {
		name := fmt.Sprintf("churn-%d", i%8)
		if _, err := ch.QueueDeclare(name, false, true, false, false, nil); err != nil {
			t.Errorf("declare %s: %v", name, err)
			return false
		}
		if _, err := ch.QueueDelete(name, false, false, false); err != nil {
			t.Errorf("delete %s: %v", name, err)
			return false
		}
		return true
	})
	defer func() {
		close(stop)
		wg.Wait()
		for i := range 4 {
			_ = admin.DeleteVhost(context.Background(), fmt.Sprintf("%s%d", prefix, i))
		}
	}()

	// Creating and deleting a vhost takes far longer than a listing, so
	// the listings go on until the vhosts have come and gone 15 times.
	for i := 0; churned.Load() < 15; i++ {
		vs, err := e.mgmt.Vhosts(ctx)
		if err != nil {
			t.Fatalf("listing %d of the vhosts: %v", i, err)
		}
		for _, v := range vs {
			if v == "" {
				t.Fatalf("listing %d named a vhost with no name: %q", i, vs)
			}
		}
		qs, err := e.mgmt.Stats(ctx, e.vhost)
		if err != nil {
			t.Fatalf("listing %d of the queues: %v", i, err)
		}
		for _, q := range qs {
			if !strings.HasPrefix(q.Name, "churn-") {
				t.Fatalf("listing %d named a queue %q", i, q.Name)
			}
		}
	}
}
