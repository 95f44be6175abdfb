package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// BesideOptions configure the beside phase: one ladder read alone in its
// vhost, then beside N other queues, so that what a read costs can be
// compared with what the vhost holds.
type BesideOptions struct {
	// Others are the numbers of other queues to put beside the ladder,
	// one vhost each; the ladder alone is always measured first.
	Others []int
	// Ladder is the ladder to read, as `rungs apply` would declare it on
	// this broker. Its Vhost is ignored.
	Ladder topology.Ladder
	// InFlight messages wait in the ladder while it is read.
	InFlight int
	// Runs is how many times each read is timed; the report gives the
	// median.
	Runs int
	// Binary is the rungs executable whose `status --ladder` is timed;
	// "" measures the console's observer only.
	Binary string
	Log    io.Writer
}

// DefaultBesideOptions is the measurement: 50 messages in flight,
// median of 5, beside 10,000 and 50,000 other queues.
func DefaultBesideOptions() BesideOptions {
	return BesideOptions{Others: []int{10_000, 50_000}, InFlight: 50, Runs: 5}
}

// BesideReport is what the beside phase measured.
type BesideReport struct {
	bench.RunInfo
	Ladder   bench.LadderShape `json:"ladder"`
	InFlight int               `json:"in_flight"`
	Runs     int               `json:"runs"`
	// Rows are the ladder alone (Others 0) first, then beside each
	// number of other queues.
	Rows     []BesideRow `json:"rows"`
	Problems []string    `json:"problems"`
}

// BesideRow is one vhost's measurement.
type BesideRow struct {
	Others   int     `json:"other_queues"`
	DeclareS float64 `json:"declare_s"`
	// Status is the median run of `rungs status --ladder` (its peak RSS
	// the largest of the runs); Ratio is its time ÷ the ladder alone's.
	Status CommandCost `json:"status"`
	Ratio  float64     `json:"ratio"`
	// First is the console's first read of the ladder (a snapshot of
	// everything any ladder may own), Refresh the median of its later
	// refreshes (the ladder's queues by name).
	First   CommandCost `json:"console_first_read"`
	Refresh CommandCost `json:"console_refresh"`
	Load    string      `json:"load_average"`
	// Commands are the other commands that read what they act on, each
	// the median of its runs, with its ratio to the same command beside
	// no other queue (issue 22 measured these at 12-18× beside 10,000
	// before they read by name).
	Commands []CommandRow `json:"commands,omitempty"`
}

// CommandRow is one command's cost beside the other queues.
type CommandRow struct {
	Name  string      `json:"name"`
	Cost  CommandCost `json:"cost"`
	Ratio float64     `json:"ratio"`
}

// besideCommands are the commands timed besides status, as an operator
// runs them on the ladder: each reads only what it acts on. The rung
// peeked is the one the messages in flight wait in (--force: on a
// quorum rung before 4.3 a peek counts as a delivery, which the lab's
// own vhost can spend); purge empties the ladder's unroutable queue,
// which holds nothing; unstall finds nothing stalled.
func besideCommands(l topology.Ladder, rung string) [][]string {
	common := []string{"--ladder", l.Name, "--json", "--timeout", "10m"}
	with := func(args ...string) []string { return append(args, common...) }
	unroutable := l.Name + ".unroutable"
	return [][]string{
		with("peek", rung, "--force"),
		with("replay", "--from", unroutable, "--to-origin", "--dry-run"),
		with("purge", unroutable, "--yes"),
		with("unstall", "--yes"),
	}
}

// besideDeclarers declare the other queues in parallel, each a chunk of
// besideChunk at a time: the broker answers declarations one at a time
// per channel, and 50,000 in a row would take minutes.
const (
	besideDeclarers = 16
	besideChunk     = 250
)

