// Package exporter serves the ladders of a broker as Prometheus metrics.
// Each scrape refreshes one ops.Observer per vhost, the console's: one
// management request for the queues' statistics per vhost, and a full
// snapshot only when the set of queues changed (or every few scrapes, for
// bindings). It writes what the observer's health.Report says and judges
// nothing itself.
package exporter

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// Options choose what the exporter reads.
type Options struct {
	// Vhosts are the vhosts to read; AllVhosts reads every vhost the user
	// can see instead (listed again with each full snapshot).
	Vhosts    []string
	AllVhosts bool
	// Timeout bounds each management request.
	Timeout time.Duration
	// Interval is the broker's statistics interval: the slack the stalled
	// rule allows for stale figures.
	Interval time.Duration
	// Log receives one line per failed read; errors are redacted.
	Log io.Writer
	// Now is the clock (tests replace it).
	Now func() time.Time
	// Reach is how far each read goes: the ladders' objects by name
	// (ops.ReachScoped, the zero value, what the management API serves),
	// or the whole vhost (ops.ReachVhost, for an inspector that reads
	// nothing by name).
	Reach ops.Reach
}

// Exporter is a prometheus.Collector over a broker's ladders.
type Exporter struct {
	insp broker.Inspector
	opt  Options

	mu     sync.Mutex // one scrape at a time: each reads the broker
	scrape int
	vhosts []string
	state  map[string]ops.Observer
	// capacity is the drain capacities saved on the broker (rungs bench
	// --drain --save), read with each round of snapshots; nil when none
	// could be read.
	capacity map[string]broker.DrainCapacity
	// retry holds each vhost's quorum queues under delayed retry, as last
	// listed: listed again when the observer re-read the snapshot (queues
	// came or went, or every few scrapes), their statistics read on every
	// scrape, one request each.
	retry map[string][]topology.RetryQueue
	// bridged says, per vhost, whether its last listing of bridge queues
	// found any. A vhost without bridges is listed again only when the
	// observer re-read its snapshot, as delayed retry's candidates are:
	// the listing is filtered on the broker, which still walks every
	// queue of the vhost, and most vhosts have no bridge. One with
	// bridges is listed on every scrape, for their statistics.
	bridged map[string]bool
}

// retryReader is what the exporter reads delayed retry with;
// *broker.Management is one. An inspector without it (a test's fake)
// exports no delayed retry.
type retryReader interface {
	Version(ctx context.Context) (topology.Version, error)
	RetryCandidates(ctx context.Context, vhost string, v topology.Version) ([]topology.RetryQueue, error)
	RetryStats(ctx context.Context, vhost string, qs []topology.RetryQueue) ([]topology.RetryQueue, error)
}

// New builds an exporter; it does not contact the broker.
func New(insp broker.Inspector, opt Options) *Exporter {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 10 * time.Second
	}
	if opt.Interval <= 0 {
		opt.Interval = broker.DefaultStatsInterval
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	return &Exporter{insp: insp, opt: opt, state: map[string]ops.Observer{}, retry: map[string][]topology.RetryQueue{}, bridged: map[string]bool{}}
}

// Labels of the metrics.
var (
	rungLabels   = []string{"vhost", "ladder", "layout", "level", "queue"}
	ladderLabels = []string{"vhost", "ladder", "layout"}
	// destLabels name a queue a ladder delivers to.
	destLabels = []string{"vhost", "ladder", "layout", "queue"}
	dueLabels  = []string{"vhost", "ladder", "layout", "destination", "within", "bound"}
)

func desc(name, help string, labels []string) *prometheus.Desc {
	return prometheus.NewDesc("rungs_"+name, help, labels, nil)
}

