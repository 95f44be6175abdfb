package cli

import (
	"context"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// clients are one broker's management API client and AMQP connection,
// each opened on first use with the configuration resolved for that
// broker, or refused with err when it did not resolve. Nothing here reads
// a flag, so the console's :ctx opens a second set for another context.
type clients struct {
	cfg  broker.Config
	err  error
	mgmt *broker.Management
	conn *broker.Conn
}

func (c *clients) close() {
	if c.conn != nil {
		c.conn.Close()
	}
}

// brokerVersion is the broker's version from the management API, read
// once per command however many checks ask for it.
func (c *clients) brokerVersion(ctx context.Context) (topology.Version, error) {
	m, err := c.management()
	if err != nil {
		return topology.Version{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	return m.Version(cctx)
}

// management opens (once) the management API client.
func (c *clients) management() (*broker.Management, error) {
	if c.err != nil {
		return nil, c.err
	}
	if c.mgmt == nil {
		m, err := broker.NewManagement(c.cfg)
		if err != nil {
			return nil, err
		}
		c.mgmt = m
	}
	return c.mgmt, nil
}

// amqp opens (once) the AMQP connection.
func (c *clients) amqp(ctx context.Context) (*broker.Conn, error) {
	if c.err != nil {
		return nil, c.err
	}
	if c.conn == nil {
		ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
		conn, err := broker.Dial(ctx, c.cfg)
		if err != nil {
			return nil, err
		}
		c.conn = conn
	}
	return c.conn, nil
}

// dial opens an AMQP connection to another vhost than the configured
// one, with the same credentials; the caller closes it.
func (c *clients) dial(ctx context.Context, vhost string) (*broker.Conn, error) {
	if c.err != nil {
		return nil, c.err
	}
	cfg := c.cfg
	cfg.Vhost = vhost
	return broker.Dial(ctx, cfg)
}

// reader is the management API as an operation reads it through ops,
// each request bounded by --timeout.
func (c *clients) reader() (ops.ScopedInspector, error) {
	m, err := c.management()
	if err != nil {
		return nil, err
	}
	return ops.Bounded{Insp: m, Timeout: c.cfg.Timeout}, nil
}