// RunBeside runs the beside phase against the broker cfg addresses, each
// vhost its own and removed after it is measured, so that the broker
// never holds more than one vhost of other queues.
func RunBeside(ctx context.Context, cfg broker.Config, mgmt *broker.Management, o BesideOptions) (BesideReport, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	l := o.Ladder
	rep := BesideReport{
		RunInfo: startRun(), InFlight: o.InFlight, Runs: o.Runs, Problems: []string{}, Ladder: bench.ShapeOf(l),
	}
	if o.Runs < 1 || o.InFlight < 0 {
		return rep, fmt.Errorf("%w: beside with %d runs and %d messages in flight (want at least 1 run)", bench.ErrOptions, o.Runs, o.InFlight)
	}
	for _, n := range o.Others {
		if n < 1 {
			return rep, fmt.Errorf("%w: beside %d other queues (want at least 1)", bench.ErrOptions, n)
		}
	}
	began := time.Now()
	if _, err := rep.MeetBroker(ctx, mgmt); err != nil {
		return rep, err
	}
	// Beside 50,000 queues a filtered listing can take longer than a
	// request of mgmt may wait (RabbitMQ 3.10.8: over 10 s), and the
	// broker answers the deletion of such a vhost only once its queues
	// are gone, a minute or more later: the phase measures how long they
	// take rather than failing at the client's timeout.
	scfg := cfg
	scfg.Timeout = 10 * time.Minute
	slow, err := broker.NewManagement(scfg)
	if err != nil {
		return rep, err
	}
	for _, n := range append([]int{0}, o.Others...) {
		row, err := besideVhost(ctx, cfg, slow, o, n, &rep.Problems)
		if err != nil {
			// The other vhosts are still worth measuring.
			rep.Problems = append(rep.Problems, fmt.Sprintf("beside %d: %v", n, err))
		}
		if len(rep.Rows) > 0 && rep.Rows[0].Status.MS > 0 {
			row.Ratio = row.Status.MS / rep.Rows[0].Status.MS
		}
		for i := range row.Commands {
			if len(rep.Rows) > 0 && i < len(rep.Rows[0].Commands) && rep.Rows[0].Commands[i].Cost.MS > 0 {
				row.Commands[i].Ratio = row.Commands[i].Cost.MS / rep.Rows[0].Commands[i].Cost.MS
			}
		}
		rep.Rows = append(rep.Rows, row)
	}
	rep.Finish(began)
	return rep, nil
}

// besideVhost measures the ladder in a new vhost beside n other queues.
func besideVhost(ctx context.Context, cfg broker.Config, mgmt *broker.Management, o BesideOptions, n int, problems *[]string) (BesideRow, error) {
	row := BesideRow{Others: n}
	logf := func(format string, a ...any) {
		fmt.Fprintf(o.Log, "beside %d: "+format+"\n", append([]any{n}, a...)...)
	}
	vhost := vhostName("beside")
	if err := mgmt.CreateVhost(ctx, vhost); err != nil {
		return row, fmt.Errorf("create vhost %s: %w", vhost, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
		defer cancel()
		start := time.Now()
		if err := deleteVhost(dctx, mgmt, vhost); err != nil {
			*problems = append(*problems, fmt.Sprintf("delete vhost %s: %v", vhost, err))
		}
		logf("deleted vhost %s in %s", vhost, time.Since(start).Round(time.Millisecond))
	}()
	vcfg := cfg
	vcfg.Vhost = vhost
	l := o.Ladder
	l.Vhost = vhost
	conn, err := broker.Dial(ctx, vcfg)
	if err != nil {
		return row, err
	}
	defer conn.Close()
	if _, err := conn.Apply(ctx, l.Plan()); err != nil {
		return row, fmt.Errorf("apply %s: %w", l.Name, err)
	}
	rung, err := publishInFlight(ctx, conn, l, o.InFlight)
	if err != nil {
		return row, err
	}
	start := time.Now()
	if err := declareOthers(ctx, conn, n); err != nil {
		return row, err
	}
	row.DeclareS = time.Since(start).Seconds()
	logf("ladder %s with %d in flight, %d other queues declared in %.1fs", l.Name, o.InFlight, n, row.DeclareS)
	inFlight, err := waitCounted(ctx, mgmt, vhost, l.Name, int64(o.InFlight))
	if err != nil {
		return row, err
	}
	if inFlight != int64(o.InFlight) {
		*problems = append(*problems, fmt.Sprintf("beside %d: the observer counts %d in flight in %s, want %d", n, inFlight, l.Name, o.InFlight))
	}
	row.Load = bench.ReadLoad()
	first, refresh, err := besideConsole(ctx, mgmt, vhost, l.Name, o.Runs)
	if err != nil {
		return row, err
	}
	row.First, row.Refresh = first, refresh
	logf("console first read %.0f ms, %d requests, %s; refresh %.0f ms, %d requests, %s",
		first.MS, first.Requests, topology.FormatBytes(first.Bytes), refresh.MS, refresh.Requests, topology.FormatBytes(refresh.Bytes))
	if o.Binary == "" {
		return row, nil
	}
	row.Status = medianStatus(ctx, o, vcfg, mgmt)
	if row.Status.Err != "" {
		*problems = append(*problems, fmt.Sprintf("beside %d: status: %s", n, row.Status.Err))
	}
	logf("status --ladder median %.0f ms, %d requests, %s, peak RSS %s", row.Status.MS, row.Status.Requests, topology.FormatBytes(row.Status.Bytes), topology.FormatBytes(row.Status.RSS))
	for _, args := range besideCommands(l, rung) {
		c := medianRun(ctx, o, vcfg, mgmt, args)
		if c.Err != "" {
			*problems = append(*problems, fmt.Sprintf("beside %d: %s: %s", n, args[0], c.Err))
		}
		row.Commands = append(row.Commands, CommandRow{Name: args[0], Cost: c})
		logf("%s median %.0f ms, %d requests, %s", args[0], c.MS, c.Requests, topology.FormatBytes(c.Bytes))
	}
	return row, nil
}

// deleteVhost deletes the vhost, asking again until it is gone: RabbitMQ
// 4.0.5 and 4.3.6 close the connection of a DELETE after a minute and
// stop deleting there, with half of 50,000 queues left.
func deleteVhost(ctx context.Context, mgmt *broker.Management, vhost string) error {
	for {
		err := mgmt.DeleteVhost(ctx, vhost)
		if err == nil || errors.Is(err, broker.ErrNotFound) {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		if vs, lerr := mgmt.Vhosts(ctx); lerr == nil && !slices.Contains(vs, vhost) {
			return nil
		}
	}
}

// publishInFlight sends n messages into the ladder with delays late in
// its range (at most an hour), so that they are all still in flight when
// it is read. It returns the rung the first of them waits in ("" for
// none), for a peek to read.
func publishInFlight(ctx context.Context, conn *broker.Conn, l topology.Ladder, n int) (rung string, err error) {
	if n == 0 {
		return "", nil
	}
	hi := min(l.MaxDelay(), time.Hour)
	traces := make([]topology.Trace, n)
	for i := range traces {
		var err error
		if traces[i], err = l.Trace(hi/2+hi/2*time.Duration(i)/time.Duration(n), ""); err != nil {
			return "", err
		}
	}
	got, _, err := bench.PublishN(ctx, conn, n, func(i int) broker.Message {
		tr := traces[i]
		return broker.Message{Exchange: tr.Exchange, RoutingKey: tr.Key, BCC: tr.BCC, Persistent: true, Headers: map[string]any{hdrSeq: int64(i)}}
	}, nil)
	if err != nil || got != n {
		return "", fmt.Errorf("in flight: %d of %d confirmed: %v", got, n, err)
	}
	if len(traces[0].Hops) > 0 {
		rung = traces[0].Hops[0].Queue
	}
	return rung, nil
}

// declareOthers declares n plain classic queues, besideDeclarers plans at
// a time.
func declareOthers(ctx context.Context, conn *broker.Conn, n int) error {
	chunks := make(chan topology.Plan)
	errs := make([]error, besideDeclarers)
	var wg sync.WaitGroup
	for w := range besideDeclarers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range chunks {
				if errs[w] == nil {
					_, errs[w] = conn.Apply(ctx, p)
				}
			}
		}()
	}
	for first := 0; first < n; first += besideChunk {
		var p topology.Plan
		for i := first; i < min(n, first+besideChunk); i++ {
			p.Queues = append(p.Queues, topology.Queue{Name: fmt.Sprintf("other-%05d", i)})
		}
		chunks <- p
	}
	close(chunks)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("declare %d other queues: %w", n, err)
		}
	}
	return nil
}

