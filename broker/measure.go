package broker

import (
	"context"
	"fmt"
	"net/url"

	amqp "github.com/rabbitmq/amqp091-go"
)

// NodeMemory is the memory every node of the broker uses, summed, in
// bytes: mem_used of /api/nodes, what the broker's memory alarm compares
// with its watermark. A node that is down reports none and adds nothing.
func (m *Management) NodeMemory(ctx context.Context) (int64, error) {
	var nodes []struct {
		MemUsed int64 `json:"mem_used"`
	}
	if err := m.get(ctx, "nodes", url.Values{"columns": {"mem_used"}}, &nodes); err != nil {
		return 0, fmt.Errorf("node memory: %w", err)
	}
	var sum int64
	for _, n := range nodes {
		sum += n.MemUsed
	}
	return sum, nil
}

// Depth is how many messages a queue holds ready, read with a passive
// declaration: unlike Peek it takes nothing off the queue, so a quorum
// queue counts no delivery, and unlike the management API it is current.
func (c *Conn) Depth(ctx context.Context, queue string) (int, error) {
	n := 0
	err := c.steps(ctx, 1, func(ch *amqp.Channel, _ int) error {
		q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
		if isCode(err, amqp.NotFound) {
			return fmt.Errorf("depth of %q: no such queue in vhost %q", queue, c.ep.vhost)
		}
		if err != nil {
			return fmt.Errorf("depth of %q: %w", queue, err)
		}
		n = q.Messages
		return nil
	})
	return n, c.ep.redact(err)
}
