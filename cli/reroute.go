package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

func (e *env) rerouteCommand() *cobra.Command {
	var park bool
	cmd := &cobra.Command{
		Use:   "reroute --ladder NAME [--park]",
		Short: "Send on the expired messages a lost route held, once the route is back or parked",
		Long: `reroute moves the expired messages a quorum ladder's rungs hold for a
destination whose route was lost (a queue, binding or exchange gone: status
and doctor name it). Restoring the route is not enough by itself: the
broker's dead-letter worker tries a held message again only every
dead_letter_worker_publisher_confirm_timeout (180s by default). reroute
makes it try at once, with a no-op policy on each holding rung, deleted
again afterwards, and waits for the rungs to drain.

While the route is still lost it refuses, naming what restores it, unless
--park: then it first routes each lost destination to a parking queue
DEST.parked, bound where the destination's queue was, so that the rung
drains; replay them from there once the destination is back. rungs' own
ladders keep unrouted messages in NAME.unroutable already: restore the
route, then replay from there. Asks for confirmation; --read-only refuses it.`,
		Example: `  rungs reroute --ladder celery
  rungs reroute --ladder nsb.v2 --park --yes
  rungs replay --from emails.parked --to-queue emails --yes   # once emails is back`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.runReroute(cmd.Context(), park)
		},
	}
	cmd.Flags().BoolVar(&park, "park", false, "route each lost destination to a parking queue DEST.parked first")
	cmd.Flags().BoolVarP(&e.opts.yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func (e *env) runReroute(ctx context.Context, park bool) error {
	if err := ops.RefuseReadOnly(e.config(), "reroute"); err != nil {
		return err
	}
	snap, err := e.ladderSnapshot(ctx)
	if err != nil {
		return err
	}
	l, err := ops.RerouteLadder(snap, e.opts.ladder.query(), e.opts.ladder.name, e.vhost())
	if err != nil {
		return err
	}
	u := unstaller{m: e.clients().mgmt, vhost: e.vhost(), timeout: e.opts.timeout, view: e.view()}
	// One reading: what rungs hold now, no stall watch (reroute acts on
	// every held rung, whatever held it).
	o, err := observeLadders(ctx, ops.Bounded{Insp: u.m, Timeout: u.timeout}, ops.ScopeOf(u.vhost, l))
	if err != nil {
		return err
	}
	req, err := ops.PlanReroute(o.Report(o.At()), l, park)
	if err != nil {
		return err
	}
	if err := e.view().confirm(e.opts.yes, req.Describe(e.vhost()), l.Name); err != nil {
		return err
	}
	if len(req.Park.Queues) > 0 {
		conn, err := e.clients().amqp(ctx)
		if err != nil {
			return err
		}
		if _, err := conn.Apply(ctx, req.Park); err != nil {
			return fmt.Errorf("park: %w", err)
		}
		fmt.Fprint(e.Out, ui.ParkedText(req))
	}
	return u.run(ctx, ops.UnstallPlan{Vhost: u.vhost, Ladder: l, Targets: req.Held, Remedy: topology.RemedyPolicy}, "")
}
