package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// Header names a benchmark message carries. The sequence number finds
// duplicates and losses; the send time and the delay give lateness.
const (
	hdrSeq   = "x-rungs-bench-seq"
	hdrSent  = "x-rungs-bench-sent-ns" // monotonic ns since the phase began
	hdrDelay = "x-rungs-bench-delay-ns"
	hdrDeath = "x-death"
)

// Engine constants. They are the same for every phase, so that the limit
// and the ladders are measured with the same client machinery.
const (
	// Prefetch is how many unacknowledged deliveries the consumer holds.
	Prefetch = 500
	// publishers run concurrently at saturation, so that one's wait for
	// its batch's last confirm overlaps the others' sending.
	publishers = 3
	// batch is how many messages a saturating publisher sends per Publish
	// call; their send time is taken when the batch is built.
	batch = 100
	// tick is the pacing interval of an offered load.
	tick = 5 * time.Millisecond
	// pacedBatch caps one Publish call of an offered load that catches up.
	pacedBatch = 500
)

// target is where a phase's messages go: a ladder's entry exchange, or a
// plain queue through the default exchange for the limit.
type target struct {
	name   string
	ladder *topology.Ladder // nil for the limit
	queue  string           // where messages arrive and are consumed
	// keysOnly publishes to exchange with the ladder's keys but no delay:
	// one topic-routed transfer, the reference a ladder hop compares to.
	keysOnly bool
	exchange string
	// chain > 0 sends every message through that many TTL queues of one
	// unit each, dead-lettered through the default exchange: a hop with no
	// routing decision at all, the cheapest a dead-letter design can hop.
	chain int
}

// chainQueue names the i-th queue of a floor chain; the last, chain, is
// the one consumed.
func chainQueue(i int) string { return fmt.Sprintf("bench.chain.%02d", i) }

// route spells a delay of units as exchange, routing key, BCC keys (the
// direct layout's) and rungs visited.
func (tg target) route(units uint64) (exchange, key string, bcc []string, hops int, err error) {
	if tg.chain > 0 {
		return "", chainQueue(0), nil, tg.chain, nil
	}
	if tg.ladder == nil {
		return "", tg.queue, nil, 0, nil
	}
	d := time.Duration(units) * tg.ladder.Unit
	if tg.keysOnly {
		key, err := tg.ladder.Key(d, "")
		return tg.exchange, key, nil, 0, err
	}
	tr, err := tg.ladder.Trace(d, "")
	if err != nil {
		return "", "", nil, 0, err
	}
	return tr.Exchange, tr.Key, tr.BCC, len(tr.Hops), nil
}

// flowSpec is one measured phase.
type flowSpec struct {
	target target
	// rate is the offered load in messages/s; 0 publishes as fast as
	// confirms and the in-flight cap allow (saturation).
	rate float64
	// delayBits: delays are uniform over [0, 2^delayBits) units; 0 sends
	// every message with no delay (the limit).
	delayBits int
	unit      time.Duration
	// warmup is not measured; window is. Publishing runs for both.
	warmup, window time.Duration
	// maxMessages stops publishing early (smoke runs); 0 is no cap.
	maxMessages int
	// inFlight caps messages published and not yet delivered at
	// saturation, so that the ladder holds a bounded population.
	inFlight   int
	body       []byte
	persistent bool
	seed       uint64
	// cpu reads the broker's CPU time, if the broker is local.
	cpu func() (time.Duration, bool)
	// probe measures the host's timer lateness during the window.
	probe bool
}

// arrival is one delivery, as the consumer saw it.
type arrival struct {
	sent, at, late time.Duration // since the phase began; lateness
	hops           int
}

