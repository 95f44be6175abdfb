package lab

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// ScaleOptions configure the scale phase: N persistent messages in one
// ladder, checked one by one on arrival.
type ScaleOptions struct {
	// N is how many messages go into the ladder, and how many dead letters
	// the replay moves.
	N int
	// Ladder is the ladder to fill, as `rungs apply` would declare it on
	// this broker (the caller decides, through apply's own code path, so
	// that the phase measures the ladder users get). Its Vhost is ignored.
	Ladder topology.Ladder
	// MinDelay and MaxDelay bound the delays, drawn uniformly in whole
	// units of the ladder.
	MinDelay, MaxDelay time.Duration
	// Size is the message body size in bytes.
	Size int
	// Binary is the rungs executable whose `status` and `replay` the phase
	// runs and measures as a user would; "" skips those parts.
	Binary string
	// Seed makes the drawn delays reproducible.
	Seed uint64
	// Log receives progress lines.
	Log io.Writer
}

// DefaultScaleOptions is a million messages due 5 s to 60 s after they
// are sent: long enough that publishing ends before most are due, short
// enough for a benchmark.
func DefaultScaleOptions() ScaleOptions {
	return ScaleOptions{N: 1_000_000, MinDelay: 5 * time.Second, MaxDelay: time.Minute, Size: 256, Seed: 1}
}

// ScaleReport is what the scale phase measured.
type ScaleReport struct {
	bench.RunInfo
	N         int               `json:"n"`
	Ladder    bench.LadderShape `json:"ladder"`
	MinDelayS float64           `json:"min_delay_s"`
	MaxDelayS float64           `json:"max_delay_s"`
	Size      int               `json:"size"`
	// Limit is the same publishers' rate into one plain queue of the
	// ladder's queue type (LimitN messages, persistent, no consumer);
	// Publish is theirs into the ladder; Ratio is Publish ÷ Limit.
	LimitN    int     `json:"limit_n"`
	LimitPerS float64 `json:"limit_publish_per_s"`
	Publish   float64 `json:"publish_per_s"`
	PublishS  float64 `json:"publish_s"`
	Ratio     float64 `json:"ratio"`
	// Memory is the broker's (mem_used over its nodes).
	Memory ScaleMemory `json:"broker_memory"`
	// Arrival checks: every confirmed message once, none before its due
	// time (publish + delay); lateness is arrival − due.
	Confirmed  int          `json:"confirmed"`
	Delivered  int          `json:"delivered"`
	Duplicates int          `json:"duplicates"`
	Early      int          `json:"early"`
	Lost       int          `json:"lost"`
	Lateness   bench.DistMS `json:"lateness"`
	// DrainS is from the first publish to the last arrival; LastDueS from
	// the first publish to the last message's due time.
	DrainS   float64 `json:"drain_s"`
	LastDueS float64 `json:"last_due_s"`
	// Status and Refresh are the cost of `rungs status --ladder` and of
	// the console's periodic refresh, measured while the ladder drained.
	Status  []CommandCost `json:"status"`
	Refresh []CommandCost `json:"refresh"`
	// Replay moved N dead letters with `rungs replay`, once killed with
	// SIGKILL a third of the way and then to the end.
	Replay   *ReplayCost `json:"replay,omitempty"`
	Problems []string    `json:"problems"`
}

// ScaleMemory is the broker's memory at the phase's edges, in bytes.
type ScaleMemory struct {
	Before int64 `json:"before"`
	// InFlight is read when publishing ended, Peak is the most any
	// sample saw, After is read once every message had been consumed.
	InFlight int64 `json:"in_flight"`
	Peak     int64 `json:"peak"`
	After    int64 `json:"after"`
	Samples  int   `json:"samples"`
}

// CommandCost is one measured read of the ladder.
type CommandCost struct {
	// InFlight is how many messages were in the ladder at the time.
	InFlight int64   `json:"in_flight"`
	MS       float64 `json:"ms"`
	Requests int64   `json:"requests"`
	Bytes    int64   `json:"bytes"`
	// RSS is the peak resident memory of the process (a subprocess
	// running the command), 0 for an in-process read.
	RSS int64 `json:"max_rss_bytes,omitempty"`
	// DLXBacklog is, for a refresh, how many messages had expired in the
	// ladder's rungs and were waiting for the broker to dead-letter them
	// on (quorum rungs' at-least-once dead-lettering; classic rungs have
	// none): time a message spends there is lateness.
	DLXBacklog int64  `json:"dlx_backlog,omitempty"`
	Err        string `json:"error,omitempty"`
}

