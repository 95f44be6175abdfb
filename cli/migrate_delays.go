package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// checkDelays validates the flags of a migration of delays (--from-delays):
// it moves the messages of a delay group (rungs discover --delays lists
// them) into the --to ladder: each to the queue its dead-lettering leads
// to, with the delay it has left (never less), the same Move as a
// ladder's migration (confirms, acknowledged only after the copy is
// confirmed, parked rather than dropped).
func (mf migrateFlags) checkDelays() error {
	switch {
	case mf.from != "" || mf.fromLayout != "":
		return usageErr("--from-delays takes the place of --from and --from-layout")
	case mf.to == "":
		return usageErr("--to is required: the ladder to move the delays into")
	case mf.dest != "":
		return usageErr("--dest does not go with --from-delays: each message goes where its delay queue dead-letters it")
	}
	return nil
}

// drainDelays runs a confirmed migration of delays and reports it.
func (e *env) drainDelays(ctx context.Context, mf migrateFlags, mp ops.MigratePlan, conn *broker.Conn) error {
	res, err := mp.Run(ctx, conn, mf.limit, nil)
	if err != nil || res.Stopped != broker.StopEmpty && res.Stopped != broker.StopLimit {
		e.view().reportMigrate(mp, res)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return &exitError{130, fmt.Errorf("migrate interrupted after %d message(s); the rest stay in their delay queues", res.Moved+res.Parked)}
		}
		return nil
	}
	e.view().reportMigrate(mp, res)
	if res.Stayed > 0 {
		return fmt.Errorf("%d message(s) stayed in the delay queues of %s (reasons above)", res.Stayed, mp.Source())
	}
	if len(res.HeldElsewhere()) > 0 {
		return fmt.Errorf("other consumers held messages of %s that could not be moved (warnings above); run migrate again once they are gone", mp.Source())
	}
	return nil
}

// dryRunMigrateDelays peeks at the first messages of each delay queue and
// says where each would go.
func (e *env) dryRunMigrateDelays(ctx context.Context, mf migrateFlags, mp ops.MigratePlan) error {
	out, err := e.previewMigrate(ctx, mf, mp)
	if err != nil {
		return err
	}
	if e.opts.json {
		return writeJSON(e.Out, map[string]any{"dry_run": true, "from_delays": mp.Source(), "to": toJSONLadder(mp.Migration.To), "park": mp.Park, "queues": out})
	}
	fmt.Fprintf(e.Out, "dry run: nothing was moved\n  from the delay queues of %s\n  into %s\n", mp.Source(), describe(mp.Migration.To))
	for _, rp := range out {
		head := fmt.Sprintf("%s (%s): %d ready", rp.Queue, topology.FormatDelay(time.Duration(rp.TTLMS)*time.Millisecond), rp.Ready)
		if rp.Skipped != "" {
			fmt.Fprintf(e.Out, "%s; not previewed: %s\n", head, rp.Skipped)
			continue
		}
		fmt.Fprintf(e.Out, "%s, the first %d:\n", head, len(rp.Messages))
		w := table(e.Out)
		for _, m := range rp.Messages {
			where := "→ park: " + m.Park
			if m.Park == "" {
				where = fmt.Sprintf("→ %s via %s key %s → %s", topology.FormatDelay(time.Duration(m.TargetDelayMS)*time.Millisecond), m.Exchange, m.RoutingKey, m.Target)
			}
			fmt.Fprintf(w, "  #%d\t%s\t%s left of %s (%s)\t%s\n", m.Position+1, orDash(m.MessageID), topology.FormatDelay(time.Duration(m.RemainingMS)*time.Millisecond), topology.FormatDelay(time.Duration(m.DelayMS)*time.Millisecond), m.Basis, where)
		}
		_ = w.Flush()
	}
	return nil
}