// flowResult is what one phase measured.
type flowResult struct {
	Published   int // handed to Publish
	Confirmed   int
	Delivered   int // distinct messages consumed
	Duplicates  int
	Early       int
	Lost        int // confirmed, never delivered
	Unconfirmed int // returned, nacked, failed or unsent
	// Window figures: deliveries arriving in the measured window
	// (saturation) or messages sent in it (offered load).
	WindowSeconds float64
	Rate          float64 // delivered/s in the window
	PublishRate   float64 // confirmed/s of messages sent in the window
	MeanHops      float64 // x-death entries per delivery, window
	ExpectedHops  float64 // rungs the sent delays visit, all messages
	MaxHops       int
	Lateness      Dist
	// LateByHops is the p99 lateness by rungs visited, window.
	LateByHops map[int]Dist
	// BrokerCPU is the broker's CPU time during the window, 0 if unknown.
	BrokerCPU time.Duration
	// HostTimer is the oversleep of 1 ms sleeps during the window.
	HostTimer Dist
}

// pubRecord is one Publish call's outcome.
type pubRecord struct {
	sent time.Duration
	res  broker.PublishResult
}

// runFlow runs one phase: it consumes the target, publishes for warmup +
// window, waits for every confirmed message to arrive (or for deliveries to
// stall), and summarises.
//
// The subscriber gets a connection of its own, closed at the end of the
// phase (see the drain below for why).
func runFlow(ctx context.Context, pub *broker.Conn, dial func(context.Context) (*broker.Conn, error), spec flowSpec) (flowResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub, err := dial(ctx)
	if err != nil {
		return flowResult{}, err
	}
	defer sub.Close()
	r := newFlowRun(ctx, pub, spec)
	deliveries, err := sub.Consume(context.WithoutCancel(ctx), spec.target.queue, Prefetch)
	if err != nil {
		return flowResult{}, err
	}
	go r.consume(deliveries)
	go r.sampleCPU()
	go r.probeTimer()
	end := time.NewTimer(r.stopAt)
	defer end.Stop()
	go func() {
		select {
		case <-end.C:
		case <-ctx.Done():
		}
		close(r.ended)
	}()
	if spec.rate == 0 {
		r.saturate()
	} else {
		r.offer()
	}
	res := r.published()
	r.drain(res.Confirmed)
	// Closing the subscriber's connection, not cancelling the consume
	// context, ends the deliveries: cancelling races amqp091's own
	// basic.cancel against broker.Conn.Consume's channel close, and the
	// close can then wait forever for a reply the cancel took.
	_ = sub.Close()
	<-r.consumed
	<-r.cpuDone
	<-r.probeDone
	return r.finish(res)
}

// flowRun is one phase under way. Its steps run as goroutines: a
// consumer, the publishers (saturating or paced), a CPU sampler and a
// timer probe; runFlow starts them, waits, drains and summarises.
type flowRun struct {
	ctx      context.Context
	pub      *broker.Conn
	spec     flowSpec
	start    time.Time
	stopAt   time.Duration
	maxUnits uint64
	// credits bound the messages in flight at saturation (nil when paced);
	// ended closes when the phase's time is up.
	credits chan struct{}
	ended   chan struct{}

	// The consumer owns these until consumed closes.
	arrivals  []arrival
	seen      []bool
	dups, bad int
	ackErr    error
	delivered atomic.Int64
	consumed  chan struct{}

	// The publishers share these.
	seq, hopsSum, maxHops, sent atomic.Int64
	mu                          sync.Mutex // guards records and pubErr
	records                     []pubRecord
	pubErr                      error

	// The samplers own these until their channel closes.
	cpuAt     [2]time.Duration
	cpuOK     [2]bool
	cpuDone   chan struct{}
	oversleep []time.Duration
	probeDone chan struct{}
}

func newFlowRun(ctx context.Context, pub *broker.Conn, spec flowSpec) *flowRun {
	r := &flowRun{
		ctx: ctx, pub: pub, spec: spec, start: time.Now(), stopAt: spec.warmup + spec.window,
		ended: make(chan struct{}), consumed: make(chan struct{}), cpuDone: make(chan struct{}), probeDone: make(chan struct{}),
	}
	if spec.rate == 0 {
		r.credits = make(chan struct{}, spec.inFlight)
		for i := 0; i < spec.inFlight; i++ {
			r.credits <- struct{}{}
		}
	}
	if spec.delayBits > 0 {
		r.maxUnits = uint64(1)<<spec.delayBits - 1
	}
	return r
}

func (r *flowRun) since() time.Duration { return time.Since(r.start) }