// waitCounted waits, up to a minute, until the observer of the ladder
// counts want messages in flight (the broker refreshes its statistics
// every few seconds), and returns what it counted last.
func waitCounted(ctx context.Context, mgmt *broker.Management, vhost, name string, want int64) (int64, error) {
	obs := ops.NewObserver(ops.Scope{Vhost: vhost, Ladders: []string{name}})
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		var err error
		if obs, _, err = obs.Refresh(ctx, mgmt, time.Now); err != nil {
			return 0, err
		}
		var got int64
		if rep := obs.Report(obs.At()); len(rep.Ladders) == 1 {
			got = rep.Ladders[0].Totals.InFlight
		}
		if got == want || time.Now().After(deadline) {
			return got, nil
		}
	}
}

// besideConsole measures the console's observer of the ladder alone, as
// the console watches it: its first read, then, once it has narrowed to
// the ladder, the median of runs refreshes.
func besideConsole(ctx context.Context, mgmt *broker.Management, vhost, name string, runs int) (first, refresh CommandCost, err error) {
	obs := ops.NewObserver(ops.Scope{Vhost: vhost, Ladders: []string{name}})
	read := func() (CommandCost, error) {
		r0, b0 := mgmt.Cost()
		t0 := time.Now()
		var err error
		obs, err = consoleRefresh(ctx, mgmt, obs)
		r1, b1 := mgmt.Cost()
		return CommandCost{MS: bench.Millis(time.Since(t0)), Requests: r1 - r0, Bytes: b1 - b0}, err
	}
	if first, err = read(); err != nil {
		return first, refresh, err
	}
	// The second read narrows the snapshot to the ladder's own objects;
	// the refreshes after it read only its queues' statistics.
	if _, err = read(); err != nil {
		return first, refresh, err
	}
	var costs []CommandCost
	for range runs {
		c, err := read()
		if err != nil {
			return first, refresh, err
		}
		costs = append(costs, c)
	}
	return first, medianCost(costs), nil
}