// scaleHdrDue is a scale message's due time: ns since the phase began
// (the same monotonic clock the consumer reads) plus its delay.
const scaleHdrDue = "x-rungs-lab-due-ns"

// Scale parameters that are not options.
const (
	// memoryEvery is the broker memory sampling interval.
	memoryEvery = time.Second
)

// RunScale runs the scale phase against the broker cfg addresses, in a
// vhost of its own that it removes afterwards. Correctness failures are in
// ScaleReport.Problems; the error is for a run that could not be carried out.
func RunScale(ctx context.Context, cfg broker.Config, mgmt *broker.Management, o ScaleOptions) (rep ScaleReport, err error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	l := o.Ladder
	rep = ScaleReport{
		RunInfo: startRun(), N: o.N, Size: o.Size,
		MinDelayS: o.MinDelay.Seconds(), MaxDelayS: o.MaxDelay.Seconds(), Problems: []string{},
		Ladder: bench.ShapeOf(l),
	}
	switch {
	case o.N < 1:
		return rep, fmt.Errorf("%w: scale of %d messages (want at least 1)", bench.ErrOptions, o.N)
	case o.MinDelay < l.Unit || o.MaxDelay < o.MinDelay:
		return rep, fmt.Errorf("%w: delays %s to %s (want at least the ladder's unit, %s, and min ≤ max)", bench.ErrOptions, o.MinDelay, o.MaxDelay, l.Unit)
	case o.MaxDelay > l.MaxDelay():
		return rep, fmt.Errorf("%w: delay %s is beyond the ladder's %s", bench.ErrOptions, o.MaxDelay, l.MaxDelay())
	case o.Size < 0 || o.Size > 16<<20:
		return rep, fmt.Errorf("%w: message size %d (want 0 to 16 MiB)", bench.ErrOptions, o.Size)
	}
	began := time.Now()
	if _, err := rep.MeetBroker(ctx, mgmt); err != nil {
		return rep, err
	}
	vh, err := bench.NewVhost(ctx, mgmt, cfg, "rungs-lab-scale-")
	if err != nil {
		return rep, err
	}
	defer vh.Remove(ctx, 5*time.Minute, &rep.Problems)
	vcfg := vh.Config
	l.Vhost = vcfg.Vhost
	pub, err := broker.Dial(ctx, vcfg)
	if err != nil {
		return rep, err
	}
	defer pub.Close()
	s := &scaleRun{o: o, l: l, cfg: vcfg, mgmt: mgmt, pub: pub, rep: &rep, body: make([]byte, o.Size)}
	for i := range s.body {
		s.body[i] = 'x'
	}
	if rep.Memory.Before, err = mgmt.NodeMemory(ctx); err != nil {
		return rep, err
	}
	if err := s.limit(ctx); err != nil {
		return rep, err
	}
	if err := s.fill(ctx); err != nil {
		return rep, err
	}
	if o.Binary != "" {
		if err := s.replay(ctx); err != nil {
			return rep, fmt.Errorf("replay: %w", err)
		}
	}
	rep.Finish(began)
	return rep, nil
}

// scaleRun is one scale phase under way.
type scaleRun struct {
	o    ScaleOptions
	l    topology.Ladder
	cfg  broker.Config
	mgmt *broker.Management
	pub  *broker.Conn
	rep  *ScaleReport
	body []byte
	// console is the console's observer of the vhost, kept across
	// measurements as the console keeps it across refreshes.
	console ops.Observer
}

func (s *scaleRun) logf(format string, a ...any) {
	fmt.Fprintf(s.o.Log, "scale: "+format+"\n", a...)
}

func (s *scaleRun) problem(format string, a ...any) {
	s.rep.Problems = append(s.rep.Problems, fmt.Sprintf(format, a...))
}

// limit measures the publishers into one plain queue of the ladder's type.
func (s *scaleRun) limit(ctx context.Context) error {
	n := min(s.o.N, bench.LimitN)
	q := topology.Queue{Name: "bench.scale.limit", Durable: true}
	if s.l.QueueType == topology.Quorum {
		q.Args = topology.Args{"x-queue-type": "quorum"}
	}
	plan := topology.Plan{Queues: []topology.Queue{q}}
	if _, err := s.pub.Apply(ctx, plan); err != nil {
		return fmt.Errorf("limit queue: %w", err)
	}
	got, took, err := bench.PublishN(ctx, s.pub, n, func(int) broker.Message {
		return broker.Message{RoutingKey: q.Name, Body: s.body, Persistent: true}
	}, nil)
	if err != nil {
		return fmt.Errorf("limit: %w", err)
	}
	s.rep.LimitN, s.rep.LimitPerS = got, float64(got)/took.Seconds()
	s.logf("limit: %d persistent messages into one %s queue at %s msg/s", got, s.l.QueueType, topology.FormatRate(s.rep.LimitPerS))
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	return s.pub.Teardown(tctx, plan)
}

