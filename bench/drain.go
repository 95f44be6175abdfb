package bench

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// The drain phase is a retry storm on purpose: N persistent messages with
// one delay, published as fast as the broker confirms, so that they all
// expire together and the ladder's dead-lettering, not the TTLs, decides
// when they arrive. It watches the ladder through the observer every
// front end uses and counts how often a rung was judged stalled (a
// storm is a backlog, never a stall), and it compares the finish the
// forecast first predicted, once the rate could be measured after the
// publishing, with the real one.

// DrainOptions configure the drain phase.
type DrainOptions struct {
	N int
	// Delay is every message's delay: one delay makes the worst storm,
	// every message expiring in the same rungs within the publish time.
	Delay time.Duration
	// Ladder is the ladder to fill (its Vhost is ignored), declared as
	// rungs apply declares it: Ladder.AtMostOnce prices what the
	// at-most-once strategy's trade of safety buys in drain rate.
	Ladder topology.Ladder
	Size   int
	// Every is how often the statistics are read.
	Every time.Duration
	// Record, when set, receives every reading as a health.Recording
	// (JSON): the recorded sequences health's tests judge.
	Record io.Writer
	Log    io.Writer
	// Capacity, when set, is a drain capacity measured before (hops/s):
	// the run states the lateness health.BurstLateness predicts from it
	// before publishing, to compare with what it then measures.
	Capacity float64
	// Inflow, when above 0, is a steady rate (messages a second) of the
	// same messages published from the storm's start for InflowFor, as
	// failing consumers keep retrying through a real storm: the drain is
	// then measured while clients publish.
	Inflow    float64
	InflowFor time.Duration
	// BrokerPID is the broker's process on this machine, whose CPU time
	// the run reports: 0 for the pid the management API reports for a
	// broker on loopback, -1 for none (Options.BrokerPID).
	BrokerPID int
}

// DefaultDrainOptions is 200,000 messages of 20 s through the default
// ladder: a storm a 2-core broker needs longer to drain than to publish.
func DefaultDrainOptions() DrainOptions {
	return DrainOptions{N: 200_000, Delay: 20 * time.Second, Size: 64, Every: time.Second}
}

