package retry

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// HeaderSentMS is when a delayed message was published into the ladder, in
// milliseconds since the Unix epoch. The library sets it on every retry,
// beside topology.HeaderDelayMS, so that the worker receiving the job can
// tell how late the ladder delivered it. Any publisher may set both.
const HeaderSentMS = "x-rungs-sent-ms"

// LatenessBuckets are the lateness histogram's upper bounds in seconds:
// from the few milliseconds a healthy ladder adds to the minutes of one
// that stalled.
var LatenessBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// Metrics records how punctually delayed jobs arrive, per worker queue:
//
//	rungs_retry_lateness_seconds{queue}  histogram of arrival − (sent + delay);
//	                                     an early arrival counts as 0
//	rungs_retry_early_total{queue}       arrivals before sent + delay
//
// A ladder delivers no message early: a non-zero early count means clocks
// disagree (publisher and worker on different hosts) or a message skipped
// its rungs. Only first deliveries of messages that carry HeaderSentMS and
// topology.HeaderDelayMS are measured: a redelivered or replayed job's
// arrival says nothing about the ladder.
type Metrics struct {
	lateness *prometheus.HistogramVec
	early    *prometheus.CounterVec
}

// NewMetrics registers the metrics with reg (prometheus.DefaultRegisterer
// if nil). Calling it again with the same registry returns metrics that
// share the registered series, so several Retriers can report into one.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	if reg == nil {
		reg = prometheus.DefaultRegisterer
	}
	m := &Metrics{
		lateness: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "rungs_retry_lateness_seconds", Buckets: LatenessBuckets,
			Help: "How late a delayed job reached its worker: arrival − (publish + delay), early arrivals as 0.",
		}, []string{"queue"}),
		early: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rungs_retry_early_total",
			Help: "Delayed jobs that reached their worker before publish + delay (a ladder never delivers early: suspect clocks).",
		}, []string{"queue"}),
	}
	var err error
	if m.lateness, err = register(reg, m.lateness); err != nil {
		return nil, err
	}
	if m.early, err = register(reg, m.early); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector already registered in
// its place.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// WithMetrics makes the Retrier record every delayed job's lateness on
// arrival (Serve does; a loop of your own calls Observe).
func WithMetrics(m *Metrics) Option { return func(r *Retrier) { r.metrics = m } }

// Lateness is how late a delivery arrived after its publish time plus its
// delay; ok is false when the delivery is not a measurable delayed one
// (no HeaderSentMS or delay header, redelivered, or replayed).
func Lateness(d broker.Delivery, now time.Time) (late time.Duration, ok bool) {
	if d.Redelivered || d.Headers[topology.HeaderReplayed] != nil {
		return 0, false
	}
	sent, ok1 := topology.HeaderInt(d.Headers[HeaderSentMS])
	delay, ok2 := topology.HeaderInt(d.Headers[topology.HeaderDelayMS])
	if !ok1 || !ok2 || sent <= 0 || delay < 0 {
		return 0, false
	}
	at := d.Received
	if at.IsZero() {
		at = now
	}
	return at.Sub(time.UnixMilli(sent + delay)), true
}

// Observe records a delivery's lateness if the Retrier has metrics and the
// delivery is a measurable delayed one, and returns it.
func (r *Retrier) Observe(d broker.Delivery) (time.Duration, bool) {
	late, ok := Lateness(d, time.Now())
	if !ok || r.metrics == nil {
		return late, ok
	}
	if late < 0 {
		r.metrics.early.WithLabelValues(r.queue).Inc()
	}
	r.metrics.lateness.WithLabelValues(r.queue).Observe(max(late, 0).Seconds())
	return late, ok
}