// fill publishes N messages into the ladder and consumes them at its
// destination, checking each on arrival, while it samples the broker's
// memory and measures status and a console refresh.
func (s *scaleRun) fill(ctx context.Context) error {
	if _, err := s.pub.Apply(ctx, s.l.Plan()); err != nil {
		return fmt.Errorf("apply %s: %w", s.l.Name, err)
	}
	done, err := s.l.Trace(0, "")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	// A connection of its own: flow control blocks a publishing connection,
	// which would hold up the consumer's acks.
	sub, err := broker.Dial(ctx, s.cfg)
	if err != nil {
		return err
	}
	defer sub.Close()
	deliveries, err := sub.Consume(context.WithoutCancel(ctx), done.Target, bench.Prefetch)
	if err != nil {
		return err
	}
	chk := newScaleCheck(s.o.N, start)
	consumed := make(chan struct{})
	var finished atomic.Bool
	go func() {
		defer close(consumed)
		for {
			chk.consume(deliveries)
			// A connection the broker dropped (a missed heartbeat on a
			// loaded machine) comes back by itself: consume again.
			for deliveries = nil; deliveries == nil && !finished.Load() && ctx.Err() == nil; {
				time.Sleep(time.Second)
				deliveries, _ = sub.Consume(context.WithoutCancel(ctx), done.Target, bench.Prefetch)
			}
			if deliveries == nil {
				return
			}
		}
	}()
	mem := newMemorySampler(s.mgmt)
	go mem.run(ctx)

	lo, hi := uint64(s.o.MinDelay/s.l.Unit), uint64(s.o.MaxDelay/s.l.Unit)
	lo = max(lo, 1)
	if uint64(s.o.MinDelay)%uint64(s.l.Unit) != 0 {
		lo++ // never shorter than asked
	}
	hi = max(hi, lo)
	rng := rand.New(rand.NewPCG(s.o.Seed, 7))
	delays := make([]time.Duration, s.o.N)
	var lastDue atomic.Int64
	for i := range delays {
		delays[i] = time.Duration(lo+rng.Uint64N(hi-lo+1)) * s.l.Unit
	}
	// Traces repeat: one per distinct delay.
	traces := map[time.Duration]topology.Trace{}
	for _, d := range delays {
		if _, ok := traces[d]; !ok {
			if traces[d], err = s.l.Trace(d, ""); err != nil {
				return err
			}
		}
	}
	s.logf("publishing %d persistent messages into %s (%s, %s, radix %d, %d rungs), delays %s to %s",
		s.o.N, s.l.Name, s.l.Layout, s.l.QueueType, s.l.Radix, len(s.l.Rungs()), s.o.MinDelay, s.o.MaxDelay)
	confirmed, took, err := bench.PublishN(ctx, s.pub, s.o.N, func(i int) broker.Message {
		tr := traces[delays[i]]
		return broker.Message{
			Exchange: tr.Exchange, RoutingKey: tr.Key, BCC: tr.BCC, Body: s.body, Persistent: true,
			MessageID: fmt.Sprint(i), Headers: map[string]any{hdrSeq: int64(i), hdrDelay: int64(delays[i])},
		}
	}, func(msgs []broker.Message) {
		// Stamped just before the call: the ladder starts its delay no
		// earlier than this, so an arrival before the due time is early.
		sent := time.Since(start)
		for _, m := range msgs {
			due := int64(sent) + m.Headers[hdrDelay].(int64)
			m.Headers[scaleHdrDue] = due
			for l := lastDue.Load(); due > l && !lastDue.CompareAndSwap(l, due); l = lastDue.Load() {
			}
		}
	})
	if err != nil {
		s.problem("publish: %v", err)
	}
	s.rep.Confirmed, s.rep.PublishS = confirmed, took.Seconds()
	s.rep.Publish = float64(confirmed) / took.Seconds()
	if s.rep.LimitPerS > 0 {
		s.rep.Ratio = s.rep.Publish / s.rep.LimitPerS
	}
	s.rep.LastDueS = time.Duration(lastDue.Load()).Seconds()
	s.rep.Memory.InFlight = mem.read(ctx)
	s.logf("published %d in %.1fs (%s msg/s, %.2f of the limit); broker memory %s → %s",
		confirmed, took.Seconds(), topology.FormatRate(s.rep.Publish), s.rep.Ratio, topology.FormatBytes(s.rep.Memory.Before), topology.FormatBytes(s.rep.Memory.InFlight))

	// Reads while it drains: one with every message in flight, one when
	// about half have arrived.
	s.measureReads(ctx, int64(confirmed)-chk.delivered.Load())
	for chk.delivered.Load() < int64(confirmed)/2 && ctx.Err() == nil && !chk.stalled(s.o.MaxDelay) {
		time.Sleep(100 * time.Millisecond)
	}
	s.measureReads(ctx, int64(confirmed)-chk.delivered.Load())
	for chk.delivered.Load() < int64(confirmed) && ctx.Err() == nil && !chk.stalled(s.o.MaxDelay) {
		time.Sleep(100 * time.Millisecond)
	}
	finished.Store(true)
	_ = sub.Close()
	<-consumed
	mem.stop()
	s.rep.Memory.After = mem.read(context.WithoutCancel(ctx))
	s.rep.Memory.Peak, s.rep.Memory.Samples = mem.peakAndCount()
	s.rep.Memory.Peak = max(s.rep.Memory.Peak, s.rep.Memory.InFlight, s.rep.Memory.After)

	s.rep.Delivered, s.rep.Duplicates, s.rep.Early = chk.n, chk.dups, chk.early
	s.rep.Lost = max(0, confirmed-chk.n)
	s.rep.Lateness = bench.DistMSOf(bench.NewDist(chk.late))
	s.rep.DrainS = chk.last.Seconds()
	switch {
	case chk.bad > 0:
		s.problem("%d deliveries without benchmark headers", chk.bad)
	case chk.ackErr != nil:
		s.problem("ack: %v", chk.ackErr)
	}
	if confirmed != s.o.N {
		s.problem("%d of %d messages confirmed", confirmed, s.o.N)
	}
	if s.rep.Lost > 0 {
		s.problem("%d of %d confirmed messages never arrived", s.rep.Lost, confirmed)
	}
	if chk.dups > 0 {
		s.problem("%d duplicate deliveries", chk.dups)
	}
	if chk.early > 0 {
		s.problem("%d messages arrived before their due time (earliest %s early)", chk.early, -chk.earliest)
	}
	s.logf("delivered %d of %d (%d duplicates, %d early); lateness p50 %s p99 %s max %s; last arrival %.1fs after the first publish, last due %.1fs",
		chk.n, confirmed, chk.dups, chk.early, ms(bench.NewDist(chk.late).P50), ms(bench.NewDist(chk.late).P99), ms(bench.NewDist(chk.late).Max), s.rep.DrainS, s.rep.LastDueS)
	tctx, tcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer tcancel()
	if err := s.pub.Teardown(tctx, s.l.Plan()); err != nil {
		s.problem("teardown %s: %v", s.l.Name, err)
	}
	return nil
}

