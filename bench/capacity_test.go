package bench

import (
	"testing"

	"github.com/rungs-dev/rungs/broker"
)

// A drain measured the ladder's capacity only when it fell behind and
// lost nothing.
func TestDrainReportCapacity(t *testing.T) {
	behind := DrainReport{N: 1000, DrainPerS: 500, Hops: 3, Late: DistMS{Max: 5000}}
	behind.Ladder.QueueType = "quorum"
	behind.Broker.RabbitMQ = "4.3.6"
	for _, tc := range []struct {
		name string
		edit func(*DrainReport)
		ok   bool
	}{
		{"fell behind", func(*DrainReport) {}, true},
		{"kept up", func(r *DrainReport) { r.Late.Max = 1999 }, false},
		{"lost one", func(r *DrainReport) { r.Lost = 1 }, false},
	} {
		r := behind
		tc.edit(&r)
		c, key, ok := r.Capacity()
		if ok != tc.ok {
			t.Errorf("%s: ok %v", tc.name, ok)
		}
		if ok && (c.HopsPerS != 1500 || c.RabbitMQ != "4.3.6" || c.N != 1000 || key != broker.CapacityKey("quorum", false)) {
			t.Errorf("%s: %+v under %q", tc.name, c, key)
		}
	}
}