// The metrics, described once.
var (
	descReady    = desc("rung_messages_ready", "Messages ready in the rung, waiting for their TTL.", rungLabels)
	descUnacked  = desc("rung_messages_unacked", "Messages a consumer holds unacknowledged in the rung (a delay queue should have none).", rungLabels)
	descDLX      = desc("rung_messages_dlx", "Expired messages waiting to be dead-lettered into the next rung (quorum rungs, at-least-once; the management API's messages_dlx). A count that stays up means a stalled rung.", rungLabels)
	descDelayed  = desc("rung_messages_delayed", "Messages a quorum delayed retry holds back in the rung after they were handed back (RabbitMQ 4.3's x-delayed-retry-*; the management API's messages_delayed): they wait beyond the rung's TTL. Always 0 before RabbitMQ 4.3, which has no delayed retry.", rungLabels)
	descHeadAge  = desc("rung_head_age_seconds", "Age of the rung's oldest message from its timestamp property (time in higher rungs included); 0 when unknown.", rungLabels)
	descTTL      = desc("rung_ttl_seconds", "The rung's TTL.", rungLabels)
	descStalled  = desc("rung_stalled", "1 when the rung's dead-lettering stalled by the console's rule: expired messages that are not dead-lettered (rungs unstall restarts it).", rungLabels)
	descStuck    = desc("rung_stuck", "1 when the rung is stuck for another reason by the console's rules: a head older than any message can be there, or a depth unchanged for longer than the TTL.", rungLabels)
	descInFlight = desc("ladder_messages_in_flight", "Messages waiting in the ladder's rungs.", ladderLabels)
	descUnroute  = desc("ladder_messages_unroutable", "Messages in the ladder's unroutable queue.", ladderLabels)
	descDrift    = desc("ladder_drift", "1 when the ladder on the broker differs from the plan its parameters imply.", ladderLabels)
	descDriftN   = desc("ladder_drift_objects", "Objects that differ from the ladder's plan.", ladderLabels)
	descDue      = desc("ladder_forecast_due_messages", "Messages due at their destination within the horizon (within=1m,10m,1h,1d; later = after a day): bound=min certainly, max possibly, estimate assuming an even spread.", dueLabels)
	descEarliest = desc("ladder_forecast_earliest_seconds", "The soonest any message in flight can reach its destination.", ladderLabels)
	descLatest   = desc("ladder_forecast_latest_seconds", "The latest every message in flight reaches its destination, if its rungs expire; absent when some rung is stalled.", ladderLabels)
	descUnknown  = desc("ladder_forecast_unknown_messages", "Messages in rungs that do not expire as they should: no forecast holds for them.", ladderLabels)
	descUp       = desc("up", "1 when the last scrape read every vhost, else 0.", nil)
	descVhostUp  = desc("vhost_up", "1 when the last scrape read the vhost.", []string{"vhost"})
	descDuration = desc("scrape_duration_seconds", "How long the last scrape took to read the broker.", nil)
	descRequests = desc("scrape_snapshot", "1 when the scrape re-read the vhost's whole snapshot, 0 when one statistics request sufficed.", []string{"vhost"})
)

