package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

func (e *env) applyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "apply",
		Short: "Declare a ladder (idempotent; never deletes)",
		Long: `apply declares every exchange, queue and binding of the ladder. Objects that
already exist with the same arguments are left alone; an object that exists
with other arguments stops apply with an error naming it and the argument:
rungs never deletes a queue (and its messages) to make room. After applying,
apply reads the broker back and reports any drift.`,
		Example: `  rungs apply --ladder jobs --unit 1s --max-delay 7d
  rungs apply --ladder jobs --queue-type classic --target orders.retry   # faster rungs that lose messages between rungs on a node stop
  rungs apply --ladder legacy --layout prefix --max-delay 1h       # topic exchanges: publishers need no BCC header
  rungs apply --ladder example --layout suffix --max-delay 15s   # seed 003's Terraform ladder`,
		Args: cobra.NoArgs,
		RunE: e.runApply,
	}
	cmd.Flags().StringSliceVar(&e.opts.ladder.targets, "target", nil, "destination queue to bind for delivery (repeatable; created durable if missing)")
	return cmd
}

func (e *env) runApply(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	if err := e.opts.ladder.check(); err != nil {
		return err
	}
	if err := e.refuseReadOnly("apply"); err != nil {
		return err
	}
	r, err := e.resolveLadder(ctx)
	if err != nil {
		return err
	}
	l := r.ladder
	// Two shapes of one ladder share its entry and level exchanges, whose
	// bindings would then overlap and deliver a message twice.
	if r.discovered && !sameShape(r.existing, l) {
		return fmt.Errorf("apply %s: %s ladder %s already exists in vhost %s as %s; the flags describe %s, and two shapes would share its exchanges and deliver messages twice; nothing was declared (apply the new shape under another name and move messages with rungs migrate, or rungs teardown %s first)",
			l.Name, r.existing.Layout, l.Name, l.Vhost, shape(r.existing), shape(l), l.Name)
	}
	versionWarning, err := e.refuseBrokenBCC(ctx, l)
	if err != nil {
		return err
	}
	plan := l.Plan()
	// Refuse a conflict before declaring anything: declaring stops at the
	// first object the broker refuses, after creating those before it.
	if r.snap != nil {
		plan = plan.KeepingLegacyArgs(*r.snap)
		if c := conflicts(plan, *r.snap); len(c) > 0 {
			return fmt.Errorf("apply %s: %s %s exists with other arguments: %s (rungs never deletes it for you); nothing was declared%s",
				l.Name, c[0].Object, c[0].Name, c[0].Detail, more(len(c)-1, "conflict"))
		}
	}
	conn, err := e.amqp(ctx)
	if err != nil {
		return err
	}
	// Said only once the broker answers: when neither API does, the
	// connection error is the one line to print.
	if versionWarning != "" {
		fmt.Fprintln(e.Err, versionWarning)
	}
	e.printLayoutNote(r)
	if r.layoutNote == "" && l.RoutesByBCC() && l.QueueType == topology.Quorum {
		if v, err := e.brokerVersion(ctx); err == nil && v.LosesBCCOnDeadLetterRetry() {
			fmt.Fprintf(e.Err, "rungs: warning: %s (rungs doctor watches for it; --layout prefix avoids it)\n", bccRetryText(v, l.Name))
		}
	}
	if r.snap == nil {
		fmt.Fprintln(e.Err, "rungs: warning: "+oneLine(broker.Redact(fmt.Sprintf("cannot read the vhost through the management API (%v), so apply cannot check for conflicting objects or a ladder of another shape under this name", r.mgmtErr))))
	}
	for _, t := range l.Targets {
		created, err := conn.EnsureQueue(ctx, t, l.QueueType)
		if err != nil {
			return fmt.Errorf("destination %s: %w", t, err)
		}
		if created && !e.opts.json {
			fmt.Fprintf(e.Out, "created destination queue %s (durable, %s)\n", t, l.QueueType)
		}
	}
	// A tall ladder is hundreds of declarations, each a round trip.
	actx, cancel := context.WithTimeout(ctx, 4*e.opts.timeout)
	defer cancel()
	// A destination that receives through an exchange of its own (Celery
	// binds the queue's exchange, not the queue) needs that exchange.
	if closed := plan.Closed(); len(closed.Exchanges) > len(plan.Exchanges) {
		if _, err := conn.Apply(actx, topology.Plan{Ladder: l, Exchanges: closed.Exchanges[len(plan.Exchanges):]}); err != nil {
			return fmt.Errorf("destination exchange: %w", err)
		}
	}
	res, err := conn.Apply(actx, plan)
	if err != nil {
		return fmt.Errorf("apply %s: %w", l.Name, err)
	}
	snap, serr := e.checkSnapshot(ctx)
	var drift []topology.Drift
	if serr == nil {
		drift = topology.Diff(plan, snap)
	}
	if e.opts.json {
		out := map[string]any{
			"ladder": toJSONLadder(l), "exchanges": res.Exchanges, "queues": res.Queues, "bindings": res.Bindings,
			"drift": toJSONDrift(drift), "verified": serr == nil,
		}
		if err := writeJSON(e.Out, out); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.Out, "applied %s\n", describe(l))
		fmt.Fprintf(e.Out, "  %s, %s, %s declared\n", topology.Counted(res.Exchanges, "exchange", "exchanges"), topology.Counted(res.Queues, "queue", "queues"), topology.Counted(res.Bindings, "binding", "bindings"))
		if serr != nil {
			fmt.Fprintln(e.Err, "rungs: warning: "+oneLine(broker.Redact(fmt.Sprintf("could not verify through the management API: %v", serr))))
		} else {
			printDrift(e.Out, drift)
		}
	}
	if len(drift) > 0 {
		return &exitError{ExitDrift, nil}
	}
	return nil
}

