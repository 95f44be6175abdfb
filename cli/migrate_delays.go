package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// runMigrateDelays moves the messages of a delay group (rungs discover
// --delays lists them) into the --to ladder: each to the queue its
// dead-lettering leads to, with the delay it has left (never less), the
// same Move as a ladder's migration (confirms, acknowledged only after the
// copy is confirmed, parked rather than dropped).
func (e *env) runMigrateDelays(ctx context.Context, mf migrateFlags) error {
	switch {
	case mf.from != "" || mf.fromLayout != "":
		return usageErr("--from-delays takes the place of --from and --from-layout")
	case mf.to == "":
		return usageErr("--to is required: the ladder to move the delays into")
	case mf.dest != "":
		return usageErr("--dest does not go with --from-delays: each message goes where its delay queue dead-letters it")
	}
	if err := mf.check(); err != nil {
		return err
	}
	if !mf.dryRun {
		if err := refuseReadOnly(e.config(), "migrate"); err != nil {
			return err
		}
	}
	mp, err := e.planMigrateDelays(ctx, mf)
	if err != nil {
		return err
	}
	if mf.dryRun {
		return e.dryRunMigrateDelays(ctx, mf, mp)
	}
	what := fmt.Sprintf("migrate about %d message(s) from the %d delay queue(s) of %s\n  into %s;\n  messages it cannot take go to %s",
		mp.Ready, len(mp.Rungs), mp.Source(), describe(mp.Migration.To), mp.Park)
	if err := e.view().confirm(e.opts.yes, what, mp.Group.Name); err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	res, err := mp.Run(ctx, conn, mf.limit, nil)
	if err != nil || res.Stopped != broker.StopEmpty && res.Stopped != broker.StopLimit {
		e.view().reportMigrateDelays(mp, res)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return &exitError{130, fmt.Errorf("migrate interrupted after %d message(s); the rest stay in their delay queues", res.Moved+res.Parked)}
		}
		return nil
	}
	e.view().reportMigrateDelays(mp, res)
	if res.Stayed > 0 {
		return fmt.Errorf("%d message(s) stayed in the delay queues of %s (reasons above)", res.Stayed, mp.Source())
	}
	if len(res.HeldElsewhere()) > 0 {
		return fmt.Errorf("other consumers held messages of %s that could not be moved (warnings above); run migrate again once they are gone", mp.Source())
	}
	return nil
}

// reportMigrateDelays says what a migration of delays did, per queue and
// in all, in the shape of a ladder's migration report.
func (v view) reportMigrateDelays(mp ops.MigratePlan, res ops.MigrateResult) {
	if v.json {
		type jsonQueue struct {
			Queue   string `json:"queue"`
			Moved   int    `json:"moved"`
			Parked  int    `json:"parked"`
			Stayed  int    `json:"stayed"`
			Unknown int    `json:"unknown"`
			Left    int    `json:"left"`
			Stopped string `json:"stopped"`
		}
		qs := make([]jsonQueue, 0, len(res.Rungs))
		for _, r := range res.Rungs {
			qs = append(qs, jsonQueue{r.Queue, r.Moved, r.Parked, r.Stayed, r.Unknown, r.Left, r.Stopped})
		}
		_ = writeJSON(v.Out, map[string]any{
			"from_delays": mp.Source(), "to": toJSONLadder(mp.Migration.To), "park": mp.Park,
			"moved": res.Moved, "parked": res.Parked, "stayed": res.Stayed, "unknown": res.Unknown,
			"reconnects": res.Reconnects, "reasons": res.Reasons, "rungs": qs,
			"stopped": res.Stopped, "seconds": res.Elapsed.Seconds(), "held_elsewhere": heldElsewhere(res),
		})
		return
	}
	fmt.Fprintf(v.Out, "migrated %d message(s) from the delay queues of %s into %s %q in %s; stopped: %s\n",
		res.Moved, mp.Source(), mp.Migration.To.Layout, mp.Migration.To.Name, res.Elapsed.Round(time.Millisecond), res.Stopped)
	w := table(v.Out)
	fmt.Fprintln(w, "  queue\tmoved\tparked\tstayed\tleft")
	for _, r := range res.Rungs {
		left := "?"
		if r.Left >= 0 {
			left = fmt.Sprint(r.Left)
		}
		fmt.Fprintf(w, "  %s\t%d\t%d\t%d\t%s\n", r.Queue, r.Moved, r.Parked, r.Stayed, left)
	}
	fmt.Fprintf(w, "  total\t%d\t%d\t%d\n", res.Moved, res.Parked, res.Stayed)
	_ = w.Flush()
	if res.Parked > 0 {
		fmt.Fprintf(v.Out, "  %d parked in %s, the reason in x-rungs-reason\n", res.Parked, mp.Park)
	}
	if res.Unknown > 0 || res.Reconnects > 0 {
		fmt.Fprintf(v.Out, "  %d possibly duplicated (in flight when the connection dropped %s)\n", res.Unknown, topology.Counted(res.Reconnects, "time", "times"))
	}
	for _, l := range ui.ReasonLines(res.Reasons) {
		fmt.Fprintln(v.Out, l)
	}
	for _, l := range res.HeldElsewhere() {
		fmt.Fprintln(v.Out, "  warning: "+l)
	}
}

// planMigrateDelays reads every ladder of the vhost and the delay
// inventory, and lets ops.PlanMigrate find the group and the ladder and
// check them.
func (e *env) planMigrateDelays(ctx context.Context, mf migrateFlags) (ops.MigratePlan, error) {
	// Every ladder of the vhost, as discover reads them, so that their
	// rungs are not taken for delay queues; then the inventory's paged
	// listing, the one whole-vhost read a migration of delays needs.
	insp, err := e.clients().reader()
	var o ops.Observer
	if err == nil {
		o, err = ops.ReadLadders(ctx, insp, ops.Scope{Vhost: e.vhost()})
	}
	var inv topology.Inventory
	var snap topology.Snapshot
	if err == nil {
		var m *broker.Management
		if m, err = e.clients().management(); err == nil {
			cctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
			inv, snap, err = ops.Delays(cctx, m, e.vhost(), o.Found())
			cancel()
		}
	}
	if err != nil {
		return ops.MigratePlan{}, fmt.Errorf("migrate needs the management API to find the delays and the ladder: %w", err)
	}
	req := ops.MigrateRequest{FromDelays: mf.fromDelays, Delays: inv, Found: o.Found(), To: mf.to, ToLayout: mf.toLayout, Park: mf.park, Window: mf.window}
	req.Margin, _ = topology.ParseDelay(mf.margin)
	if mf.rate != "" {
		req.Rate, _ = topology.ParseRate(mf.rate)
	}
	return ops.PlanMigrate(snap.Merge(o.Snapshot()), req)
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