// measureReads times `rungs status --ladder` (when there is a binary) and
// the console's refresh, once each.
func (s *scaleRun) measureReads(ctx context.Context, inFlight int64) {
	if !s.console.Loaded() {
		// The console's first read, its snapshot, is not a refresh. The
		// console reads what it shows: with the ladder open, its objects.
		s.console, _, _ = ops.NewObserver(ops.Scope{Vhost: s.cfg.Vhost, Ladders: []string{s.l.Name}}).Refresh(ctx, s.mgmt, time.Now)
	}
	r0, b0 := s.mgmt.Cost()
	t0 := time.Now()
	var err error
	s.console, err = consoleRefresh(ctx, s.mgmt, s.console)
	qs := s.console.Snapshot().Queues
	r1, b1 := s.mgmt.Cost()
	rc := CommandCost{InFlight: inFlight, MS: bench.Millis(time.Since(t0)), Requests: r1 - r0, Bytes: b1 - b0}
	rungs := map[string]bool{}
	for _, r := range s.l.Rungs() {
		rungs[r.Queue] = true
	}
	for _, q := range qs {
		if rungs[q.Name] {
			rc.DLXBacklog += q.Stats.Expired
		}
	}
	if err != nil {
		rc.Err = err.Error()
	}
	s.rep.Refresh = append(s.rep.Refresh, rc)
	if s.o.Binary != "" {
		sc := runMeasured(ctx, s.o.Binary, s.cfg, s.mgmt, "status", "--ladder", s.l.Name, "--json")
		sc.InFlight = inFlight
		s.rep.Status = append(s.rep.Status, sc)
		s.logf("status with %d in flight: %.0f ms, %d requests, %s, %s RSS%s", inFlight, sc.MS, sc.Requests, topology.FormatBytes(sc.Bytes), topology.FormatBytes(sc.RSS), errSuffix(sc.Err))
	}
	s.logf("console refresh with %d in flight: %.0f ms, %d requests, %s; %d expired in the rungs awaiting dead-lettering%s", inFlight, rc.MS, rc.Requests, topology.FormatBytes(rc.Bytes), rc.DLXBacklog, errSuffix(rc.Err))
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return " (error: " + e + ")"
}