// brokerChecked are the x-arguments RabbitMQ compares when an existing
// queue or exchange is declared again; any other argument may differ.
var brokerChecked = map[string]bool{
	"alternate-exchange": true, "x-dead-letter-exchange": true, "x-dead-letter-routing-key": true,
	"x-dead-letter-strategy": true, "x-delivery-limit": true, "x-expires": true, "x-max-length": true,
	"x-max-length-bytes": true, "x-max-priority": true, "x-message-ttl": true, "x-overflow": true,
	"x-queue-mode": true, "x-queue-type": true, "x-quorum-initial-group-size": true,
	"x-single-active-consumer": true,
}

// conflicts lists the plan's queues and exchanges that exist on the broker
// declared in a way it would refuse to declare again.
func conflicts(plan topology.Plan, snap topology.Snapshot) []topology.Drift {
	checked := func(a topology.Args) topology.Args {
		out := topology.Args{}
		for k, v := range a {
			if brokerChecked[k] {
				out[k] = v
			}
		}
		return out
	}
	var out []topology.Drift
	add := func(object, name string, diffs []string) {
		for _, d := range diffs {
			out = append(out, topology.Drift{Kind: topology.Different, Object: object, Name: name, Detail: d})
		}
	}
	for _, want := range plan.Exchanges {
		if got, ok := snap.Exchange(want.Name); ok {
			var ds []string
			if got.Type != want.Type {
				ds = append(ds, fmt.Sprintf("type is %s, plan has %s", got.Type, want.Type))
			}
			if got.Durable != want.Durable || got.AutoDelete != want.AutoDelete {
				ds = append(ds, fmt.Sprintf("durable/auto-delete is %v/%v, plan has %v/%v", got.Durable, got.AutoDelete, want.Durable, want.AutoDelete))
			}
			add("exchange", want.Name, append(ds, topology.ArgsDiff(checked(want.Args), checked(got.Args))...))
		}
	}
	for _, want := range plan.Queues {
		if got, ok := snap.Queue(want.Name); ok {
			var ds []string
			if got.Durable != want.Durable || got.AutoDelete != want.AutoDelete {
				ds = append(ds, fmt.Sprintf("durable/auto-delete is %v/%v, plan has %v/%v", got.Durable, got.AutoDelete, want.Durable, want.AutoDelete))
			}
			add("queue", want.Name, append(ds, topology.ArgsDiff(checked(want.Args), checked(got.Args))...))
		}
	}
	return out
}

// more says how many more there are, if any.
func more(n int, what string) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" (and %d more %s)", n, map[bool]string{true: what, false: what + "s"}[n == 1])
}
