package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/exporter"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// ladderState is a discovered ladder with its live queue statistics.
type ladderState struct {
	found      topology.Found
	rungs      []rungState
	terminals  []terminalState
	inFlight   int64
	unroutable int64
	forecast   topology.Forecast
	stalled    int
}

type rungState struct {
	rung    topology.Rung
	stats   topology.QueueStats
	present bool
	stalled bool
}

type terminalState struct {
	role, queue string
	stats       topology.QueueStats
	present     bool
}

// stateOf joins a discovered ladder with the snapshot's queue statistics;
// w says which rungs are stalled (see watchStalls).
func stateOf(f topology.Found, snap topology.Snapshot, w health.Watch) ladderState {
	st := ladderState{found: f, forecast: health.Forecast(f.Ladder, health.LadderRows(f, snap, w), w.Interval)}
	for _, r := range f.Ladder.Rungs() {
		q, ok := snap.Queue(r.Queue)
		waited := time.Duration(0)
		if w.Waited != nil {
			waited = w.Waited(r.Queue)
		}
		stalled := health.Stalled(q.Stats, r.TTL, waited, w.Interval) != ""
		st.rungs = append(st.rungs, rungState{r, q.Stats, ok, stalled})
		st.inFlight += q.Stats.Messages()
		if stalled {
			st.stalled++
		}
	}
	terms := f.Ladder.Terminals()
	for _, t := range f.Ladder.Targets {
		terms = append(terms, topology.Terminal{Role: "target", Queue: t})
	}
	for _, t := range terms {
		q, ok := snap.Queue(t.Queue)
		st.terminals = append(st.terminals, terminalState{t.Role, t.Queue, q.Stats, ok})
		if t.Role == topology.RoleUnroutable {
			st.unroutable += q.Stats.Messages()
		}
	}
	return st
}

func (e *env) statusCommand() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show ladders with the depth of every rung",
		Long: `status reads the vhost through the management API, finds every ladder and
shows each rung's TTL, depth (ready / unacked), consumers and rates, then the
done, unroutable, destination and dead-letter queues, and says which rung
looks stuck and how the ladder drifted from its plan. With --ladder it shows
that ladder only. On ladders above radix 2 (15 rungs a level) the rungs that
are empty and quiet are left out unless --all; --json always lists them.`,
		Example: `  rungs status
  rungs status --ladder jobs --all
  rungs status --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.runStatus(cmd.Context(), e.opts.ladder.named(), all)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "list every rung, idle ones too")
	return cmd
}

func (e *env) runStatus(ctx context.Context, only string, all bool) error {
	snap, err := e.snapshot(ctx)
	if err != nil {
		return err
	}
	var found []topology.Found
	for _, f := range topology.Discover(snap) {
		if only == "" || f.Ladder.Name == only {
			found = append(found, f)
		}
	}
	if only != "" && len(found) == 0 {
		return fmt.Errorf("no ladder %q in vhost %s (rungs discover lists the ladders there)", only, e.vhost())
	}
	snap, watch, err := e.watchStalls(ctx, e.mgmt, snap, found)
	if err != nil {
		return err
	}
	var states []ladderState
	for _, f := range found {
		states = append(states, stateOf(f, snap, watch))
	}
	if e.opts.json {
		return writeJSON(e.Out, toJSONStatus(states))
	}
	if len(states) == 0 {
		fmt.Fprintf(e.Out, "no ladders in vhost %s\n", e.vhost())
		return nil
	}
	for i, st := range states {
		if i > 0 {
			fmt.Fprintln(e.Out)
		}
		rows, folded := health.StatusRows(st.found, snap, watch, all)
		fmt.Fprint(e.Out, ui.LadderText(st.found, rows, folded, e.width()))
		if st.forecast.Messages > 0 {
			fmt.Fprint(e.Out, "\n", ui.ForecastText(st.forecast, e.width()))
		}
	}
	return nil
}

type jsonQueue struct {
	Role    string `json:"role,omitempty"`
	Level   *int   `json:"level,omitempty"`
	Digit   *int   `json:"digit,omitempty"`
	Queue   string `json:"queue"`
	TTLMS   *int64 `json:"ttl_ms,omitempty"`
	Present bool   `json:"present"`
	Ready   int64  `json:"ready"`
	Unacked int64  `json:"unacked"`
	// Expired messages wait to be dead-lettered (quorum rungs only);
	// Stalled says they have not drained (health.Stalled).
	Expired      int64   `json:"expired"`
	ExpiredBytes int64   `json:"expired_bytes"`
	Stalled      bool    `json:"stalled,omitempty"`
	Consumers    int64   `json:"consumers"`
	InRate       float64 `json:"in_rate"`
	OutRate      float64 `json:"out_rate"`
}

func toJSONStatus(states []ladderState) any {
	out := []map[string]any{}
	for _, st := range states {
		var rungs, terms []jsonQueue
		for _, r := range st.rungs {
			level, digit, ttl := r.rung.Level, r.rung.Digit, ms(r.rung.TTL)
			rungs = append(rungs, jsonQueue{
				Role: "rung", Level: &level, Digit: &digit, Queue: r.rung.Queue, TTLMS: &ttl, Present: r.present,
				Ready: r.stats.Ready, Unacked: r.stats.Unacked, Expired: r.stats.Expired, ExpiredBytes: r.stats.ExpiredBytes, Stalled: r.stalled,
				Consumers: r.stats.Consumers, InRate: r.stats.PublishRate, OutRate: r.stats.DeliverRate,
			})
		}
		for _, t := range st.terminals {
			terms = append(terms, jsonQueue{Role: t.role, Queue: t.queue, Present: t.present, Ready: t.stats.Ready, Unacked: t.stats.Unacked, Consumers: t.stats.Consumers, InRate: t.stats.PublishRate, OutRate: t.stats.DeliverRate})
		}
		out = append(out, map[string]any{
			"ladder": toJSONLadder(st.found.Ladder), "in_flight": st.inFlight, "unroutable": st.unroutable, "stalled": st.stalled,
			"drift": toJSONDrift(st.found.Drift), "rungs": rungs, "terminals": terms,
			"forecast": toJSONForecast(st.forecast),
		})
	}
	return out
}

func (e *env) discoverCommand() *cobra.Command {
	var allVhosts bool
	cmd := &cobra.Command{
		Use:   "discover",
		Short: "Find every ladder on the broker, of every layout",
		Long: `discover reads the vhost (or every vhost) through the management API and
