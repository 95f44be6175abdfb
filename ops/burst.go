package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// BurstLate is a publish's forecast lateness, said before it sends: from
// the drain capacity `rungs bench --drain --save` measured on this broker
// for the ladder's kind of rungs, the hops the delay takes, and the pace.
type BurstLate struct {
	health.BurstForecast
	Capacity broker.DrainCapacity
	// Paced is whether the publish rate was known (--rate); without it
	// the burst is taken as arriving at once, which makes the forecast an
	// upper bound.
	Paced bool
}

// ForecastBurst forecasts n messages through trace tr published at rate
// (0: as fast as confirms allow) from the capacities saved on the broker.
// ok is false when no capacity fits the ladder or the burst keeps within
// it.
func ForecastBurst(n int, tr topology.Trace, caps map[string]broker.DrainCapacity, rate float64) (BurstLate, bool) {
	c, found := caps[broker.CapacityKey(string(tr.Ladder.QueueType), tr.Ladder.EveryRungAtMostOnce())]
	if !found || c.HopsPerS <= 0 || len(tr.Hops) == 0 {
		return BurstLate{}, false
	}
	f := health.BurstLateness(n, len(tr.Hops), c.HopsPerS, rate)
	// Under a second late is within what the broker's own timers add to
	// any message; not worth a warning.
	if f.Max < time.Second {
		return BurstLate{}, false
	}
	return BurstLate{BurstForecast: f, Capacity: c, Paced: rate > 0}, true
}

// Warning is the forecast in one line: how late, at what pace, and where
// the capacity came from.
func (b BurstLate) Warning(n int, tr topology.Trace) string {
	bound := "about"
	if !b.Paced {
		bound = "up to about"
	}
	return fmt.Sprintf("%s messages of %s will arrive %s %s late, the median %s: the ladder passes about %s/s of this delay (%s each, at %s dead-letter hops/s measured by rungs bench on RabbitMQ %s, %s)",
		topology.FormatCount(int64(n)), topology.FormatDelay(tr.Delay), bound, roundSpan(b.Max), roundSpan(b.P50),
		topology.FormatRate(b.Rate), topology.Counted(len(tr.Hops), "hop", "hops"),
		topology.FormatCount(int64(b.Capacity.HopsPerS+0.5)), b.Capacity.RabbitMQ, b.Capacity.Measured.UTC().Format("2006-01-02"))
}

func roundSpan(d time.Duration) string {
	return topology.FormatSpan(d.Round(time.Second))
}

// CapacityReader reads the drain capacities saved on the broker.
type CapacityReader interface {
	DrainCapacities(ctx context.Context) (map[string]broker.DrainCapacity, error)
}

var _ CapacityReader = (*broker.Management)(nil)