// The backlog's metrics (docs/storms.md): a storm draining, apart from stalls.
var (
	descBacklogged = desc("rung_backlogged", "1 when the rung is backlogged: its expired messages wait to be dead-lettered while messages do leave it (a storm draining at the broker's pace, not a stall; never a reason for rungs unstall).", rungLabels)
	descBacklog    = desc("ladder_backlog_messages", "Expired messages waiting in the ladder's backlogged rungs.", ladderLabels)
	descSaved      = desc("ladder_drain_capacity_hops_per_second", "The drain capacity rungs bench --drain --save measured on this broker for the ladder's kind of rungs: dead-letter hops a second while a backlog waited. Known before a storm, so that the backlog can be compared with it at once; absent when none is saved.", ladderLabels)
	descCapacity   = desc("ladder_drain_hops_per_second", "Dead-letter hops a second the ladder made while backlogged, net of what clients published into it, over the readings since the publishing to it last settled (at least a half minute, up to two minutes; a message forwarded from one rung to the next or to its destination is one hop); 0 until measured.", ladderLabels)
	descDrainS     = desc("ladder_backlog_drain_seconds", "When the ladder is backlogged, how long until the messages it holds have all left the rungs at the slowest drain rate measured in the recent readings (or its TTLs, if longer): the slow end of the finish's range; 0 without a backlog or while the backlog grows.", ladderLabels)
	descDrainFast  = desc("ladder_backlog_drain_fast_seconds", "The fast end of the finish's range: ladder_backlog_drain_seconds at the fastest drain rate measured in the recent readings.", ladderLabels)
	descSlowest    = desc("ladder_drain_slowest_hops_per_second", "The slowest drain rate of the recent readings (its half-minutes and minutes), in hops a second; the finish's slow end.", ladderLabels)
	descFastest    = desc("ladder_drain_fastest_hops_per_second", "The fastest drain rate of the recent readings, with its figures' staleness allowed for, in hops a second; the finish's fast end.", ladderLabels)
	descInRate     = desc("ladder_drain_in_messages_per_second", "Messages a second clients published into the ladder's rungs over the last half minute of the drain's measurement; 0 until measured.", ladderLabels)
	descOutRate    = desc("ladder_drain_out_messages_per_second", "Messages a second that left the ladder's rungs for their destinations over the last half minute of the drain's measurement; 0 until measured.", ladderLabels)
	descGrows      = desc("ladder_backlog_grows", "1 when the ladder is backlogged and clients publish into it faster than it drains (by more than the readings' noise): the backlog grows and has no finish.", ladderLabels)
	descDestIn     = desc("destination_in_messages_per_second", "Messages a second arriving at a queue the ladder delivers to (a destination, or its done queue), over the last half minute of readings: the queue's depth change plus what its consumers took, since dead-lettered arrivals count in no publish rate; absent until the readings show the queue moving.", destLabels)
	descDestTaken  = desc("destination_drained_messages_per_second", "Messages a second the consumers of a queue the ladder delivers to took (acknowledged, or delivered without one) over the same half minute.", destLabels)
	descDestGrows  = desc("destination_backlog_grows", "1 when a queue the ladder delivers to grows faster than its consumers drain it, by more than the readings' noise: the storm moved downstream; absent until the readings show the queue moving.", destLabels)
	descLateS      = desc("ladder_backlog_late_seconds", "When the ladder is backlogged, how much later than its TTLs allow its last message arrives; 0 without a backlog.", ladderLabels)
)

// Why held messages do not leave (health/cause.go): a lost route is not a
// stall, and its cure is a route, not rungs unstall.
var (
	descLostRung   = desc("rung_lost_route", "1 when the rung holds expired messages for a destination whose route is lost (its queue, binding or exchange gone): not a stall; rungs unstall cannot move them, restoring the route (or rungs reroute --park) does.", rungLabels)
	descLostRoutes = desc("ladder_lost_routes", "Destinations of the ladder whose route reaches no queue while the ladder holds messages for them.", ladderLabels)
	descLostHeld   = desc("ladder_lost_route_messages", "Messages the ladder holds for a destination whose route is lost (held in its rungs, or in its unroutable queue); when several lost destinations share held messages, each shows their total.", append(append([]string(nil), ladderLabels...), "destination"))
)

// Where the rungs run in a cluster (docs/storms.md).
var (
	descLeader     = desc("rung_leader", "1 on the series whose node label names the node the rung's leader runs on (a classic rung's node); absent when the broker did not say.", append(append([]string(nil), rungLabels...), "node"))
	descMembers    = desc("rung_members", "Nodes a quorum rung is replicated to; absent for classic rungs.", rungLabels)
	descOnline     = desc("rung_members_online", "Of the quorum rung's members, those running it now. Below rung_members: members lost; at or below half of it the rung has no quorum and moves nothing.", rungLabels)
	descOneNode    = desc("ladder_leaders_on_one_node", "1 when every rung leader of a ladder whose rungs run on several nodes sits on one node: a storm drains through that node alone (rabbitmq-queues rebalance quorum spreads them).", ladderLabels)
	descLostLadder = desc("ladder_rungs_lost_members", "Rungs and other queues of the ladder with a member offline.", ladderLabels)
)

