package cli

import (
	"errors"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/model"
	"github.com/rungs-dev/rungs/ops"
)

// runConsole opens the full-screen console (rungs with no subcommand).
func (e *env) runConsole(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	if err := e.opts.ladder.check(); err != nil {
		return err
	}
	m, err := e.clients().management()
	if err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	ladder := e.opts.ladder.named()
	current, _ := e.conf.ContextName()
	cf, _ := e.conf.Load()
	app := model.New(model.Options{
		Backends: model.Backends{
			Inspector: m, Publisher: conn, Purger: conn, Conn: conn,
			Peeker: conn, Mover: conn, Limits: m, Scheduler: conn,
			Vhost: e.vhost(), BrokerLabel: brokerLabel(e.config().URL), ReadOnly: e.config().ReadOnly,
			Close: func() { _ = conn.Close() },
		},
		Refresh: e.opts.refresh, Ladder: ladder,
		Contexts: cf.ContextNames(), Context: current, Connect: e.connectContext,
	})
	final, err := tea.NewProgram(app, tea.WithContext(ctx), tea.WithInput(e.In), tea.WithOutput(e.screen)).Run()
	if a, ok := final.(model.App); ok {
		a.Close()
	}
	if errors.Is(err, tea.ErrInterrupted) || errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return &exitError{130, nil}
	}
	return err
}

// brokerLabel names the broker for the header (ops.BrokerLabel).
func brokerLabel(raw string) string { return ops.BrokerLabel(raw) }
