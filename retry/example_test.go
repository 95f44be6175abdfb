package retry_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/retry"
	"github.com/rungs-dev/rungs/topology"
)

// A worker consumes its queue, a destination of the ladder; jobs that fail
// come back after 1s, 2s, 4s... (capped at a minute), and after their fifth
// attempt they are parked in orders.parked with the reason.
func Example() {
	ctx := context.Background()
	conn, err := broker.Dial(ctx, broker.Config{URL: "amqp://guest:guest@localhost:5672/"})
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	// The ladder as `rungs apply --ladder jobs --unit 1s --max-delay 1h` made it,
	// 3 levels of the default radix 16 (or found with topology.Discover).
	ladder := topology.Ladder{Name: "jobs", Unit: time.Second, Levels: 3}
	r, err := retry.New(conn, ladder, "orders", "orders.parked", retry.Policy{
		Initial: time.Second, Multiplier: 2, Max: time.Minute, Jitter: 0.2, MaxAttempts: 5,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Setup(ctx, conn); err != nil {
		log.Fatal(err)
	}
	err = r.Serve(ctx, conn, 16, func(ctx context.Context, d broker.Delivery) error {
		if len(d.Body) == 0 {
			return retry.Permanent(errors.New("empty job")) // parked at once
		}
		return nil // acknowledged
	}, func(ev retry.Event) {
		if ev.Err != nil {
			fmt.Println(ev.Delivery.MessageID, ev.Outcome) // e.g. "attempt 2 failed: retry in 2s via 0.0.2.orders"
		}
	})
	if err != nil {
		log.Fatal(err)
	}
}

// The delays a policy asks for, before jitter.
func ExamplePolicy_Base() {
	p := retry.Policy{Initial: time.Second, Multiplier: 3, Max: 20 * time.Second, MaxAttempts: 6}
	for n := 1; n < p.MaxAttempts; n++ {
		fmt.Print(topology.FormatDelay(p.Base(n)), " ")
	}
	fmt.Println()
	// Output: 1s 3s 9s 20s 20s
}