// A bridge's metrics (rungs bridge, docs/bridge.md), labelled by its
// intake exchange.
var (
	bridgeLabels      = []string{"vhost", "bridge"}
	descBridgeIntake  = desc("bridge_intake_messages", "Messages in the bridge's intake queue, not yet scheduled into the ladder.", bridgeLabels)
	descBridgeLag     = desc("bridge_intake_lag_seconds", "About how long a message waits in the intake before a bridge takes it, added to its x-delay: the oldest message's age where the broker reports it, else the backlog over the rate bridges take it at; 0 when the intake is empty or nothing takes from it.", bridgeLabels)
	descBridgeCons    = desc("bridge_consumers", "Bridges consuming the intake.", bridgeLabels)
	descBridgeDue     = desc("bridge_due_messages", "Messages the ladder delivered as due that have not yet left through the exit exchange.", bridgeLabels)
	descBridgeParked  = desc("bridge_parked_messages", "Messages the bridge parked (x-delay not a number, beyond the ladder, or unroutable at the exit), with the reason in x-rungs-reason.", bridgeLabels)
	bridgeDescriptors = []*prometheus.Desc{descBridgeIntake, descBridgeLag, descBridgeCons, descBridgeDue, descBridgeParked}
)

// RabbitMQ 4.3's delayed retry on every quorum queue of a vhost, a ladder's
// or not (docs/metrics.md). Absent before 4.3, which has none.
var (
	retryLabels     = []string{"vhost", "queue"}
	descRetryHeld   = desc("delayed_retry_messages", "Messages the quorum queue's delayed retry holds back after a consumer handed them back (the management API's messages_delayed): in none of ready or unacked, ready again when their hold ends. One series per quorum queue with delayed retry, from RabbitMQ 4.3.", retryLabels)
	descRetryMin    = desc("delayed_retry_min_seconds", "The shortest hold of the queue's delayed retry (x-delayed-retry-min or the policy's delayed-retry-min).", retryLabels)
	descRetryMax    = desc("delayed_retry_max_seconds", "The longest hold of the queue's delayed retry; 0 when unset.", retryLabels)
	descRetryInfo   = desc("delayed_retry_info", "1 for each quorum queue with delayed retry, its settings in labels: type (all, failed, returned), source (argument, policy, operator policy), policy, and ignored=true where the release does not honour the source (4.3.0 ignores the policy keys).", append(append([]string(nil), retryLabels...), "type", "source", "policy", "ignored"))
	descRetryQueues = desc("vhost_delayed_retry_held_messages", "Messages held by delayed retry across the vhost's quorum queues (the sum of rungs_delayed_retry_messages), from RabbitMQ 4.3.", []string{"vhost"})
)

// Describe implements prometheus.Collector.
func (x *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descReady, descUnacked, descDLX, descDelayed, descHeadAge, descTTL, descStalled, descStuck,
		descBacklogged, descBacklog, descSaved, descCapacity, descDrainS, descDrainFast, descSlowest, descFastest, descInRate, descOutRate, descGrows, descDestIn, descDestTaken, descDestGrows, descLateS, descInFlight, descUnroute, descDrift, descDriftN, descDue, descEarliest, descLatest, descUnknown,
		descLeader, descMembers, descOnline, descOneNode, descLostLadder, descLostRung, descLostRoutes, descLostHeld,
		descRetryHeld, descRetryMin, descRetryMax, descRetryInfo, descRetryQueues,
		descUp, descVhostUp, descDuration, descRequests} {
		ch <- d
	}
	for _, d := range bridgeDescriptors {
		ch <- d
	}
}