// consume records each delivery once: when it arrived, how late, through
// how many rungs. At saturation every arrival frees a credit.
func (r *flowRun) consume(deliveries <-chan broker.Delivery) {
	defer close(r.consumed)
	for d := range deliveries {
		at := d.Received.Sub(r.start)
		if err := d.Ack(); err != nil && r.ackErr == nil {
			r.ackErr = err
		}
		seq, ok1 := IntHeader(d.Headers, hdrSeq)
		sent, ok2 := IntHeader(d.Headers, hdrSent)
		delay, ok3 := IntHeader(d.Headers, hdrDelay)
		if !ok1 || !ok2 || !ok3 || seq < 0 {
			r.bad++
			continue
		}
		for int64(len(r.seen)) <= seq {
			r.seen = append(r.seen, make([]bool, max(len(r.seen), 1024))...)
		}
		if r.seen[seq] {
			r.dups++
			continue
		}
		r.seen[seq] = true
		hops := 0
		if xd, ok := d.Headers[hdrDeath].([]any); ok {
			hops = len(xd)
		}
		r.arrivals = append(r.arrivals, arrival{
			sent: time.Duration(sent), at: at, hops: hops,
			late: at - time.Duration(sent) - time.Duration(delay),
		})
		r.delivered.Add(1)
		if r.credits != nil {
			select {
			case r.credits <- struct{}{}:
			default:
			}
		}
	}
}

// delayOf is the delay a message of u units asks for.
func (r *flowRun) delayOf(u uint64) int64 {
	switch {
	case r.spec.target.keysOnly:
		return 0
	case r.spec.target.chain > 0:
		return int64(time.Duration(r.spec.target.chain) * r.spec.unit)
	}
	return int64(time.Duration(u) * r.spec.unit)
}

// build makes n messages, reserving their sequence numbers.
func (r *flowRun) build(rng *rand.Rand, n int) ([]broker.Message, error) {
	first := r.seq.Add(int64(n)) - int64(n)
	sent := int64(r.since())
	msgs := make([]broker.Message, n)
	for i := range msgs {
		var u uint64
		if r.maxUnits > 0 {
			u = rng.Uint64N(r.maxUnits + 1)
		}
		ex, key, bcc, hops, err := r.spec.target.route(u)
		if err != nil {
			return nil, err
		}
		r.hopsSum.Add(int64(hops))
		for m := r.maxHops.Load(); int64(hops) > m && !r.maxHops.CompareAndSwap(m, int64(hops)); m = r.maxHops.Load() {
		}
		msgs[i] = broker.Message{
			Exchange: ex, RoutingKey: key, BCC: bcc, Body: r.spec.body, Persistent: r.spec.persistent,
			Headers: map[string]any{
				hdrSeq: first + int64(i), hdrSent: sent,
				hdrDelay: r.delayOf(u),
			},
		}
	}
	return msgs, nil
}

// publish sends built messages on p and records the outcome; false means
// stop.
func (r *flowRun) publish(p broker.Publisher, msgs []broker.Message) bool {
	r.sent.Add(int64(len(msgs)))
	res, err := p.Publish(r.ctx, msgs)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, pubRecord{sent: time.Duration(msgs[0].Headers[hdrSent].(int64)), res: res})
	if err != nil && r.pubErr == nil {
		r.pubErr = err
	}
	return err == nil
}

// failed records an error that stopped a publisher before it published.
func (r *flowRun) failed(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pubErr == nil {
		r.pubErr = err
	}
}

// budget says how many more messages the cap allows, 0 when reached.
func (r *flowRun) budget(n int) int {
	if r.spec.maxMessages <= 0 {
		return n
	}
	return max(0, min(n, r.spec.maxMessages-int(r.seq.Load())))
}

// sampleCPU reads the broker's CPU time at the window's edges.
func (r *flowRun) sampleCPU() {
	defer close(r.cpuDone)
	if r.spec.cpu == nil || r.spec.maxMessages > 0 {
		return
	}
	for i, at := range []time.Duration{r.spec.warmup, r.stopAt} {
		select {
		case <-time.After(at - r.since()):
		case <-r.ctx.Done():
			return
		}
		r.cpuAt[i], r.cpuOK[i] = r.spec.cpu()
	}
}

