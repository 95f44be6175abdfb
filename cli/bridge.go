package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/bridge"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

type bridgeFlags struct {
	exchange, exit, exitType, copyFrom string
	clamp, fromReceipt                 bool
	prefetch                           int
	every                              time.Duration
}

func (e *env) bridgeCommand() *cobra.Command {
	var bf bridgeFlags
	cmd := &cobra.Command{
		Use:   "bridge",
		Short: "Run delayed-message-plugin messages (x-delay) through a ladder",
		Long:  bridgeLong,
		Example: `  rungs bridge --exchange orders.delayed --type direct --yes
  rungs bridge --exchange orders.delayed --type topic --copy-bindings-from orders.plugin --ladder delays --yes
  rungs bridge --exchange events.delayed --type fanout --exit events --clamp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return e.runBridge(cmd.Context(), bf) },
	}
	f := cmd.Flags()
	f.StringVar(&bf.exchange, "exchange", "", "intake exchange producers publish to (required; a new name, not the plugin's exchange)")
	f.StringVar(&bf.exitType, "type", "direct", "exit exchange type, the plugin exchange's x-delayed-type: direct, topic, fanout or headers")
	f.StringVar(&bf.exit, "exit", "", "exit exchange due messages leave through (default: EXCHANGE.exit)")
	f.StringVar(&bf.copyFrom, "copy-bindings-from", "", "give the exit exchange the bindings of this exchange (e.g. the plugin's)")
	f.BoolVar(&bf.clamp, "clamp", false, "hold a delay beyond the ladder's longest for the longest, instead of parking it")
	f.BoolVar(&bf.fromReceipt, "from-receipt", false, "count each delay from when the broker received the message (timestamp_in_ms, from its timestamp interceptor), as the plugin does, not from when the bridge takes it")
	f.IntVar(&bf.prefetch, "prefetch", 2000, "messages each of the bridge's two consumers holds unacknowledged: more keeps more confirms in flight, and is what a kill may duplicate")
	f.DurationVar(&bf.every, "status-every", 30*time.Second, "print a status line this often (0: never)")
	cmd.Flags().BoolVarP(&e.opts.yes, "yes", "y", false, "create what is missing without asking")
	return cmd
}

func (e *env) runBridge(ctx context.Context, bf bridgeFlags) error {
	ask := ops.BridgeAsk{Vhost: e.vhost(), Exchange: bf.exchange, Exit: bf.exit, ExitType: bf.exitType, CopyFrom: bf.copyFrom, Prefetch: bf.prefetch}
	names, err := ask.Check()
	if err != nil {
		return ops.BridgeRefused(err)
	}
	if err := e.opts.ladder.check(); err != nil {
		return err
	}
	if err := ops.RefuseReadOnly(e.config(), "bridge"); err != nil {
		return err
	}
	e.opts.ladder.targets = mergeTargets(e.opts.ladder.targets, []string{names.Due})
	r, err := e.resolveLadderFrom(ctx, e.ladderSnapshot)
	if err != nil {
		return err
	}
	version := func() (topology.Version, error) { return e.clients().brokerVersion(ctx) }
	req := ops.ApplyRequest{Ladder: r.ladder, Snap: r.snap, SnapErr: r.mgmtErr, Existing: r.existing, Version: version}
	ap, err := ops.PlanApply(req)
	if err != nil {
		return err
	}
	insp, err := e.clients().reader()
	if err != nil {
		return err
	}
	setup, err := ops.PlanBridge(ctx, insp, ask, r.ladder.Name, r.discovered)
	if err != nil {
		return ops.BridgeRefused(err)
	}
	if len(setup.Missing) > 0 {
		if err := e.view().confirm(e.opts.yes, "bridge will create "+strings.Join(setup.Missing, ", "), "create"); err != nil {
			return err
		}
	}
	e.view().printLayoutNote(r)
	for _, w := range ap.Warnings {
		fmt.Fprintln(e.Err, "rungs: warning: "+oneLine(broker.Redact(w)))
	}
	v, _ := version()
	return e.serveBridge(ctx, bf, bridge.Options{
		Names: names, ExitType: bf.exitType, Ladder: r.ladder, LadderPlan: ap.Plan, Copy: setup.Copy,
		Version: v, Clamp: bf.clamp, FromReceipt: bf.fromReceipt, Log: e.Err, Prefetch: bf.prefetch,
	})
}

// serveBridge declares the bridge's objects and runs it until ctx ends,
// with a status line every bf.every.
func (e *env) serveBridge(ctx context.Context, bf bridgeFlags, o bridge.Options) error {
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	// Copies go out on a connection of their own (bridge.Options.Publish).
	pub, err := broker.Dial(ctx, e.config())
	if err != nil {
		return err
	}
	defer pub.Close()
	o.Publish = pub
	b, err := bridge.New(conn, o)
	if err != nil {
		return usageErr("%v", err)
	}
	if err := b.Declare(ctx); err != nil {
		return err
	}
	n := o.Names
	fmt.Fprintf(e.Err, "rungs bridge: %s (intake %s) through %s to %s exchange %s; parked in %s\n",
		n.Exchange, n.Intake, describe(o.Ladder), bf.exitType, n.Exit, n.Parked)
	go b.Watch(ctx, bf.every, func(p bridge.Progress) { fmt.Fprintln(e.Err, "rungs bridge: "+p.Line()) })
	err = b.Run(ctx)
	fmt.Fprintln(e.Err, "rungs bridge: stopped: "+b.Progress().Line())
	return err
}

const bridgeLong = `bridge is a long-running service for the producers of the delayed-message
plugin (rabbitmq-delayed-message-exchange): they keep publishing as they do,
to an exchange with their routing key and an x-delay header in milliseconds,
and change only the exchange's name to --exchange. The bridge consumes what
they publish, holds each message in a ladder for its x-delay, and publishes
it when due to the exit exchange (--exit, of the plugin's x-delayed-type
--type) with its original routing key, body, properties and headers
(x-delay included). Bind the destination queues to the exit exchange as they
were bound to the plugin's exchange, or copy those bindings with
--copy-bindings-from.

It declares, idempotently (--yes when anything is missing): the intake
exchange (fanout) and the quorum queues EXCHANGE.bridge.intake,
EXCHANGE.bridge.due (the ladder's target) and EXCHANGE.bridge.parked, the
ladder (--ladder and the usual ladder flags), and the exit exchange.

x-delay absent, zero or negative: delivered now. Not a number (a string,
even "5000"): parked with the reason in x-rungs-reason, never dropped.
Beyond the ladder's longest delay: parked, or held for the longest with
--clamp. A message is acked only once its copy is confirmed: a kill at any
point loses nothing; a copy of a message the broker delivered again is
marked x-rungs-possible-duplicate, and each copy has its own
x-rungs-replay-id. Run several bridges on one exchange to share the work;
a restart resumes from the queues. The delay counts from when the bridge
takes the message: a backlog in the intake adds to it (the status line's
intake lag). With --from-receipt it counts from when the broker received
the message, as the plugin does, where the broker's timestamp interceptor
stamps timestamp_in_ms (RabbitMQ 3.12 and later; docs/bridge.md). The
migration recipe: docs/bridge.md.`