// DrainReport is what the drain phase measured.
type DrainReport struct {
	RunInfo
	N      int         `json:"n"`
	DelayS float64     `json:"delay_s"`
	Ladder LadderShape `json:"ladder"`
	// LimitPerS is the broker's own limit measured in the same run: the
	// rate one plain queue of the ladder's type takes persistent messages
	// in (publish, confirms) and gives them to a consumer (acks).
	LimitPerS float64 `json:"limit_per_s"`
	PublishS  float64 `json:"publish_s"`
	// DrainPerS is how fast messages reached the target while a backlog
	// waited (arrivals ÷ time, from the first due to the last arrival);
	// HopsPerS the dead-letter forwards per second the ladder sustained
	// (health's measured capacity, median while backlogged). Ratio is
	// DrainPerS ÷ LimitPerS.
	DrainPerS float64 `json:"drain_per_s"`
	HopsPerS  float64 `json:"hops_per_s"`
	Ratio     float64 `json:"ratio"`
	// The peak is the reading with the most expired messages waiting.
	// The forecast needs a health.RateSpan of readings without publishing
	// to measure the drain rate, so its first prediction of the finish
	// (from the first publish) comes at ForecastAtS, with ForecastExpired
	// still waiting.
	PeakExpired      int64   `json:"peak_expired"`
	PeakAtS          float64 `json:"peak_at_s"`
	ForecastAtS      float64 `json:"forecast_at_s"`
	ForecastExpired  int64   `json:"forecast_expired"`
	PredictedFinishS float64 `json:"predicted_finish_s"`
	// FinishS is from the first publish until the target held every
	// message; LastDueS until the last was due. ErrorPct is the
	// predicted finish's error as a share of FinishS (the issue's
	// measure: within 20%), LeftErrorPct as a share of the time that was
	// left at the first forecast (the harder one).
	FinishS      float64 `json:"finish_s"`
	LastDueS     float64 `json:"last_due_s"`
	ErrorPct     float64 `json:"error_pct"`
	LeftErrorPct float64 `json:"left_error_pct"`
	// Stalled counts readings × rungs judged stalled (it must be 0);
	// Backlogged the most rungs judged backlogged in one reading.
	Stalled    int `json:"stalled"`
	Backlogged int `json:"backlogged"`
	Readings   int `json:"readings"`
	// Each message carries the millisecond it was sent in its body, and
	// a consumer on the target takes every arrival: Late is arrival less
	// (sent + delay), in ms (the AMQP timestamp has whole seconds only).
	// Early counts arrivals before they were due, Lost the messages that
	// never arrived, Duplicates those that arrived twice.
	Late       DistMS `json:"late"`
	Early      int    `json:"early"`
	Lost       int    `json:"lost"`
	Duplicates int    `json:"duplicates"`
	// PeakMemory is the broker's highest mem_used over the run's
	// readings, in bytes; BrokerCPUS the broker process's CPU seconds
	// from the first publish to the last arrival (0 when the broker is
	// not a local process), BrokerCPUus that per message.
	PeakMemory  int64   `json:"peak_memory"`
	BrokerCPUS  float64 `json:"broker_cpu_s"`
	BrokerCPUus float64 `json:"broker_cpu_us_per_msg"`
	// Hops is the hops each message makes; AtMostOnce the strategy the
	// quorum rungs were declared with.
	Hops       int  `json:"hops"`
	AtMostOnce bool `json:"at_most_once"`
	// PredictedLate is the burst lateness Capacity predicted before
	// publishing (0: no capacity was given); PredictedErrPct its p99's
	// error against the measured p99.
	PredictedLate   BurstLate `json:"predicted_late"`
	PredictedErrPct float64   `json:"predicted_err_pct"`
	// PacedLate is the same forecast at the pace the publisher then
	// reached (what rungs publish --rate forecasts with), PacedErrPct its
	// p99's error.
	PacedLate   BurstLate `json:"paced_late"`
	PacedErrPct float64   `json:"paced_err_pct"`
	// LoadAtPeak is the load average when the backlog peaked.
	LoadAtPeak string `json:"load_at_peak"`
	// With an inflow: InflowN messages were published at InflowPerS
	// (asked) for InflowS. FirstRateAtS is the first reading with a
	// measured drain rate after the storm's burst (its last reading
	// publishing faster than twice the inflow) while the inflow still
	// published, and FirstRateAfterPeakS how long after the burst it came.
	InflowPerS          float64 `json:"inflow_per_s,omitempty"`
	InflowS             float64 `json:"inflow_s,omitempty"`
	InflowN             int     `json:"inflow_n,omitempty"`
	FirstRateAtS        float64 `json:"first_rate_at_s,omitempty"`
	FirstRateAfterPeakS float64 `json:"first_rate_after_peak_s,omitempty"`
	// The forecast's finish is a range: RangeReadings readings gave one,
	// and in RangeHits of them it held the time the messages held at that
	// reading had all arrived (health.Recording.Finishes). SlowEndErrorPct
	// is the first forecast's slow end against ActualForecastS, when what
	// the rungs held at it had all arrived.
	PredictedFastS  float64  `json:"predicted_fast_s,omitempty"`
	RangeReadings   int      `json:"range_readings"`
	RangeHits       int      `json:"range_hits"`
	SlowEndErrorPct float64  `json:"slow_end_error_pct"`
	ActualForecastS float64  `json:"actual_forecast_s"`
	Problems        []string `json:"problems"`
}