// Collect implements prometheus.Collector: it refreshes from the broker
// and reports what it read.
func (x *Exporter) Collect(ch chan<- prometheus.Metric) {
	x.mu.Lock()
	defer x.mu.Unlock()
	start := x.opt.Now()
	ctx := context.Background()
	up := 1.0
	x.scrape++
	if err := x.listVhosts(ctx); err != nil {
		x.logf("list vhosts: %v", err)
		up = 0
	}
	x.readCapacity(ctx)
	for _, vh := range x.vhosts {
		rep, snapped, err := x.refresh(ctx, vh)
		if err != nil {
			x.logf("read vhost %s: %v", vh, err)
			up = 0
			ch <- gauge(descVhostUp, 0, vh)
			continue
		}
		ch <- gauge(descVhostUp, 1, vh)
		ch <- gauge(descRequests, b2f(snapped), vh)
		x.collectVhost(ch, rep)
		if err := x.collectBridges(ctx, ch, vh, snapped); err != nil {
			// As for delayed retry: logged, the ladders' metrics stand.
			x.logf("read the bridges of vhost %s: %v", vh, err)
		}
		x.collectRetry(ctx, ch, vh, snapped)
	}
	ch <- gauge(descUp, up)
	ch <- gauge(descDuration, x.opt.Now().Sub(start).Seconds())
}

// listVhosts settles the vhosts to read: the fixed list, or every vhost,
// listed on the first scrape and then with each round of snapshots.
func (x *Exporter) listVhosts(ctx context.Context) error {
	if !x.opt.AllVhosts {
		x.vhosts = x.opt.Vhosts
		return nil
	}
	if x.vhosts != nil && (x.scrape-1)%ops.SnapshotEvery != 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, x.opt.Timeout)
	defer cancel()
	vs, err := x.insp.Vhosts(ctx)
	if err != nil {
		return err
	}
	x.vhosts = vs
	for vh := range x.state {
		if !contains(vs, vh) {
			delete(x.state, vh)
		}
	}
	return nil
}

// readCapacity reads the saved drain capacities on the first scrape and
// with each round of snapshots after it: they change only when bench
// runs. A failed read keeps the last figures and is not a failed scrape
// (a monitoring user may not read global parameters).
func (x *Exporter) readCapacity(ctx context.Context) {
	r, ok := x.insp.(ops.CapacityReader)
	if !ok || (x.scrape-1)%ops.SnapshotEvery != 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, x.opt.Timeout)
	defer cancel()
	if caps, err := r.DrainCapacities(ctx); err == nil {
		x.capacity = caps
	}
}

// refresh reads one vhost through its observer and judges it.
func (x *Exporter) refresh(ctx context.Context, vhost string) (health.Report, bool, error) {
	o, ok := x.state[vhost]
	if !ok {
		o = ops.NewObserver(ops.Scope{Vhost: vhost, Reach: x.opt.Reach}).WithIntervals(0, x.opt.Interval)
	}
	ctx, cancel := context.WithTimeout(ctx, x.opt.Timeout)
	defer cancel()
	o, snapped, err := o.Refresh(ctx, x.insp, x.opt.Now)
	x.state[vhost] = o
	if err != nil || !o.Loaded() {
		return health.Report{}, snapped, err
	}
	return o.Report(x.opt.Now()), snapped, nil
}

