package cli

import (
	"context"

	"github.com/rungs-dev/rungs/model"
	"github.com/rungs-dev/rungs/ops"
)

// connectContext opens the clients of a named context for the console's
// `:ctx NAME`. The context's own settings apply: the flags and environment
// variables that chose the first broker (--url, RUNGS_URL, --vhost...) do
// not carry over, or every context would be pinned to the same broker.
// The config file, the timeout and --read-only do carry over: read-only
// asked for on the command line stays on whatever the context says.
func (e *env) connectContext(ctx context.Context, name string) (model.Backends, error) {
	conf := ops.ContextSource(e.Getenv, e.conf.PathFlag, name)
	cfg, err := conf.Resolve(ops.BrokerFlags{Timeout: e.opts.timeout})
	if err != nil {
		return model.Backends{}, err
	}
	cfg = ops.CarryReadOnly(cfg, e.config(), e.opts.readOnly)
	x := &clients{cfg: cfg}
	m, err := x.management()
	if err != nil {
		return model.Backends{}, err
	}
	conn, err := x.amqp(ctx)
	if err != nil {
		return model.Backends{}, err
	}
	return model.Backends{
		Inspector: m, Publisher: conn, Purger: conn, Conn: conn,
		Peeker: conn, Mover: conn, Limits: m, Scheduler: conn,
		Vhost: cfg.EffectiveVhost(), BrokerLabel: brokerLabel(cfg.URL), ReadOnly: cfg.ReadOnly,
		Close: x.close,
	}, nil
}