// BurstLate is health.BurstLateness as a report states it, in seconds.
type BurstLate struct {
	MessagesPerS float64 `json:"messages_per_s"`
	P50S         float64 `json:"p50_s"`
	P99S         float64 `json:"p99_s"`
	MaxS         float64 `json:"max_s"`
}

// RunDrain runs the drain phase in a vhost of its own, removed afterwards.
func RunDrain(ctx context.Context, cfg broker.Config, mgmt *broker.Management, o DrainOptions) (rep DrainReport, err error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Every <= 0 {
		o.Every = time.Second
	}
	l := o.Ladder
	rep = DrainReport{RunInfo: StartRun(), N: o.N, DelayS: o.Delay.Seconds(), Ladder: ShapeOf(l), Problems: []string{}}
	switch {
	case o.N < 1:
		return rep, fmt.Errorf("%w: drain of %d messages (want at least 1)", ErrOptions, o.N)
	case o.Delay < l.Unit || o.Delay > l.MaxDelay():
		return rep, fmt.Errorf("%w: delay %s (want the ladder's unit %s to its longest %s)", ErrOptions, o.Delay, l.Unit, l.MaxDelay())
	}
	began := time.Now()
	ov, err := rep.MeetBroker(ctx, mgmt)
	if err != nil {
		return rep, err
	}
	vh, err := NewVhost(ctx, mgmt, cfg, "rungs-bench-drain-")
	if err != nil {
		return rep, err
	}
	defer vh.Remove(ctx, 5*time.Minute, &rep.Problems)
	vcfg := vh.Config
	l.Vhost = vcfg.Vhost
	conn, err := broker.Dial(ctx, vcfg)
	if err != nil {
		return rep, err
	}
	defer conn.Close()
	logf := func(format string, a ...any) { fmt.Fprintf(o.Log, "drain: "+format+"\n", a...) }
	body := make([]byte, max(o.Size, 16))
	if rep.LimitPerS, err = drainLimit(ctx, conn, l.QueueType, min(o.N, LimitN), body); err != nil {
		return rep, fmt.Errorf("limit: %w", err)
	}
	logf("limit: %.0f/s through one %s queue", rep.LimitPerS, l.QueueType)
	plan := l.Plan()
	rep.AtMostOnce = l.AtMostOnce
	if _, err := conn.Apply(ctx, plan); err != nil {
		return rep, fmt.Errorf("apply %s: %w", l.Name, err)
	}
	tr, err := l.Trace(o.Delay, "")
	if err != nil {
		return rep, err
	}
	rep.Hops = len(tr.Hops)
	// The consumer has a connection of its own: the broker throttles a
	// publishing connection (credit flow), and acks sent on it wait with
	// the publishes, which made the target, not the ladder, the bound of
	// a fast drain (35,000 ready in the done queue behind 2,000 unacked on
	// 3.10.8).
	cconn, err := broker.Dial(ctx, vcfg)
	if err != nil {
		return rep, err
	}
	defer cconn.Close()
	arr, err := consumeArrivals(ctx, cconn, tr.Target, o.N, o.Delay)
	if err != nil {
		return rep, err
	}
	cpu, cpuOK := findBrokerCPU(ctx, mgmt, ov.Node, cfg.URL, o.BrokerPID)
	rec := health.Recording{Version: rep.Broker.RabbitMQ, Ladder: health.RecordedLadderOf(l), N: o.N, DelayMS: o.Delay.Milliseconds(), Target: tr.Target}
	obs := ops.NewObserver(ops.Scope{Vhost: vcfg.Vhost, Ladders: []string{l.Name}}).WithIntervals(o.Every, 0)
	if obs, _, err = obs.Refresh(ctx, mgmt, time.Now); err != nil {
		return rep, err
	}

	if o.Capacity > 0 {
		// The rate the publisher reaches is not known before it runs; the
		// broker's limit is close to it (both publish with confirms into
		// one node), so the forecast takes that.
		p := health.BurstLateness(o.N, rep.Hops, o.Capacity, rep.LimitPerS)
		rep.PredictedLate = BurstLate{MessagesPerS: p.Rate, P50S: p.P50.Seconds(), P99S: p.P99.Seconds(), MaxS: p.Max.Seconds()}
		logf("forecast from %.0f hops/s: %d messages of %s pass at %.0f/s, p50 %.1fs, p99 %.1fs, last %.1fs late",
			o.Capacity, o.N, o.Delay, p.Rate, p.P50.Seconds(), p.P99.Seconds(), p.Max.Seconds())
	}
	cpu0, _ := cpu.used()
	start := time.Now()
	published := make(chan error, 1)
	go func() {
		got, took, err := PublishN(ctx, conn, o.N, func(i int) broker.Message {
			return broker.Message{Exchange: tr.Exchange, RoutingKey: tr.Key, BCC: tr.BCC, Persistent: true, Body: stampBody(body, i)}
		}, func(msgs []broker.Message) {
			// Stamped just before the batch is sent, so that a message's
			// due time is never later than the broker's.
			now := time.Now().UnixMilli()
			for _, m := range msgs {
				binary.BigEndian.PutUint64(m.Body[8:16], uint64(now))
			}
		})
		rep.PublishS = took.Seconds()
		if err == nil && got != o.N {
			err = fmt.Errorf("%d of %d confirmed", got, o.N)
		}
		published <- err
	}()
	var inflowN atomic.Int64
	inflowDone := make(chan error, 1)
	if o.Inflow > 0 && o.InflowFor > 0 {
		rep.InflowPerS, rep.InflowS = o.Inflow, o.InflowFor.Seconds()
		go func() {
			inflowDone <- Inflow(ctx, conn, o.Inflow, o.InflowFor, broker.Message{Exchange: tr.Exchange, RoutingKey: tr.Key, BCC: tr.BCC, Persistent: true, Body: body}, &inflowN)
		}()
	} else {
		inflowDone <- nil
	}
	inflowing := true
	lastDue := time.Duration(0)
	var pubDone bool
	type reading struct {
		at     time.Duration
		lo, hi time.Duration
		sample int
	}
	var ranges []reading
	var burstEnd time.Duration
	var hops []float64
	inflowTotal := 0
	if o.Inflow > 0 {
		inflowTotal = int(o.Inflow * o.InflowFor.Seconds())
	}
	timeout := 4*o.Delay + o.InflowFor + time.Duration((o.N+inflowTotal)/500)*time.Second + 2*time.Minute
	for {
		if err := ops.Sleep(ctx, o.Every); err != nil {
			return rep, err
		}
		if !pubDone {
			select {
			case err := <-published:
				if err != nil {
					return rep, fmt.Errorf("publish: %w", err)
				}
				pubDone, lastDue = true, time.Since(start)+o.Delay
				logf("published %d in %.1fs", o.N, rep.PublishS)
			default:
			}
		}
		if inflowing {
			select {
			case err := <-inflowDone:
				if err != nil {
					return rep, fmt.Errorf("inflow: %w", err)
				}
				inflowing = false
				rep.InflowN = int(inflowN.Load())
				if rep.InflowN > 0 {
					lastDue = time.Since(start) + o.Delay
					logf("inflow: published %d in %.0fs", rep.InflowN, rep.InflowS)
				}
			default:
			}
		}
		if obs, _, err = obs.Refresh(ctx, mgmt, time.Now); err != nil {
			return rep, err
		}
		at := time.Since(start)
		arrived := arr.count() + arr.inflowCount()
		rec.Add(at, withArrived(obs.Snapshot().Queues, tr.Target, arrived))
		r := obs.Report(obs.At())
		rep.Readings++
		if mem, err := mgmt.NodeMemory(ctx); err == nil && mem > rep.PeakMemory {
			rep.PeakMemory = mem
		}
		if len(r.Ladders) == 1 {
			lr := r.Ladders[0]
			rep.Stalled += lr.Totals.Stalled
			rep.Backlogged = max(rep.Backlogged, lr.Totals.Backlogged)
			if lr.Totals.Stalled > 0 {
				rep.Problems = append(rep.Problems, fmt.Sprintf("%.0fs: %d rungs judged stalled during the drain", at.Seconds(), lr.Totals.Stalled))
			}
			d := lr.Drain
			if lr.Totals.Backlogged > 0 && d.Capacity > 0 {
				hops = append(hops, d.Capacity)
			}
			if lr.Totals.Expired > rep.PeakExpired {
				rep.PeakExpired, rep.PeakAtS = lr.Totals.Expired, at.Seconds()
				rep.LoadAtPeak = ReadLoad()
			}
			if pubDone && d.Finish > 0 && rep.PredictedFinishS == 0 {
				rep.ForecastAtS, rep.ForecastExpired = at.Seconds(), lr.Totals.Expired
				rep.PredictedFinishS = (at + d.Finish).Seconds()
				rep.PredictedFastS = (at + d.FinishFast).Seconds()
			}
			// The storm's own burst ends at the last reading publishing
			// faster than twice the inflow; the first rate after it, while
			// the inflow still publishes, is what the operator waits for.
			var pub float64
			for _, q := range obs.Snapshot().Queues {
				pub += q.Stats.PublishRate
			}
			if rep.InflowPerS > 0 && (pub > 2*rep.InflowPerS || !pubDone) {
				burstEnd, rep.FirstRateAtS = at, 0
			}
			if inflowing && rep.InflowPerS > 0 && at > burstEnd && d.Capacity > 0 && d.In > 0 && rep.FirstRateAtS == 0 {
				rep.FirstRateAtS, rep.FirstRateAfterPeakS = at.Seconds(), (at - burstEnd).Seconds()
			}
			if d.Finish > 0 {
				ranges = append(ranges, reading{at: at, lo: d.FinishFast, hi: d.Finish, sample: len(rec.Samples) - 1})
			}
			logf("%4.0fs in ladder %d, expired %d, arrived %d, backlogged %d, stalled %d, %s",
				at.Seconds(), lr.Totals.InFlight, lr.Totals.Expired, arrived, lr.Totals.Backlogged, lr.Totals.Stalled, health.DrainSummary(d))
		}
		if pubDone && !inflowing && arrived >= int64(o.N+rep.InflowN) {
			rep.FinishS = arr.last().Sub(start).Seconds()
			break
		}
		if at > timeout {
			rep.Problems = append(rep.Problems, fmt.Sprintf("only %d of %d arrived in %s", arrived, o.N, at.Round(time.Second)))
			break
		}
	}
	if cpu1, ok := cpu.used(); cpuOK && ok {
		rep.BrokerCPUS = (cpu1 - cpu0).Seconds()
		rep.BrokerCPUus = rep.BrokerCPUS * 1e6 / float64(o.N)
	}
	// The consumer may still take a duplicate; what it has is the tally.
	arr.stop()
	rep.Late, rep.Early, rep.Lost, rep.Duplicates = arr.tally()
	if rep.PredictedLate.P99S > 0 && rep.Late.P99 > 0 {
		rep.PredictedErrPct = 100 * (rep.PredictedLate.P99S*1000 - rep.Late.P99) / rep.Late.P99
	}
	if o.Capacity > 0 && rep.PublishS > 0 && rep.Late.P99 > 0 {
		p := health.BurstLateness(o.N, rep.Hops, o.Capacity, float64(o.N)/rep.PublishS)
		rep.PacedLate = BurstLate{MessagesPerS: p.Rate, P50S: p.P50.Seconds(), P99S: p.P99.Seconds(), MaxS: p.Max.Seconds()}
		rep.PacedErrPct = 100 * (rep.PacedLate.P99S*1000 - rep.Late.P99) / rep.Late.P99
	}
	if rep.Early > 0 || rep.Lost > 0 || rep.Duplicates > 0 {
		rep.Problems = append(rep.Problems, fmt.Sprintf("%d early, %d lost, %d duplicated", rep.Early, rep.Lost, rep.Duplicates))
	}
	rep.LastDueS = lastDue.Seconds()
	if first := o.Delay.Seconds(); rep.FinishS > first {
		rep.DrainPerS = float64(o.N+rep.InflowN) / (rep.FinishS - first)
	}
	if rep.LimitPerS > 0 {
		rep.Ratio = rep.DrainPerS / rep.LimitPerS
	}
	rep.HopsPerS = median(hops)
	if fin, err := rec.Finishes(); err == nil {
		for k, g := range ranges {
			if fin[g.sample] < 0 {
				continue
			}
			if k == 0 {
				// The first forecast against when what the rungs held then
				// had all arrived (with an inflow, before the last arrival).
				rep.ActualForecastS = fin[g.sample].Seconds()
				rep.SlowEndErrorPct = 100 * (g.at + g.hi - fin[g.sample]).Seconds() / fin[g.sample].Seconds()
			}
			rep.RangeReadings++
			if left := fin[g.sample] - g.at; left >= g.lo && left <= g.hi {
				rep.RangeHits++
			}
		}
	}
	if left := rep.FinishS - rep.ForecastAtS; rep.PredictedFinishS > 0 && left > 0 {
		rep.ErrorPct = 100 * (rep.PredictedFinishS - rep.FinishS) / rep.FinishS
		rep.LeftErrorPct = 100 * (rep.PredictedFinishS - rep.FinishS) / left
	}
	if o.Record != nil {
		enc := json.NewEncoder(o.Record)
		enc.SetIndent("", " ")
		if err := enc.Encode(rec); err != nil {
			return rep, fmt.Errorf("record: %w", err)
		}
	}
	rep.Finish(began)
	return rep, nil
}