// probeTimer measures the host's timer: how late this process wakes from
// 1 ms sleeps during the window.
func (r *flowRun) probeTimer() {
	defer close(r.probeDone)
	if !r.spec.probe {
		return
	}
	select {
	case <-time.After(r.spec.warmup - r.since()):
	case <-r.ctx.Done():
		return
	}
	for r.since() < r.stopAt && r.ctx.Err() == nil {
		t0 := time.Now()
		time.Sleep(time.Millisecond)
		r.oversleep = append(r.oversleep, time.Since(t0)-time.Millisecond)
	}
}

// saturate runs the closed loop: publishers that send a batch whenever
// the consumer has freed a batch's worth of credits.
func (r *flowRun) saturate() {
	var wg sync.WaitGroup
	var claim sync.Mutex // keeps maxMessages exact across publishers
	for p := 0; p < publishers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			// A channel per publisher for the whole phase, as a
			// long-running producer keeps one (see broker.Stream).
			st := r.pub.Stream()
			defer st.Close()
			rng := rand.New(rand.NewPCG(r.spec.seed, uint64(p)))
			for {
				claim.Lock()
				n := r.budget(batch)
				got := 0
				// Wait for a whole batch: tiny batches would make the
				// per-call cost (a channel, confirm mode) the bottleneck.
			take:
				for got < n {
					select {
					case <-r.credits:
						got++
					case <-r.ended:
						break take
					}
				}
				if got == 0 || got < n {
					claim.Unlock()
					return
				}
				msgs, err := r.build(rng, got)
				claim.Unlock()
				if err != nil {
					r.failed(err)
					return
				}
				if !r.publish(st, msgs) {
					return
				}
			}
		}(p)
	}
	wg.Wait()
}

// offer runs the open loop: one publisher paced at the offered rate.
func (r *flowRun) offer() {
	rng := rand.New(rand.NewPCG(r.spec.seed, 0))
	// One channel for the phase: a channel per tick's call cost the broker
	// more CPU than the messages (broker.Stream), which a producer that
	// keeps its channel does not pay, and which slowed quorum ladders most.
	st := r.pub.Stream()
	defer st.Close()
	t := time.NewTicker(tick)
	defer t.Stop()
	sentN := 0
	for {
		select {
		case <-r.ended:
			return
		case <-t.C:
		}
		// The end wins over a tick that is ready at the same time.
		select {
		case <-r.ended:
			return
		default:
		}
		// Open loop: ticks missed while the broker was slow are caught up
		// (a late broker must not lower the offered load), but only
		// messages due within the phase, at most pacedBatch per call, so
		// that the end is seen promptly.
		due := min(int(r.spec.rate*min(r.since(), r.stopAt).Seconds())-sentN, pacedBatch)
		if due = r.budget(due); due <= 0 {
			if r.spec.maxMessages > 0 && int(r.seq.Load()) >= r.spec.maxMessages {
				return
			}
			continue
		}
		msgs, err := r.build(rng, due)
		if err != nil {
			r.failed(err)
			return
		}
		if !r.publish(st, msgs) {
			return
		}
		sentN += due
	}
}

// published totals what the publishers sent and the broker confirmed.
func (r *flowRun) published() flowResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	var res flowResult
	for _, rec := range r.records {
		res.Confirmed += rec.res.Confirmed
		res.Unconfirmed += rec.res.Returned + rec.res.Nacked + rec.res.Failed + rec.res.Unsent
	}
	res.Published = int(r.sent.Load())
	return res
}

// drain waits until every confirmed message has arrived, giving up only
// when deliveries stall for longer than the longest delay plus a margin.
func (r *flowRun) drain(confirmed int) {
	stall := time.Duration(r.maxUnits)*r.spec.unit + 15*time.Second
	last, lastN := time.Now(), r.delivered.Load()
	for r.delivered.Load() < int64(confirmed) && r.ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
		if n := r.delivered.Load(); n != lastN {
			last, lastN = time.Now(), n
		} else if time.Since(last) > stall {
			break
		}
	}
}