// consoleRefresh is one of the console's periodic reads, as its observer
// makes it: mostly the queue statistics, merged into its snapshot, and
// every ops.SnapshotEvery reads the snapshot again.
func consoleRefresh(ctx context.Context, m *broker.Management, o ops.Observer) (ops.Observer, error) {
	o, _, err := o.Refresh(ctx, m, time.Now)
	return o, err
}

// scaleCheck checks arrivals: each sequence number once, none before its
// due time.
type scaleCheck struct {
	start     time.Time
	seen      []bool
	late      []time.Duration
	n, dups   int
	early     int
	earliest  time.Duration
	bad       int
	last      time.Duration
	ackErr    error
	delivered atomic.Int64
	// lastAt is when the latest delivery arrived, in ns since start.
	lastAt atomic.Int64
}

func newScaleCheck(n int, start time.Time) *scaleCheck {
	return &scaleCheck{start: start, seen: make([]bool, n), late: make([]time.Duration, 0, n)}
}

func (c *scaleCheck) consume(deliveries <-chan broker.Delivery) {
	for d := range deliveries {
		at := d.Received.Sub(c.start)
		c.lastAt.Store(int64(at))
		if err := d.Ack(); err != nil && c.ackErr == nil {
			c.ackErr = err
		}
		seq, ok1 := bench.IntHeader(d.Headers, hdrSeq)
		due, ok2 := bench.IntHeader(d.Headers, scaleHdrDue)
		if !ok1 || !ok2 || seq < 0 || seq >= int64(len(c.seen)) {
			c.bad++
			continue
		}
		if c.seen[seq] {
			// A redelivery after a dropped connection is the consumer's
			// ack that did not arrive, not a duplicate the ladder made.
			if !d.Redelivered {
				c.dups++
			}
			continue
		}
		c.seen[seq] = true
		late := at - time.Duration(due)
		if late < 0 {
			c.early++
			c.earliest = min(c.earliest, late)
		}
		c.late = append(c.late, late)
		c.n++
		c.last = max(c.last, at)
		c.delivered.Add(1)
	}
}

// stalled reports whether nothing arrived for longer than the longest
// delay plus a margin, after the first arrival or the start.
func (c *scaleCheck) stalled(maxDelay time.Duration) bool {
	return time.Since(c.start)-time.Duration(c.lastAt.Load()) > maxDelay+30*time.Second
}

// memorySampler reads the broker's memory every memoryEvery.
type memorySampler struct {
	m       *broker.Management
	mu      sync.Mutex
	peak    int64
	count   int
	done    chan struct{}
	stopped chan struct{}
}

func newMemorySampler(m *broker.Management) *memorySampler {
	return &memorySampler{m: m, done: make(chan struct{}), stopped: make(chan struct{})}
}

func (ms *memorySampler) run(ctx context.Context) {
	defer close(ms.stopped)
	t := time.NewTicker(memoryEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ms.done:
			return
		case <-t.C:
			ms.read(ctx)
		}
	}
}

// read samples once and returns the figure (0 if the API did not answer).
func (ms *memorySampler) read(ctx context.Context) int64 {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := ms.m.NodeMemory(cctx)
	if err != nil {
		return 0
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.peak, ms.count = max(ms.peak, v), ms.count+1
	return v
}

func (ms *memorySampler) stop() {
	close(ms.done)
	<-ms.stopped
}

func (ms *memorySampler) peakAndCount() (int64, int) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.peak, ms.count
}
