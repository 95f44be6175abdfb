package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// The scan phase (`rungs-lab scan -n N`): how fast `rungs
// scheduled` reads a ladder holding N messages against the broker's plain
// consume rate measured in the same run, rungs' memory while it does, what
// the scan adds to the lateness of the messages it reads, and how close
// the due times it lists are to the messages' real arrivals.

// ScanOptions describe the scan phase.
type ScanOptions struct {
	// N is how many messages wait in the ladder while it is scanned (due
	// an hour or more later: none leaves during the phase).
	N int
	// Probes are messages due within ProbeMax, scanned with the rest and
	// timed at their destination.
	Probes   int
	ProbeMax time.Duration
	// Ladder is the ladder to fill, as apply declares it (its Vhost is
	// ignored).
	Ladder topology.Ladder
	// Binary is the rungs executable to run `scheduled` with.
	Binary string
	Log    io.Writer
}

// DefaultScanOptions scans 100,000 with 1,000 probes due within 90 s.
func DefaultScanOptions() ScanOptions {
	return ScanOptions{N: 100_000, Probes: 1000, ProbeMax: 90 * time.Second}
}

// Spread are the quantiles of a distribution in milliseconds.
type Spread struct {
	P50 float64 `json:"p50_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
	Min float64 `json:"min_ms"`
}

func spreadOf(ms []float64) Spread {
	if len(ms) == 0 {
		return Spread{}
	}
	sort.Float64s(ms)
	q := func(p float64) float64 { return ms[min(len(ms)-1, int(p*float64(len(ms))))] }
	return Spread{P50: q(0.5), P99: q(0.99), Max: ms[len(ms)-1], Min: ms[0]}
}

// ScanReport is what the scan phase measured.
type ScanReport struct {
	bench.RunInfo
	N      int               `json:"n"`
	Probes int               `json:"probes"`
	Ladder bench.LadderShape `json:"ladder"`
	// ConsumeRate is the broker's plain rate: N messages consumed and
	// acknowledged from one queue of the ladder's type.
	ConsumeRate float64 `json:"consume_rate"`
	// ScanRate is `rungs scheduled`'s, over the N+Probes in the ladder;
	// Ratio is ScanRate ÷ ConsumeRate.
	ScanRate float64     `json:"scan_rate"`
	Ratio    float64     `json:"ratio"`
	Scan     CommandCost `json:"scan"`
	Seen     int         `json:"seen"`
	// HeldMS is the longest the scan held a rung: the most it can add to
	// a message's lateness.
	HeldMS float64 `json:"held_ms"`
	// Lateness is each probe's arrival minus its publish plus delay;
	// DueError its arrival minus the start of the due window the scan
	// listed (negative: earlier than listed). Exact counts probes with an
	// exact due time.
	Lateness Spread `json:"lateness"`
	DueError Spread `json:"due_error"`
	Exact    int    `json:"exact"`
	// LeftDuringScan counts probes the scan did not list because they had
	// arrived before it ended.
	LeftDuringScan int `json:"left_during_scan"`
	// Lost, Early and Duplicated count probes.
	Lost, Early, Duplicated int
	Problems                []string `json:"problems"`
}

// Markdown is the report for docs/benchmarks.
func (r ScanReport) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Scan of %s scheduled messages (rungs scheduled)\n\n", topology.FormatCount(int64(r.N+r.Probes)))
	fmt.Fprintf(&b, "| measure | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| broker's plain consume rate | %.0f msg/s |\n", r.ConsumeRate)
	fmt.Fprintf(&b, "| scan rate | %.0f msg/s (%.2f× the consume rate) |\n", r.ScanRate, r.Ratio)
	fmt.Fprintf(&b, "| rungs peak RSS | %.1f MB |\n", float64(r.Scan.RSS)/1e6)
	fmt.Fprintf(&b, "| longest a rung was held | %.0f ms |\n", r.HeldMS)
	fmt.Fprintf(&b, "| probe lateness p50 / p99 / max | %.0f / %.0f / %.0f ms |\n", r.Lateness.P50, r.Lateness.P99, r.Lateness.Max)
	fmt.Fprintf(&b, "| due-time error min / p50 / p99 / max | %.0f / %.0f / %.0f / %.0f ms (%d of %d exact) |\n", r.DueError.Min, r.DueError.P50, r.DueError.P99, r.DueError.Max, r.Exact, r.Probes)
	fmt.Fprintf(&b, "| probes lost / early / duplicated | %d / %d / %d |\n", r.Lost, r.Early, r.Duplicated)
	fmt.Fprintf(&b, "| probes that arrived before the scan reached them | %d |\n", r.LeftDuringScan)
	for _, p := range r.Problems {
		fmt.Fprintf(&b, "\nproblem: %s\n", p)
	}
	return b.String()
}

// RunScan runs the scan phase in a vhost of its own, removed afterwards.
func RunScan(ctx context.Context, cfg broker.Config, mgmt *broker.Management, o ScanOptions) (rep ScanReport, err error) {
	rep = ScanReport{RunInfo: startRun(), N: o.N, Probes: o.Probes, Ladder: bench.ShapeOf(o.Ladder)}
	_, _ = rep.MeetBroker(ctx, mgmt)
	logf := func(format string, a ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "scan: "+format+"\n", a...)
		}
	}
	if o.N < 1 || o.Probes < 1 || o.ProbeMax < 10*time.Second || o.Binary == "" {
		return rep, fmt.Errorf("%w: scan needs N ≥ 1, probes ≥ 1, probes due within 10 s or more, and the rungs binary", bench.ErrOptions)
	}
	vh, err := bench.NewVhost(ctx, mgmt, cfg, "rungs-lab-scan-")
	if err != nil {
		return rep, err
	}
	defer vh.Remove(ctx, 5*time.Minute, &rep.Problems)
	cfg = vh.Config
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		return rep, err
	}
	defer conn.Close()
	l := o.Ladder
	l.Vhost = cfg.Vhost
	dest := "bench.scan.work"
	l.Targets = append(l.Targets, dest)
	if l, err = l.Normalize(); err != nil {
		return rep, err
	}
	plain := "bench.scan.plain"
	for _, p := range []topology.Plan{{Queues: []topology.Queue{typed(dest, topology.Classic), typed(plain, l.QueueType)}}, l.Plan()} {
		if _, err := conn.Apply(ctx, p); err != nil {
			return rep, err
		}
	}
	defer func() {
		c, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		_ = conn.Teardown(c, l.Plan())
		_ = conn.Teardown(c, topology.Plan{Queues: []topology.Queue{{Name: dest}, {Name: plain}}})
	}()
	body := []byte(strings.Repeat("x", 64))

	// The broker's limit: consume N from one plain queue.
	logf("plain queue: publishing %d", o.N)
	if _, _, err := bench.PublishN(ctx, conn, o.N, func(i int) broker.Message {
		return broker.Message{RoutingKey: plain, Body: body, Persistent: true}
	}, nil); err != nil {
		return rep, err
	}
	start := time.Now()
	ds, err := conn.Consume(ctx, plain, 1000)
	if err != nil {
		return rep, err
	}
	for got := 0; got < o.N; got++ {
		select {
		case d := <-ds:
			_ = d.Ack()
		case <-ctx.Done():
			return rep, ctx.Err()
		}
	}
	rep.ConsumeRate = float64(o.N) / time.Since(start).Seconds()
	logf("plain consume: %.0f msg/s", rep.ConsumeRate)

	// The ladder: N due in an hour or more, then the probes.
	rng := rand.New(rand.NewPCG(1, 2))
	far := func() time.Duration { return time.Hour + time.Duration(rng.Int64N(int64(time.Hour/l.Unit)))*l.Unit }
	logf("ladder %s: publishing %d", l.Name, o.N)
	if _, _, err := bench.PublishN(ctx, conn, o.N, func(i int) broker.Message {
		tr, _ := l.Trace(far(), dest)
		return broker.Message{Exchange: tr.Exchange, RoutingKey: tr.Key, BCC: tr.BCC, Body: body, Persistent: true,
			Headers: map[string]any{topology.HeaderDelayMS: tr.Delay.Milliseconds()}, Timestamp: time.Now()}
	}, nil); err != nil {
		return rep, err
	}
	var mu sync.Mutex
	sent := map[string]time.Time{} // probe id → when it is due
	arrived := map[string][]time.Time{}
	probes, err := conn.Consume(ctx, dest, 500)
	if err != nil {
		return rep, err
	}
	go func() {
		for d := range probes {
			mu.Lock()
			arrived[d.MessageID] = append(arrived[d.MessageID], d.Received)
			mu.Unlock()
			_ = d.Ack()
		}
	}()
	logf("publishing %d probes due within %s", o.Probes, o.ProbeMax)
	var batch []broker.Message
	for i := 0; i < o.Probes; i++ {
		// Due no sooner than 30 s: still in flight when the scan reads them.
		d := 30*time.Second + time.Duration(rng.Int64N(int64(o.ProbeMax/l.Unit)))*l.Unit
		tr, err := l.Trace(d, dest)
		if err != nil {
			return rep, err
		}
		id := "probe-" + strconv.Itoa(i)
		batch = append(batch, broker.Message{Exchange: tr.Exchange, RoutingKey: tr.Key, BCC: tr.BCC, Body: body, MessageID: id, Persistent: true,
			Headers: map[string]any{topology.HeaderDelayMS: tr.Delay.Milliseconds(), "probe": "yes"}, Timestamp: time.Now()})
		// Due from the moment the batch is confirmed, at the latest.
		if len(batch) == 100 || i == o.Probes-1 {
			at := time.Now()
			if res, err := conn.Publish(ctx, batch); err != nil || res.Confirmed != len(batch) {
				return rep, fmt.Errorf("publish probes: %+v %v", res, err)
			}
			for _, m := range batch {
				ms, _ := topology.HeaderInt(m.Headers[topology.HeaderDelayMS])
				sent[m.MessageID] = at.Add(time.Duration(ms) * time.Millisecond)
			}
			batch = batch[:0]
		}
	}

	logf("rungs scheduled over %d messages", o.N+o.Probes)
	x, err := startMeasured(ctx, o.Binary, cfg, mgmt, "scheduled", "--ladder", l.Name, "--layout", l.Layout, "--where", "probe=yes",
		"--limit", strconv.Itoa(o.Probes), "--json", "--force", "--timeout", "2m")
	if err != nil {
		return rep, err
	}
	x.wait()
	scanEnd := time.Now()
	rep.Scan = CommandCost{MS: bench.Millis(x.took), RSS: x.maxRSS()}
	rep.Scan.Requests, rep.Scan.Bytes = x.proxy.cost()
	if x.err != nil {
		return rep, fmt.Errorf("rungs scheduled: %v: %s", x.err, x.stderrLine())
	}
	var out struct {
		Seen      int     `json:"seen"`
		ElapsedMS float64 `json:"elapsed_ms"`
		HeldMS    float64 `json:"held_ms"`
		Messages  []struct {
			ID    string    `json:"message_id"`
			Due   time.Time `json:"due"`
			Exact bool      `json:"exact"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(x.stdout.Bytes(), &out); err != nil {
		return rep, fmt.Errorf("read rungs scheduled --json: %w", err)
	}
	rep.Seen, rep.HeldMS = out.Seen, out.HeldMS
	rep.ScanRate = float64(out.Seen) / (out.ElapsedMS / 1000)
	rep.Ratio = rep.ScanRate / rep.ConsumeRate
	logf("scan: %.0f msg/s (%.2f× consume), peak RSS %.1f MB, held %.0f ms", rep.ScanRate, rep.Ratio, float64(rep.Scan.RSS)/1e6, rep.HeldMS)
	listed := map[string]time.Time{}
	for _, m := range out.Messages {
		listed[m.ID] = m.Due
		if m.Exact {
			rep.Exact++
		}
	}

	// Every probe arrives; time it.
	deadline := time.Now().Add(o.ProbeMax + 3*time.Minute)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := len(arrived)
		mu.Unlock()
		if n >= o.Probes {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second)
	mu.Lock()
	defer mu.Unlock()
	var late, errs []float64
	for id, due := range sent {
		at := arrived[id]
		switch {
		case len(at) == 0:
			rep.Lost++
			continue
		case len(at) > 1:
			rep.Duplicated += len(at) - 1
		}
		// Due was taken after the confirm: a probe may beat it by the
		// publish's own time, never by more than a second.
		if at[0].Before(due.Add(-time.Second)) {
			rep.Early++
		}
		late = append(late, float64(at[0].Sub(due).Milliseconds()))
		if d, ok := listed[id]; ok {
			errs = append(errs, float64(at[0].Sub(d).Milliseconds()))
		}
	}
	rep.Lateness, rep.DueError = spreadOf(late), spreadOf(errs)
	// A probe the scan did not list is right not to be there only if it
	// had left the ladder (arrived) before the scan ended: the lowest
	// rungs are read last, and a long scan outlives the earliest probes.
	missed := 0
	for id := range sent {
		if _, ok := listed[id]; ok {
			continue
		}
		if at := arrived[id]; len(at) > 0 && at[0].Before(scanEnd) {
			rep.LeftDuringScan++
			continue
		}
		missed++
	}
	if missed > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("the scan did not list %d probes still in the ladder when it ended (it listed %d of %d)", missed, len(listed), o.Probes))
	}
	if rep.Lost+rep.Early+rep.Duplicated > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("probes: %d lost, %d early, %d duplicated", rep.Lost, rep.Early, rep.Duplicated))
	}
	if rep.Problems == nil {
		rep.Problems = []string{}
	}
	return rep, nil
}