// finish summarises the phase once every goroutine has stopped.
func (r *flowRun) finish(res flowResult) (flowResult, error) {
	res.HostTimer = NewDist(r.oversleep)
	if r.cpuOK[0] && r.cpuOK[1] {
		res.BrokerCPU = r.cpuAt[1] - r.cpuAt[0]
	}
	res.Delivered = len(r.arrivals)
	res.Duplicates = r.dups
	res.Lost = max(0, res.Confirmed-res.Delivered)
	res.ExpectedHops = float64(r.hopsSum.Load()) / float64(max(1, res.Published))
	res.MaxHops = int(r.maxHops.Load())
	summarise(&res, r.arrivals, r.records, r.spec)

	var errs []error
	if r.pubErr != nil {
		errs = append(errs, fmt.Errorf("publish: %w", r.pubErr))
	}
	if r.ackErr != nil {
		errs = append(errs, fmt.Errorf("ack: %w", r.ackErr))
	}
	if r.bad > 0 {
		errs = append(errs, fmt.Errorf("%d deliveries without benchmark headers in %s", r.bad, r.spec.target.queue))
	}
	return res, errors.Join(errs...)
}

// summarise fills the window figures. At saturation the window holds the
// deliveries that arrived in it; at an offered load, the messages sent in
// it, however late they arrived.
func summarise(res *flowResult, arrivals []arrival, records []pubRecord, spec flowSpec) {
	lo, hi := spec.warmup, spec.warmup+spec.window
	if spec.maxMessages > 0 && len(arrivals) > 0 {
		// A capped (smoke) run may end before the window does: measure
		// from the first to the last arrival instead.
		lo, hi = arrivals[0].at, arrivals[0].at
		for _, a := range arrivals {
			lo, hi = min(lo, a.at), max(hi, a.at)
		}
		if hi == lo {
			hi = lo + time.Millisecond
		}
	}
	in := func(a arrival) bool {
		if spec.rate == 0 || spec.maxMessages > 0 {
			return a.at >= lo && a.at <= hi
		}
		return a.sent >= lo && a.sent <= hi
	}
	var late []time.Duration
	byHops := map[int][]time.Duration{}
	hops := 0
	for _, a := range arrivals {
		if a.late < 0 {
			res.Early++
		}
		if !in(a) {
			continue
		}
		late = append(late, a.late)
		byHops[a.hops] = append(byHops[a.hops], a.late)
		hops += a.hops
	}
	res.WindowSeconds = (hi - lo).Seconds()
	if res.WindowSeconds > 0 {
		res.Rate = float64(len(late)) / res.WindowSeconds
		confirmed := 0
		for _, r := range records {
			if r.sent >= lo && r.sent <= hi {
				confirmed += r.res.Confirmed
			}
		}
		res.PublishRate = float64(confirmed) / res.WindowSeconds
	}
	if len(late) > 0 {
		res.MeanHops = float64(hops) / float64(len(late))
	}
	res.Lateness = NewDist(late)
	res.LateByHops = map[int]Dist{}
	for h, ls := range byHops {
		res.LateByHops[h] = NewDist(ls)
	}
}

// IntHeader reads an integer header as amqp091 decodes it.
func IntHeader(h map[string]any, k string) (int64, bool) {
	switch v := h[k].(type) {
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case int:
		return int64(v), true
	}
	return 0, false
}

// Dist summarises a set of durations.
type Dist struct {
	N   int           `json:"n"`
	P50 time.Duration `json:"p50_ns"`
	P99 time.Duration `json:"p99_ns"`
	Max time.Duration `json:"max_ns"`
	Min time.Duration `json:"min_ns"`
}

// NewDist sorts ds in place and reads its percentiles (nearest rank).
func NewDist(ds []time.Duration) Dist {
	if len(ds) == 0 {
		return Dist{}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return Dist{N: len(ds), P50: rank(ds, 0.50), P99: rank(ds, 0.99), Max: ds[len(ds)-1], Min: ds[0]}
}

// rank is the nearest-rank percentile of sorted ds.
func rank(ds []time.Duration, p float64) time.Duration {
	i := int(p*float64(len(ds))+0.999999) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}
