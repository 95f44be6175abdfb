package bench

import (
	"time"

	"github.com/rungs-dev/rungs/broker"
)

// minSavedLate is how late a drain's last message must arrive for its
// drain rate to be the ladder's capacity: a ladder that kept up measured
// only how fast it was fed.
const minSavedLate = 2 * time.Second

// Capacity is the drain capacity the run measured, as rungs keeps it on
// the broker, and the key it is kept under (the rungs' kind); ok is false
// when the run measured none: the ladder kept up, or messages were lost.
func (r DrainReport) Capacity() (c broker.DrainCapacity, key string, ok bool) {
	if r.Late.Max < float64(minSavedLate.Milliseconds()) || r.Lost > 0 {
		return c, "", false
	}
	c = broker.DrainCapacity{HopsPerS: r.DrainPerS * float64(r.Hops), RabbitMQ: r.Broker.RabbitMQ, Measured: r.Started, N: r.N, Load: r.LoadAtPeak}
	return c, broker.CapacityKey(r.Ladder.QueueType, r.AtMostOnce), true
}
