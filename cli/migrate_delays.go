package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// delayMigration is a move of one delay group's messages into a ladder,
// worked out.
type delayMigration struct {
	group topology.DelayGroup
	g     topology.DelayMove
	route func(exchange, key string) []string
	park  string
	opts  broker.MoveOptions
	ready int64
	// snap is the vhost as the plan read it: its delay queues' arguments
	// and statistics, for the peek gate of a dry run.
	snap topology.Snapshot
}

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
	dm, err := e.planMigrateDelays(ctx, mf)
	if err != nil {
		return err
	}
	if mf.dryRun {
		return e.dryRunMigrateDelays(ctx, mf, dm)
	}
	what := fmt.Sprintf("migrate about %d message(s) from the %d delay queue(s) of %s\n  into %s;\n  messages it cannot take go to %s",
		dm.ready, len(dm.group.Queues), dm.group.ID(), describe(dm.g.To), dm.park)
	if err := e.view().confirm(e.opts.yes, what, dm.group.Name); err != nil {
		return err
	}
	conn, err := e.clients().amqp(ctx)
	if err != nil {
		return err
	}
	steps := make([]ops.DrainStep, len(dm.group.Queues))
	for i, q := range dm.group.Queues {
		// A delay queue with x-expires goes once unused: its messages
		// went with it or before, nothing to move.
		steps[i] = ops.DrainStep{Queue: q.Name, Options: broker.MigrateDelayQueue(dm.opts, dm.g, q, dm.route), MayBeGone: true}
	}
	res, err := ops.Drain(ctx, conn, steps, mf.limit, nil)
	if err != nil || res.Stopped != broker.StopEmpty && res.Stopped != broker.StopLimit {
		e.view().reportMigrateDelays(dm, res)
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return &exitError{130, fmt.Errorf("migrate interrupted after %d message(s); the rest stay in their delay queues", res.Moved+res.Parked)}
		}
		return nil
	}
	e.view().reportMigrateDelays(dm, res)
	if res.Stayed > 0 {
		return fmt.Errorf("%d message(s) stayed in the delay queues of %s (reasons above)", res.Stayed, dm.group.ID())
	}
	if len(res.HeldElsewhere()) > 0 {
		return fmt.Errorf("other consumers held messages of %s that could not be moved (warnings above); run migrate again once they are gone", dm.group.ID())
	}
	return nil
}

// reportMigrateDelays says what a migration of delays did, per queue and
// in all, in the shape of a ladder's migration report.
func (v view) reportMigrateDelays(dm delayMigration, res ops.MigrateResult) {
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
			"from_delays": dm.group.ID(), "to": toJSONLadder(dm.g.To), "park": dm.park,
			"moved": res.Moved, "parked": res.Parked, "stayed": res.Stayed, "unknown": res.Unknown,
			"reconnects": res.Reconnects, "reasons": res.Reasons, "rungs": qs,
			"stopped": res.Stopped, "seconds": res.Elapsed.Seconds(), "held_elsewhere": heldElsewhere(res),
		})
		return
	}
	fmt.Fprintf(v.Out, "migrated %d message(s) from the delay queues of %s into %s %q in %s; stopped: %s\n",
		res.Moved, dm.group.ID(), dm.g.To.Layout, dm.g.To.Name, res.Elapsed.Round(time.Millisecond), res.Stopped)
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
		fmt.Fprintf(v.Out, "  %d parked in %s, the reason in x-rungs-reason\n", res.Parked, dm.park)
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

// planMigrateDelays finds the group and the ladder on a snapshot of the
// vhost and checks that the ladder routes as its plan says.
func (e *env) planMigrateDelays(ctx context.Context, mf migrateFlags) (delayMigration, error) {
	var dm delayMigration
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
		return dm, fmt.Errorf("migrate needs the management API to find the delays and the ladder: %w", err)
	}
	snap = snap.Merge(o.Snapshot())
	grp, ok := inv.Group(mf.fromDelays)
	if !ok {
		return dm, fmt.Errorf("no delay group %q in vhost %s (rungs discover --delays lists them as APP/NAME); nothing was migrated", mf.fromDelays, snap.Vhost)
	}
	tf, err := ops.FindLadder(o.Found(), ops.LadderQuery{Name: mf.to, Layout: mf.toLayout})
	if errors.Is(err, ops.ErrNoLadder) {
		return dm, fmt.Errorf("no ladder %q in vhost %s (rungs discover lists them); nothing was migrated", mf.to, snap.Vhost)
	}
	if err != nil {
		return dm, usageErr("%v: add --to-layout", err)
	}
	to := tf.Ladder
	margin, _ := topology.ParseDelay(mf.margin)
	dm.group, dm.g, dm.route, dm.snap = grp, topology.DelayMove{To: to, Margin: margin}, topology.DeadLetterRoute(snap), snap
	dm.park = mf.park
	if dm.park == "" {
		dm.park = to.Name + ".migrate.parked"
	}
	if role, _, ok := to.QueueRole(dm.park); ok {
		return dm, usageErr("--park %s is the %s queue of ladder %s", dm.park, role, to.Name)
	}
	for _, q := range grp.Queues {
		if q.Name == dm.park {
			return dm, usageErr("--park %s is a delay queue of %s", dm.park, grp.ID())
		}
	}
	g := topology.NewGraph(snap)
	for _, dest := range to.Targets {
		tr, err := to.Place(to.MaxDelay(), dest)
		if err != nil {
			continue
		}
		if err := ops.RouteErr(tr, g); err != nil {
			return dm, fmt.Errorf("nothing migrated: ladder %s does not route as its plan says (%s to %s: %v); see rungs plan --ladder %s", to.Name, topology.FormatDelay(tr.Delay), tr.Target, errors.Unwrap(err), to.Name)
		}
	}
	// Longest delays first, as a ladder's rungs are drained.
	sort.SliceStable(dm.group.Queues, func(i, j int) bool { return dm.group.Queues[i].TTL > dm.group.Queues[j].TTL })
	for _, q := range dm.group.Queues {
		if sq, ok := snap.Queue(q.Name); ok {
			dm.ready += sq.Stats.Ready
		}
	}
	dm.opts = broker.MoveOptions{Park: dm.park, ParkType: to.QueueType, Window: mf.window}
	if mf.rate != "" {
		dm.opts.Rate, _ = topology.ParseRate(mf.rate)
	}
	return dm, nil
}