// medianStatus is the median run of `rungs status --ladder`.
func medianStatus(ctx context.Context, o BesideOptions, cfg broker.Config, mgmt *broker.Management) CommandCost {
	// --timeout: how long the read takes, where the default 10 s would
	// end it.
	return medianRun(ctx, o, cfg, mgmt, []string{"status", "--ladder", o.Ladder.Name, "--json", "--timeout", "10m"})
}

// medianRun runs the binary with args once to warm the broker's caches
// and the page cache, then o.Runs times, and returns the median run with
// the largest peak RSS of all.
func medianRun(ctx context.Context, o BesideOptions, cfg broker.Config, mgmt *broker.Management, args []string) CommandCost {
	if c := runMeasured(ctx, o.Binary, cfg, mgmt, args...); c.Err != "" {
		return c
	}
	var costs []CommandCost
	for range o.Runs {
		c := runMeasured(ctx, o.Binary, cfg, mgmt, args...)
		if c.Err != "" {
			return c
		}
		costs = append(costs, c)
	}
	return medianCost(costs)
}

// medianCost is the run of median time, with the largest RSS of all.
func medianCost(cs []CommandCost) CommandCost {
	if len(cs) == 0 {
		return CommandCost{}
	}
	sorted := append([]CommandCost(nil), cs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].MS < sorted[j].MS })
	m := sorted[len(sorted)/2]
	for _, c := range cs {
		m.RSS = max(m.RSS, c.RSS)
	}
	return m
}

// Markdown renders the beside report as docs/benchmarks holds it.
func (r BesideReport) Markdown() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	l := r.Ladder
	w("## rungs-lab beside, RabbitMQ %s, %s\n\n", r.Broker.RabbitMQ, r.Started.Format("2006-01-02 15:04 UTC"))
	w("- Machine: %s; %d CPUs, %s; load average %s after\n", r.Machine.CPU, r.Machine.CPUs, r.Machine.Memory, r.Machine.LoadAfter)
	w("- Ladder: %s, %s rungs, radix %d, %d levels of %s ms (%d rungs), as `rungs apply` declares it by default, %d messages in flight; median of %d runs\n",
		l.Layout, l.QueueType, l.Radix, l.Levels, bench.FormatMS(l.UnitMS), l.Rungs, r.InFlight, r.Runs)
	w("- Run took %s\n\n", bench.FormatSeconds(r.Seconds))
	w("| other queues | `status --ladder` ms | ratio to alone | requests | response bytes | peak RSS | observer first read ms / bytes | observer refresh ms / requests / bytes | load average |\n")
	w("|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, row := range r.Rows {
		s := row.Status
		ratio := "–"
		if row.Others > 0 && row.Ratio > 0 {
			ratio = fmt.Sprintf("**%.2f×**", row.Ratio)
		}
		w("| %s | %.0f | %s | %d | %s | %s | %.0f / %s | %.0f / %d / %s | %s |\n", topology.FormatCount(int64(row.Others)), s.MS, ratio, s.Requests, topology.FormatBytes(s.Bytes), topology.FormatBytes(s.RSS),
			row.First.MS, topology.FormatBytes(row.First.Bytes), row.Refresh.MS, row.Refresh.Requests, topology.FormatBytes(row.Refresh.Bytes), row.Load)
	}
	w("\n")
	if len(r.Rows) > 0 && len(r.Rows[0].Commands) > 0 {
		w("The other commands that read what they act on (median ms, ratio to the ladder alone, requests):\n\n")
		w("| other queues |")
		for _, c := range r.Rows[0].Commands {
			w(" `%s` |", c.Name)
		}
		w("\n|---:|")
		for range r.Rows[0].Commands {
			w("---:|")
		}
		w("\n")
		for _, row := range r.Rows {
			w("| %s |", topology.FormatCount(int64(row.Others)))
			for _, c := range row.Commands {
				ratio := ""
				if row.Others > 0 && c.Ratio > 0 {
					ratio = fmt.Sprintf(", **%.2f×**", c.Ratio)
				}
				w(" %.0f%s, %d |", c.Cost.MS, ratio, c.Cost.Requests)
			}
			w("\n")
		}
		w("\n")
	}
	bench.WriteProblems(&b, r.Problems, "The observer counted every message in flight in every vhost.")
	return b.String()
}
