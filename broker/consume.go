package broker

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Delivery is one consumed message.
type Delivery struct {
	Exchange    string
	RoutingKey  string
	Body        []byte
	Headers     map[string]any // x-death and friends as plain maps and slices
	ContentType string
	MessageID   string
	Persistent  bool
	// Timestamp is the message's timestamp property (whole seconds).
	Timestamp time.Time
	// Expiration is the expiration property (a per-message TTL in ms), ""
	// when unset.
	Expiration string
	// As in Message.
	ContentEncoding string
	CorrelationID   string
	ReplyTo         string
	Type            string
	AppID           string
	Priority        uint8
	Redelivered     bool
	// Received is when rungs read the message off the wire, for measuring
	// how long a delay really took.
	Received time.Time

	ack amqp.Acknowledger
	tag uint64
}

// Ack confirms the delivery, removing it from its queue. It is a no-op for a
// message from Get, which is already settled.
func (d Delivery) Ack() error {
	if d.ack == nil {
		return nil
	}
	return d.ack.Ack(d.tag, false)
}

// AckThrough confirms the delivery and every earlier one still
// unacknowledged on the same consumer, in one frame (AMQP's multiple
// flag). On a quorum queue each ack frame is a log entry of its own, so a
// batch settled with one frame costs the broker one entry instead of one
// per message. Only a consumer that has settled everything it took
// before this delivery may use it: it would settle those too.
func (d Delivery) AckThrough() error {
	if d.ack == nil {
		return nil
	}
	return d.ack.Ack(d.tag, true)
}

// Nack gives the delivery back (requeue) or drops it, dead-lettering it if
// its queue has a dead-letter exchange. A no-op for a message from Get.
func (d Delivery) Nack(requeue bool) error {
	if d.ack == nil {
		return nil
	}
	return d.ack.Nack(d.tag, false, requeue)
}

func newDelivery(d amqp.Delivery, ack bool) Delivery {
	out := Delivery{
		Exchange: d.Exchange, RoutingKey: d.RoutingKey, Body: d.Body,
		Headers: plainTable(d.Headers), ContentType: d.ContentType, MessageID: d.MessageId,
		Persistent: d.DeliveryMode == amqp.Persistent, Timestamp: d.Timestamp, Expiration: d.Expiration,
		ContentEncoding: d.ContentEncoding, CorrelationID: d.CorrelationId, ReplyTo: d.ReplyTo,
		Type: d.Type, AppID: d.AppId, Priority: d.Priority,
		Redelivered: d.Redelivered, Received: time.Now(),
	}
	if ack {
		out.ack, out.tag = d.Acknowledger, d.DeliveryTag
	}
	return out
}

// Consume delivers a queue's messages with manual acknowledgement and at
// most prefetch unacknowledged at once. The channel closes when ctx ends
// (unacknowledged messages go back to the queue) or the connection drops;
// consume again to continue. Acking changes the queue, so read-only mode
// refuses it.
func (c *Conn) Consume(ctx context.Context, queue string, prefetch int) (<-chan Delivery, error) {
	if c.ep.readOnly {
		return nil, ErrReadOnly
	}
	ch, _, err := c.channel(ctx)
	if err != nil {
		return nil, err
	}
	if err := ch.Qos(max(prefetch, 1), 0, false); err != nil {
		_ = ch.Close()
		return nil, c.ep.redact(fmt.Errorf("consume %q: set prefetch: %w", queue, err))
	}
	// Plain Consume, not ConsumeWithContext: the latter cancels the consumer
	// on ctx.Done while the goroutine below closes the channel, and that race
	// can make the broker close the whole connection (CHANNEL_ERROR).
	// Closing the channel alone ends the consumer and requeues what is
	// unacknowledged.
	in, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		_ = ch.Close()
		if isCode(err, amqp.NotFound) {
			return nil, fmt.Errorf("consume %q: no such queue in vhost %q", queue, c.ep.vhost)
		}
		return nil, c.ep.redact(fmt.Errorf("consume %q: %w", queue, err))
	}
	out := make(chan Delivery)
	go func() {
		defer close(out)
		defer ch.Close()
		for {
			select {
			case d, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- newDelivery(d, true):
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// Get fetches the message at the head of a queue, if any (basic.get). With
// remove it is acknowledged at once (draining); without, it is put back
// (peeking), which marks it redelivered and, on a quorum queue, counts as a
// delivery attempt. Read-only mode allows peeking only.
func (c *Conn) Get(ctx context.Context, queue string, remove bool) (Delivery, bool, error) {
	if remove && c.ep.readOnly {
		return Delivery{}, false, ErrReadOnly
	}
	var (
		d  Delivery
		ok bool
	)
	err := c.steps(ctx, 1, func(ch *amqp.Channel, _ int) error {
		m, got, err := ch.Get(queue, remove)
		if isCode(err, amqp.NotFound) {
			return fmt.Errorf("get from %q: no such queue in vhost %q", queue, c.ep.vhost)
		}
		if err != nil {
			return fmt.Errorf("get from %q: %w", queue, err)
		}
		if got && !remove {
			if err := m.Nack(false, true); err != nil {
				return fmt.Errorf("get from %q: put the message back: %w", queue, err)
			}
		}
		d, ok = newDelivery(m, false), got
		return nil
	})
	return d, ok, c.ep.redact(err)
}