// dryRunMigrateDelays peeks at the first messages of each delay queue and
// says where each would go.
func (e *env) dryRunMigrateDelays(ctx context.Context, mf migrateFlags, dm delayMigration) error {
	n := defaultMigratePreview
	if mf.limit > 0 {
		n = min(mf.limit, broker.MaxPeek)
	}
	var out []migrateRungPreview
	var conn *broker.Conn
	for _, q := range dm.group.Queues {
		rp := migrateRungPreview{Queue: q.Name, TTLMS: q.TTL.Milliseconds(), Messages: []migratePreview{}}
		// The peek gate of rungs peek: a quorum queue's delivery limit and
		// delayed retry decide whether a peek may change what happens to
		// its messages, by release.
		sq, _ := dm.snap.Queue(q.Name)
		var pf ops.PeekFacter
		if m, err := e.clients().management(); err == nil {
			pf = m
		}
		facts := ops.ReadPeekFacts(ctx, pf, e.vhost(), sq, topology.Version{})
		g := ops.GatePeek(ops.PeekRequest{
			Queue: sq, Version: facts.Version, Limit: facts.Limit, LimitKnown: facts.LimitKnown,
			DelayedRetries: facts.DelayedRetries, Force: mf.force, ReadOnly: e.config().ReadOnly,
		})
		switch g.Verdict {
		case ops.PeekReadOnly:
			rp.Skipped = g.Why + ", which --read-only refuses"
		case ops.PeekNeedsForce:
			rp.Skipped = g.Why + " (add --force to preview it)"
		}
		if g.Note != "" {
			fmt.Fprintf(e.Err, "rungs: note: %s\n", g.Note)
		}
		if rp.Skipped != "" {
			out = append(out, rp)
			continue
		}
		if conn == nil {
			c, err := e.clients().amqp(ctx)
			if err != nil {
				return err
			}
			conn = c
		}
		previews, res, err := conn.PreviewMove(ctx, broker.MigrateDelayQueue(dm.opts, dm.g, q, dm.route), n)
		if err != nil && !errors.Is(err, broker.ErrNotFound) {
			return err
		}
		rp.Ready = res.Ready
		for _, pv := range previews {
			d := pv.Message.Delivery
			p := dm.g.PlaceDelay(topology.DelayMessage{Queue: q, Key: d.RoutingKey, Headers: d.Headers, Timestamp: d.Timestamp, Expiration: d.Expiration}, d.Received, dm.route)
			m := migratePreview{
				Position: pv.Message.Position, MessageID: pv.Message.MessageID, Park: p.Park,
				DelayMS: p.Estimate.Total.Milliseconds(), SpentMS: p.Estimate.Spent.Milliseconds(),
				Basis: string(p.Estimate.Basis), RemainingMS: p.Estimate.Remaining.Milliseconds(),
			}
			if p.Park == "" {
				m.Exchange, m.RoutingKey, m.Target = p.Trace.Exchange, p.Trace.Key, p.Trace.Target
				m.TargetDelayMS = p.Trace.Delay.Milliseconds()
			}
			rp.Messages = append(rp.Messages, m)
		}
		out = append(out, rp)
	}
	if e.opts.json {
		return writeJSON(e.Out, map[string]any{"dry_run": true, "from_delays": dm.group.ID(), "to": toJSONLadder(dm.g.To), "park": dm.park, "queues": out})
	}
	fmt.Fprintf(e.Out, "dry run: nothing was moved\n  from the delay queues of %s\n  into %s\n", dm.group.ID(), describe(dm.g.To))
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