// collectVhost reports every ladder of one vhost.
func (x *Exporter) collectVhost(ch chan<- prometheus.Metric, rep health.Report) {
	for _, lr := range rep.Ladders {
		l := lr.Found.Ladder
		lv := []string{l.Vhost, l.Name, l.Layout}
		for _, r := range lr.Rows {
			if r.Missing || r.Kind != health.RungRow {
				continue
			}
			s := r.Stats
			rv := []string{l.Vhost, l.Name, l.Layout, strconv.Itoa(r.Level), r.Queue}
			ch <- gauge(descReady, float64(s.Ready), rv...)
			ch <- gauge(descUnacked, float64(s.Unacked), rv...)
			ch <- gauge(descDLX, float64(s.Expired), rv...)
			ch <- gauge(descDelayed, float64(s.Delayed), rv...)
			ch <- gauge(descHeadAge, s.HeadAge.Seconds(), rv...)
			ch <- gauge(descTTL, r.TTL.Seconds(), rv...)
			ch <- gauge(descStalled, b2f(r.Stalled), rv...)
			ch <- gauge(descStuck, b2f(r.Stuck), rv...)
			ch <- gauge(descBacklogged, b2f(r.Backlogged), rv...)
			ch <- gauge(descLostRung, b2f(r.Why.Cause == health.CauseLostRoute), rv...)
			if s.Leader != "" {
				ch <- gauge(descLeader, 1, append(rv, s.Leader)...)
			}
			if len(s.Members) > 0 && s.Online != nil {
				ch <- gauge(descMembers, float64(len(s.Members)), rv...)
				ch <- gauge(descOnline, float64(len(s.Members)-len(s.LostMembers())), rv...)
			}
		}
		ch <- gauge(descLostRoutes, float64(len(lr.Lost)), lv...)
		var shared int64
		for _, r := range lr.Rows {
			if r.Why.Cause == health.CauseLostRoute {
				shared += r.Why.Held
			}
		}
		for _, d := range lr.Lost {
			held := d.Held
			if held < 0 {
				held = shared
			}
			ch <- gauge(descLostHeld, float64(held), append(append([]string(nil), lv...), d.Dest)...)
		}
		ch <- gauge(descOneNode, b2f(lr.Placement.OneNode() != ""), lv...)
		ch <- gauge(descLostLadder, float64(lr.Totals.MembersLost), lv...)
		d := lr.Drain
		ch <- gauge(descBacklog, float64(lr.Totals.Backlog), lv...)
		ch <- gauge(descCapacity, d.Capacity, lv...)
		if c, ok := x.capacity[broker.CapacityKey(string(l.QueueType), l.EveryRungAtMostOnce())]; ok && c.HopsPerS > 0 {
			ch <- gauge(descSaved, c.HopsPerS, lv...)
		}
		ch <- gauge(descDrainS, d.Finish.Seconds(), lv...)
		ch <- gauge(descDrainFast, d.FinishFast.Seconds(), lv...)
		ch <- gauge(descSlowest, d.Slowest, lv...)
		ch <- gauge(descFastest, d.Fastest, lv...)
		ch <- gauge(descInRate, d.In, lv...)
		ch <- gauge(descOutRate, d.Out, lv...)
		ch <- gauge(descGrows, b2f(lr.Totals.Backlogged > 0 && d.Grows()), lv...)
		ch <- gauge(descLateS, d.Late.Seconds(), lv...)
		for _, f := range d.Dests {
			dv := append(append([]string(nil), lv...), f.Queue)
			ch <- gauge(descDestIn, f.In, dv...)
			ch <- gauge(descDestTaken, f.Taken, dv...)
			ch <- gauge(descDestGrows, b2f(f.Trend() == "grows"), dv...)
		}
		t := lr.Totals
		ch <- gauge(descInFlight, float64(t.InFlight), lv...)
		ch <- gauge(descUnroute, float64(t.Unroutable), lv...)
		ch <- gauge(descDrift, b2f(t.Drift > 0), lv...)
		ch <- gauge(descDriftN, float64(t.Drift), lv...)

		fc := lr.Forecast
		due := func(within string, d topology.DueBy) {
			ch <- gauge(descDue, float64(d.Min), l.Vhost, l.Name, l.Layout, fc.Dest, within, "min")
			ch <- gauge(descDue, float64(d.Max), l.Vhost, l.Name, l.Layout, fc.Dest, within, "max")
			ch <- gauge(descDue, float64(d.Estimate), l.Vhost, l.Name, l.Layout, fc.Dest, within, "estimate")
		}
		for _, d := range fc.Due {
			due(topology.FormatHorizon(d.By), d)
		}
		due("later", fc.Later)
		ch <- gauge(descEarliest, fc.Earliest.Seconds(), lv...)
		if fc.Unknown == 0 {
			ch <- gauge(descLatest, fc.Latest.Seconds(), lv...)
		}
		ch <- gauge(descUnknown, float64(fc.Unknown), lv...)
	}
}

