package broker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// TestStream publishes many small calls on one stream, as Conn.Publish's
// results say, through a missing exchange (one clear error; the next call
// works on a new channel) and an unroutable key (returned, not confirmed).
func TestStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, q := range []string{"s.classic", "s.quorum"} {
		qt := topology.Classic
		if q == "s.quorum" {
			qt = topology.Quorum
		}
		if _, err := e.conn.EnsureQueue(ctx, q, qt); err != nil {
			t.Fatal(err)
		}
	}
	s := e.conn.Stream()
	defer s.Close()
	sent := 0
	for i := 0; i < 200; i++ {
		q := []string{"s.classic", "s.quorum"}[i%2]
		msgs := []broker.Message{{RoutingKey: q, Body: []byte("x")}, {RoutingKey: q, Body: []byte("y"), Persistent: true}}
		res, err := s.Publish(ctx, msgs)
		if err != nil || res.Confirmed != 2 {
			t.Fatalf("call %d: %+v, %v", i, res, err)
		}
		sent += 2
	}
	res, err := s.Publish(ctx, []broker.Message{{Exchange: "no.such", RoutingKey: "k"}})
	if err == nil || !strings.Contains(err.Error(), `exchange "no.such" does not exist`) || res.Unsent != 1 {
		t.Fatalf("missing exchange: %+v, %v", res, err)
	}
	res, err = s.Publish(ctx, []broker.Message{{RoutingKey: "s.classic"}, {RoutingKey: "nowhere", MessageID: "lost"}, {RoutingKey: "s.quorum"}})
	if res.Confirmed != 2 || res.Returned != 1 || err == nil || !strings.Contains(err.Error(), "1 of 3 messages were unroutable") {
		t.Fatalf("unroutable: %+v, %v", res, err)
	}
	sent += 2
	// A large call crosses the confirm window on the same channel.
	big := make([]broker.Message, 3000)
	for i := range big {
		big[i] = broker.Message{RoutingKey: "s.classic", Body: []byte("z")}
	}
	if res, err := s.Publish(ctx, big); err != nil || res.Confirmed != len(big) {
		t.Fatalf("big call: %+v, %v", res, err)
	}
	sent += len(big)
	a, _ := e.conn.Depth(ctx, "s.classic")
	b, _ := e.conn.Depth(ctx, "s.quorum")
	if a+b != sent {
		t.Errorf("%d + %d messages in the queues, %d confirmed", a, b, sent)
	}
}
