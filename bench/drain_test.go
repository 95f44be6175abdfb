package bench

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// The drain phase at a small N (RUNGS_DRAIN_N for more; RUNGS_DRAIN_TYPE,
// RUNGS_DRAIN_RADIX and RUNGS_DRAIN_DELAY change the ladder and the
// delay), with clients publishing 200 more a second for its first 10s:
// every message arrives and no rung is ever judged stalled while the
// storm drains.
// RUNGS_DRAIN_RECORD=FILE writes the readings for health's tests.
// Timings are reported, not asserted.
func TestDrainSmall(t *testing.T) {
	env := brokertest.Require(t)
	o := DefaultDrainOptions()
	o.N = 5000
	if n, err := strconv.Atoi(os.Getenv("RUNGS_DRAIN_N")); err == nil && n > 0 {
		o.N = n
	}
	o.Delay = 5 * time.Second
	if d, err := time.ParseDuration(os.Getenv("RUNGS_DRAIN_DELAY")); err == nil && d > 0 {
		o.Delay = d
	}
	radix, _ := strconv.Atoi(os.Getenv("RUNGS_DRAIN_RADIX")) // 0: the default
	var err error
	if o.Ladder, err = (topology.Ladder{Name: "storm", Radix: radix, QueueType: topology.QueueType(os.Getenv("RUNGS_DRAIN_TYPE"))}).Normalize(); err != nil {
		t.Fatal(err)
	}
	if path := os.Getenv("RUNGS_DRAIN_RECORD"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		o.Record = f
	}
	o.Inflow, o.InflowFor = 200, 10*time.Second
	o.Log = logWriter{t}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	rep, err := RunDrain(ctx, env.Config, env.Mgmt, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		t.Error(p)
	}
	if rep.Stalled != 0 {
		t.Errorf("%d rung readings judged stalled during the drain, want 0", rep.Stalled)
	}
	if rep.InflowN < 1000 {
		t.Errorf("the inflow published %d in 10s at 200/s", rep.InflowN)
	}
	if rep.FinishS <= 0 || rep.LimitPerS <= 0 || rep.Readings == 0 {
		t.Errorf("finish %.1fs, limit %.0f/s, %d readings: the phase measured nothing", rep.FinishS, rep.LimitPerS, rep.Readings)
	}
	js, _ := json.MarshalIndent(rep, "", " ")
	t.Logf("%s", js)
}
