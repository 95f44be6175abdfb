package health

import (
	"time"
)

// A burst of messages with one delay all come due within the time it took
// to publish them, and the ladder forwards them no faster than the node
// dead-letters: every hop of a quorum rung is a Raft commit and a
// confirm, and they share the node's cores. With a capacity of C
// dead-letter hops a second and h hops a message, the ladder passes C/h
// messages a second of that delay. Message k of n, published at rate R,
// is due k/R after the first and leaves k·h/C after the first is due, so
// it is k·(h/C − 1/R) late: the lateness grows along the burst, and the
// p-th percentile is the p-th message's.

// BurstForecast is how late a burst will arrive.
type BurstForecast struct {
	// Rate is the messages a second the ladder passes at this delay
	// (capacity ÷ hops).
	Rate float64
	// P50, P99 and Max are the lateness of the burst's median, 99th
	// percentile and last message; all 0 when the ladder keeps up.
	P50, P99, Max time.Duration
}

// Late reports whether the burst is forecast to arrive late at all.
func (b BurstForecast) Late() bool { return b.Max > 0 }

// BurstLateness forecasts a burst of n messages, each making hops
// dead-letter hops, through a ladder of capacity hops a second, published
// at publishRate messages a second (0: all at once). It returns the zero
// forecast when the capacity or hops are unknown.
func BurstLateness(n, hops int, capacity, publishRate float64) BurstForecast {
	if n < 1 || hops < 1 || capacity <= 0 {
		return BurstForecast{}
	}
	b := BurstForecast{Rate: capacity / float64(hops)}
	per := 1 / b.Rate
	if publishRate > 0 {
		per -= 1 / publishRate
	}
	if per <= 0 {
		return b
	}
	at := func(q float64) time.Duration {
		return time.Duration(q * float64(n) * per * float64(time.Second))
	}
	b.P50, b.P99, b.Max = at(0.50), at(0.99), at(1)
	return b
}