// collectBridges reports the vhost's bridges: one filtered listing of
// their queues, only where the inspector has it (the management API), and
// for a vhost that had none, only when the observer re-read its snapshot
// (x.bridged). A bridge started in such a vhost is found with the next
// snapshot: at once when its ladder's queues are new, within
// ops.SnapshotEvery scrapes otherwise.
func (x *Exporter) collectBridges(ctx context.Context, ch chan<- prometheus.Metric, vhost string, snapped bool) error {
	if _, ok := x.insp.(ops.BridgeReader); !ok {
		return nil
	}
	if had, listed := x.bridged[vhost]; listed && !had && !snapped {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, x.opt.Timeout)
	defer cancel()
	bs, err := ops.ReadBridges(ctx, x.insp, vhost, x.opt.Reach)
	if err != nil {
		return err
	}
	x.bridged[vhost] = len(bs) > 0
	for _, b := range bs {
		ch <- gauge(descBridgeIntake, float64(b.Intake.Stats.Ready+b.Intake.Stats.Unacked), vhost, b.Exchange)
		ch <- gauge(descBridgeLag, b.Lag().Seconds(), vhost, b.Exchange)
		ch <- gauge(descBridgeCons, float64(b.Intake.Stats.Consumers), vhost, b.Exchange)
		ch <- gauge(descBridgeDue, float64(b.Due.Stats.Ready+b.Due.Stats.Unacked), vhost, b.Exchange)
		ch <- gauge(descBridgeParked, float64(b.Parked.Stats.Ready+b.Parked.Stats.Unacked), vhost, b.Exchange)
	}
	return nil
}

// collectRetry reports the vhost's quorum queues under delayed retry, on a
// release that has it. The candidates are listed (without statistics, by
// the sorted listings: the observer's snapshot holds only what a ladder
// may be named, as status', so there is no listing of every queue to
// take them from) on the first scrape and whenever the observer re-read
// its snapshot; each
// scrape reads their statistics, one request each. A failed read is
// logged and leaves the ladders' metrics alone.
func (x *Exporter) collectRetry(ctx context.Context, ch chan<- prometheus.Metric, vhost string, snapped bool) {
	r, ok := x.insp.(retryReader)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, x.opt.Timeout)
	defer cancel()
	v, err := r.Version(ctx)
	if err != nil || !v.QuorumDelayedRetry() {
		return
	}
	qs, listed := x.retry[vhost]
	if !listed || snapped {
		if qs, err = r.RetryCandidates(ctx, vhost, v); err != nil {
			x.logf("list the queues under delayed retry in vhost %s: %v", vhost, err)
			return
		}
		x.retry[vhost] = qs
	}
	if qs, err = r.RetryStats(ctx, vhost, qs); err != nil {
		x.logf("read the queues under delayed retry in vhost %s: %v", vhost, err)
		return
	}
	h := health.NewRetryHold(qs, true)
	for _, q := range h.Queues {
		lv := []string{vhost, q.Name}
		if q.Reported {
			ch <- gauge(descRetryHeld, float64(q.Delayed), lv...)
		}
		ch <- gauge(descRetryMin, q.Min.Seconds(), lv...)
		ch <- gauge(descRetryMax, q.Max.Seconds(), lv...)
		ch <- gauge(descRetryInfo, 1, vhost, q.Name, q.Type, q.Source, q.Policy, strconv.FormatBool(q.Ignored))
	}
	ch <- gauge(descRetryQueues, float64(h.Delayed), vhost)
}

// logf writes one redacted line.
func (x *Exporter) logf(format string, a ...any) {
	fmt.Fprintln(x.opt.Log, "rungs exporter: "+broker.Redact(fmt.Sprintf(format, a...)))
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
