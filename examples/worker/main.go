// Command worker is a minimal worker built on rungs' retry library: it
// consumes a destination queue of a delay ladder, and each job it fails goes
// back through the ladder with exponential backoff until it is parked.
//
//	rungs apply --ladder demo --unit 1s --max-delay 1h --target demo.work
//	go run ./examples/worker -ladder demo -queue demo.work -fail 0.3
//	rungs publish --ladder demo --delay 0s --to demo.work --count 20 --body '{"job":1}'
//
// It reads the ladder's shape from the broker (management API), so the
// delays it computes match the ladder's rungs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/signal"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/retry"
	"github.com/rungs-dev/rungs/topology"
)

func main() {
	url := flag.String("url", envOr("RUNGS_URL", broker.DefaultURL), "AMQP URL")
	mgmtURL := flag.String("mgmt-url", os.Getenv("RUNGS_MGMT_URL"), "management API URL (default: the AMQP host, port 15672)")
	vhost := flag.String("vhost", os.Getenv("RUNGS_VHOST"), "vhost (default: the URL's)")
	name := flag.String("ladder", "demo", "ladder the jobs wait in")
	queue := flag.String("queue", "demo.work", "queue to consume, a destination of the ladder")
	fail := flag.Float64("fail", 0.3, "share of attempts that fail")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, broker.Config{URL: *url, MgmtURL: *mgmtURL, Vhost: *vhost}, *name, *queue, *fail); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, cfg broker.Config, name, queue string, fail float64) error {
	ladder, err := findLadder(ctx, cfg, name)
	if err != nil {
		return err
	}
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()

	r, err := retry.New(conn, ladder, queue, queue+".parked", retry.Policy{
		Initial: time.Second, Multiplier: 2, Max: time.Minute, Jitter: 0.2, MaxAttempts: 5,
	})
	if err != nil {
		return err // e.g. the ladder is too short for a minute's backoff
	}
	if err := r.Setup(ctx, conn); err != nil {
		return err
	}
	log.Printf("consuming %s; failed jobs wait in ladder %s, then park in %s", queue, ladder.Name, r.Parking())
	return r.Serve(ctx, conn, 8, func(ctx context.Context, d broker.Delivery) error {
		if rand.Float64() < fail {
			return errors.New("the job failed (on purpose)")
		}
		return nil // success: the job is acknowledged
	}, func(ev retry.Event) {
		switch {
		case ev.RetryErr != nil:
			log.Printf("%s attempt %d: %v", ev.Delivery.MessageID, ev.Attempt, ev.RetryErr)
		case ev.Err == nil:
			log.Printf("%s attempt %d: ok", ev.Delivery.MessageID, ev.Attempt)
		default:
			log.Printf("%s %s", ev.Delivery.MessageID, ev.Outcome)
		}
	})
}

// findLadder reads the ladder's shape from the broker.
func findLadder(ctx context.Context, cfg broker.Config, name string) (topology.Ladder, error) {
	m, err := broker.NewManagement(cfg)
	if err != nil {
		return topology.Ladder{}, err
	}
	snap, err := m.Snapshot(ctx, cfg.EffectiveVhost())
	if err != nil {
		return topology.Ladder{}, err
	}
	for _, f := range topology.Discover(snap) {
		if f.Ladder.Name == name {
			return f.Ladder, nil
		}
	}
	return topology.Ladder{}, fmt.Errorf("no ladder %q in vhost %s (rungs apply creates one)", name, cfg.EffectiveVhost())
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