recognises ladders by their rung queues: rungs' own direct and prefix ladders, the seed
003 Terraform suffix ladders, NServiceBus' delay infrastructure (v2 and v1)
and Celery's native delayed delivery. It
infers each ladder's unit, levels, radix and queue type, and counts its
drift from the plan those parameters imply.`,
		Example: `  rungs discover
  rungs discover --all-vhosts --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return e.runDiscover(cmd.Context(), allVhosts)
		},
	}
	cmd.Flags().BoolVar(&allVhosts, "all-vhosts", false, "look in every vhost")
	return cmd
}

func (e *env) runDiscover(ctx context.Context, allVhosts bool) error {
	m, err := e.management()
	if err != nil {
		return err
	}
	var vhosts []string
	if !allVhosts {
		vhosts = []string{e.vhost()}
	}
	cctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	d, err := m.DiscoverLadders(cctx, vhosts)
	cancel()
	if err != nil {
		return err
	}
	if err := d.HiddenError(); err != nil {
		if !allVhosts {
			return err
		}
		fmt.Fprintf(e.Err, "rungs: %v\n", err)
	}
	var states []ladderState
	for i := 0; i < len(d.Found); {
		vh := d.Found[i].Ladder.Vhost
		j := i
		for j < len(d.Found) && d.Found[j].Ladder.Vhost == vh {
			j++
		}
		found := d.Found[i:j]
		i = j
		snap, watch, err := e.watchStalls(ctx, m, d.Snapshots[vh], found)
		if err != nil {
			return err
		}
		for _, f := range found {
			states = append(states, stateOf(f, snap, watch))
		}
	}
	if e.opts.json {
		return writeJSON(e.Out, toJSONStatus(states))
	}
	if len(states) == 0 {
		where := strings.Join(vhosts, ", ")
		if allVhosts {
			where = "any vhost " + m.User() + " may read"
		}
		fmt.Fprintf(e.Out, "no ladders in %s\n", where)
		return nil
	}
	w := table(e.Out)
	fmt.Fprintln(w, "vhost\tladder\tlayout\tunit\tlevels\tmax delay\tqueues\tin flight\tunroutable\tstalled\tdrift\ttargets")
	for _, st := range states {
		l := st.found.Ladder
		levels := fmt.Sprintf("%d", l.Levels)
		if l.Radix != 2 {
			levels += fmt.Sprintf("×r%d", l.Radix)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", l.Vhost, l.Name, l.Layout, topology.FormatDelay(l.Unit), levels,
			topology.FormatDelay(l.MaxDelay()), l.QueueType, st.inFlight, st.unroutable, st.stalled, len(st.found.Drift), strings.Join(l.Targets, ","))
	}
	return w.Flush()
}

type jsonDue struct {
	Within   string `json:"within"`
	WithinMS *int64 `json:"within_ms"` // null for "later"
	Min      int64  `json:"min"`
	Max      int64  `json:"max"`
	Estimate int64  `json:"estimate"`
}

type jsonRungForecast struct {
	Queue      string `json:"queue"`
	Messages   int64  `json:"messages"`
	Held       int64  `json:"held"`
	EarliestMS int64  `json:"earliest_ms"`
	LatestMS   *int64 `json:"latest_ms"` // null when unknown
	Unknown    bool   `json:"unknown"`
}

// toJSONForecast is the forecast in --json: counts due within each
// horizon with their bounds, and each busy rung's arrival window, in ms
// from the moment of the statistics.
func toJSONForecast(fc topology.Forecast) map[string]any {
	due := []jsonDue{}
	for _, d := range fc.Due {
		by := ms(d.By)
		due = append(due, jsonDue{exporter.HorizonLabel(d.By), &by, d.Min, d.Max, d.Estimate})
	}
	due = append(due, jsonDue{"later", nil, fc.Later.Min, fc.Later.Max, fc.Later.Estimate})
	rungs := []jsonRungForecast{}
	for _, r := range fc.Rungs {
		if r.Messages == 0 && r.Held == 0 {
			continue
		}
		jr := jsonRungForecast{Queue: r.Rung.Queue, Messages: r.Messages, Held: r.Held, EarliestMS: ms(r.Earliest), Unknown: r.Unknown}
		if !r.Unknown {
			l := ms(r.Latest)
			jr.LatestMS = &l
		}
		rungs = append(rungs, jr)
	}
	out := map[string]any{
		"messages": fc.Messages, "held": fc.Held, "unknown": fc.Unknown,
		"earliest_ms": ms(fc.Earliest), "latest_ms": nil, "due": due, "rungs": rungs,
	}
	if fc.Unknown == 0 {
		out["latest_ms"] = ms(fc.Latest)
	}
	if fc.Dest != "" {
		out["destination"] = fc.Dest
	}
	return out
}