// drainLimit measures the broker's own limit for one hop: n persistent
// messages published (with confirms) into one plain queue of the ladder's
// type and consumed from it (acks), at the same time, as a dead-letter
// hop both writes and reads a queue. The rate is n ÷ the time until the
// last was consumed.
func drainLimit(ctx context.Context, conn *broker.Conn, qt topology.QueueType, n int, body []byte) (float64, error) {
	q := "bench.drain.limit"
	p := topology.Plan{Queues: []topology.Queue{{Name: q, Durable: true, Args: map[string]any{"x-queue-type": string(qt)}}}}
	if _, err := conn.Apply(ctx, p); err != nil {
		return 0, err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ds, err := conn.Consume(cctx, q, 1000)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	published := make(chan error, 1)
	go func() {
		got, _, err := PublishN(ctx, conn, n, func(int) broker.Message {
			return broker.Message{RoutingKey: q, Persistent: true, Body: body}
		}, nil)
		if err == nil && got != n {
			err = fmt.Errorf("%d of %d confirmed", got, n)
		}
		published <- err
	}()
	for got := 0; got < n; {
		select {
		case d, ok := <-ds:
			if !ok {
				return 0, errors.New("consumer closed")
			}
			if err := d.Ack(); err != nil {
				return 0, err
			}
			got++
		case err := <-published:
			if err != nil {
				return 0, err
			}
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// Markdown is the drain report as docs/benchmarks shows it.
func (r DrainReport) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Drain: %d messages of %s, %s %s ladder, radix %d (RabbitMQ %s, %d CPUs)\n\n",
		r.N, topology.FormatSpan(time.Duration(r.DelayS*float64(time.Second))), r.Ladder.Layout, r.Ladder.QueueType, r.Ladder.Radix, r.Broker.RabbitMQ, r.Machine.CPUs)
	b.WriteString("| figure | value |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, v) }
	row("broker limit (one plain queue, publish+consume)", fmt.Sprintf("%.0f/s", r.LimitPerS))
	row("published in", fmt.Sprintf("%.1fs", r.PublishS))
	row("drain (arrivals after the first was due)", fmt.Sprintf("%.0f/s = %.2f × limit", r.DrainPerS, r.Ratio))
	row("ladder capacity while backlogged (median)", fmt.Sprintf("%.0f hops/s", r.HopsPerS))
	row("peak backlog", fmt.Sprintf("%d expired at %.0fs", r.PeakExpired, r.PeakAtS))
	row(fmt.Sprintf("first forecast (%s after the publishing settled)", topology.FormatSpan(health.RateSpan)), fmt.Sprintf("at %.0fs, %d expired waiting: finish at %.0fs", r.ForecastAtS, r.ForecastExpired, r.PredictedFinishS))
	row("actual finish (last arrival)", fmt.Sprintf("%.0fs (last due %.0fs)", r.FinishS, r.LastDueS))
	row("prediction error", fmt.Sprintf("%+.0f%% of the finish, %+.0f%% of the time left", r.ErrorPct, r.LeftErrorPct))
	if r.InflowPerS > 0 {
		row("steady inflow", fmt.Sprintf("%.0f/s asked for %.0fs: %d published", r.InflowPerS, r.InflowS, r.InflowN))
		row("first drain rate while clients publish", fmt.Sprintf("at %.0fs, %.0fs after the storm's burst", r.FirstRateAtS, r.FirstRateAfterPeakS))
	}
	row("first forecast's range", fmt.Sprintf("what the rungs held has left at %.0fs to %.0fs; it had at %.0fs (slow end %+.0f%%)", r.PredictedFastS, r.PredictedFinishS, r.ActualForecastS, r.SlowEndErrorPct))
	row("readings whose range held the actual finish", fmt.Sprintf("%d of %d", r.RangeHits, r.RangeReadings))
	row("rung readings judged stalled", fmt.Sprintf("%d", r.Stalled))
	strategy := "at-least-once"
	if r.AtMostOnce {
		strategy = "at-most-once"
	}
	if r.Ladder.QueueType != string(topology.Quorum) {
		strategy = "classic (at-most-once)"
	}
	row("dead-lettering, hops a message", fmt.Sprintf("%s, %d", strategy, r.Hops))
	row("dead-letter hops/s (drain × hops)", fmt.Sprintf("%.0f", r.DrainPerS*float64(r.Hops)))
	row("lateness p50 / p99 / max", fmt.Sprintf("%.2fs / %.2fs / %.2fs", r.Late.P50/1000, r.Late.P99/1000, r.Late.Max/1000))
	row("early / lost / duplicated", fmt.Sprintf("%d / %d / %d", r.Early, r.Lost, r.Duplicates))
	row("broker memory peak", topology.FormatBytes(r.PeakMemory))
	if r.BrokerCPUS > 0 {
		row("broker CPU (first publish to last arrival)", fmt.Sprintf("%.1fs, %.0f µs a message", r.BrokerCPUS, r.BrokerCPUus))
	}
	if p := r.PredictedLate; p.MessagesPerS > 0 {
		row("forecast before publishing (publisher at the limit's rate)", fmt.Sprintf("%.0f/s: p50 %.1fs, p99 %.1fs, max %.1fs late (p99 %+.0f%% of measured)", p.MessagesPerS, p.P50S, p.P99S, p.MaxS, r.PredictedErrPct))
		q := r.PacedLate
		row("the same at the pace published (as publish --rate gives it)", fmt.Sprintf("p50 %.1fs, p99 %.1fs, max %.1fs late (p99 %+.0f%% of measured)", q.P50S, q.P99S, q.MaxS, r.PacedErrPct))
	}
	row("load average (before / at peak / after)", fmt.Sprintf("%s / %s / %s", r.Machine.LoadBefore, r.LoadAtPeak, r.Machine.LoadAfter))
	return b.String()
}

// stampBody is a copy of body with message i's index in its first eight
// bytes; the publisher's stamp writes the send time into the next eight.
func stampBody(body []byte, i int) []byte {
	b := append([]byte(nil), body...)
	binary.BigEndian.PutUint64(b[:8], uint64(i))
	return b
}

// arrivals takes every message off the drain's target as it arrives and
// times it against its due time (its send time in the body plus the
// delay).
type arrivals struct {
	mu     sync.Mutex
	seen   []bool
	late   []time.Duration
	early  int
	dups   int
	inflow int64
	n      int64
	lastAt time.Time
	cancel context.CancelFunc
	done   chan struct{}
}

func consumeArrivals(ctx context.Context, conn *broker.Conn, queue string, n int, delay time.Duration) (*arrivals, error) {
	cctx, cancel := context.WithCancel(ctx)
	// A large prefetch, so that the consumer is never what makes the
	// messages late.
	ds, err := conn.Consume(cctx, queue, 2000)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("consume %s: %w", queue, err)
	}
	a := &arrivals{seen: make([]bool, n), late: make([]time.Duration, 0, n), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		for d := range ds {
			_ = d.Ack()
			a.add(d.Body, d.Received, delay)
		}
	}()
	return a, nil
}

func (a *arrivals) add(body []byte, at time.Time, delay time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(body) < 16 {
		return
	}
	ms := binary.BigEndian.Uint64(body[8:16])
	if ms == 0 {
		// An inflow message (unstamped): counted, not timed.
		a.inflow++
		a.lastAt = at
		return
	}
	i := binary.BigEndian.Uint64(body[:8])
	if i >= uint64(len(a.seen)) {
		return
	}
	if a.seen[i] {
		a.dups++
		return
	}
	a.seen[i] = true
	sent := time.UnixMilli(int64(ms))
	late := at.Sub(sent.Add(delay))
	if late < 0 {
		a.early++
	}
	a.late = append(a.late, late)
	a.n++
	a.lastAt = at
}

func (a *arrivals) count() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

func (a *arrivals) inflowCount() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inflow
}

// withArrived is the queues with the target holding what the consumer
// took off it: the recording and its finishes count arrivals by the
// target's depth, as it was before a consumer timed each message.
func withArrived(qs []topology.Queue, target string, arrived int64) []topology.Queue {
	out := append([]topology.Queue(nil), qs...)
	for i := range out {
		if out[i].Name == target {
			out[i].Stats.Ready += arrived
		}
	}
	return out
}

func (a *arrivals) last() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastAt
}

// stop ends the consumer, after a moment for a duplicate in flight.
func (a *arrivals) stop() {
	time.Sleep(2 * time.Second)
	a.cancel()
	<-a.done
}

// tally is the lateness of every arrival, and the early, lost and
// duplicated counts.
func (a *arrivals) tally() (DistMS, int, int, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	lost := len(a.seen) - int(a.n)
	return DistMSOf(NewDist(a.late)), a.early, lost, a.dups
}

// Inflow publishes copies of m at rate a second for d, confirmed, in
// batches a tenth of a second apart, adding each confirmed batch to n. A
// broker slower than the rate is not waited for beyond it: the inflow
// falls behind and says how far.
func Inflow(ctx context.Context, conn *broker.Conn, rate float64, d time.Duration, m broker.Message, n *atomic.Int64) error {
	st := conn.Stream()
	defer st.Close()
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var sent int64
	for {
		el := time.Since(start)
		if el >= d {
			return nil
		}
		if due := int64(rate*el.Seconds()) - sent; due > 0 {
			msgs := make([]broker.Message, due)
			for i := range msgs {
				msgs[i] = m
			}
			res, err := st.Publish(ctx, msgs)
			n.Add(int64(res.Confirmed))
			sent += due
			if err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}
