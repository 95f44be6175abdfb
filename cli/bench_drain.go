package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// runDrain runs the drain phase (--drain) and prints its report.
func (e *env) runDrain(cmd *cobra.Command, bf benchFlags) error {
	if bf.drain < 1 {
		return usageErr("--drain %d: want at least 1 message", bf.drain)
	}
	if bf.record != "" {
		// Checked before the broker is met, so that a path that cannot
		// be written fails at once, not after the storm; the file is
		// created only once the run begins.
		if st, err := os.Stat(filepath.Dir(bf.record)); err != nil || !st.IsDir() {
			return usageErr("--record %s: no such directory", bf.record)
		}
	}
	delay, err := time.ParseDuration(bf.drainDelay)
	if err != nil || delay <= 0 {
		return usageErr("--drain-delay %q: want a duration such as 20s", bf.drainDelay)
	}
	if _, _, err := e.opts.ladder.atMostOnce(); err != nil {
		return err
	}
	if bf.capacity < 0 {
		return usageErr("--capacity %v: want a rate in hops/s above 0", bf.capacity)
	}
	var inflow float64
	var inflowFor time.Duration
	if bf.inflow != "" {
		v, err := strconv.ParseFloat(strings.TrimSuffix(bf.inflow, "/s"), 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) {
			return usageErr("--inflow %s: want a rate a second above 0, e.g. 1500/s", bf.inflow)
		}
		d, err := time.ParseDuration(bf.inflowFor)
		if err != nil || d <= 0 {
			return usageErr("--inflow-for %s: want a duration above 0, e.g. 4m", bf.inflowFor)
		}
		inflow, inflowFor = v, d
	}
	m, err := e.clients().benchBroker()
	if err != nil {
		return err
	}
	l, err := e.opts.ladder.defaultLadder(e.view(), e.vhost(), func() (topology.Version, error) { return e.clients().brokerVersion(cmd.Context()) })
	if err != nil {
		return err
	}
	o := bench.DefaultDrainOptions()
	o.N, o.Ladder, o.Log = bf.drain, l, e.Err
	o.Delay, o.Capacity = delay, bf.capacity
	o.Inflow, o.InflowFor, o.BrokerPID = inflow, inflowFor, bf.brokerPID
	if bf.record != "" {
		f, err := os.Create(bf.record)
		if err != nil {
			return usageErr("--record: %v", err)
		}
		defer f.Close()
		o.Record = f
	}
	rep, err := bench.RunDrain(cmd.Context(), e.config(), m, o)
	if err != nil {
		if errorsIsOptions(err) {
			return usageErr("%v", err)
		}
		return err
	}
	if bf.save {
		if err := e.saveCapacity(cmd.Context(), m, rep); err != nil {
			return err
		}
	}
	return e.view().printBench(bf, rep.Markdown(), rep, rep.Problems)
}

// minSavedLate is how late a drain's last message must arrive for its
// drain rate to be the ladder's capacity: a ladder that kept up measured
// only how fast it was fed.
const minSavedLate = 2 * time.Second

// saveCapacity keeps the drain's dead-letter hops a second on the broker,
// keyed by the rungs' kind.
func (e *env) saveCapacity(ctx context.Context, m *broker.Management, rep bench.DrainReport) error {
	if rep.Late.Max < float64(minSavedLate.Milliseconds()) || rep.Lost > 0 {
		fmt.Fprintf(e.Err, "rungs: capacity not saved: the ladder kept up (last message %.1fs late, %d lost); a larger --drain measures it\n", rep.Late.Max/1000, rep.Lost)
		return nil
	}
	c := broker.DrainCapacity{HopsPerS: rep.DrainPerS * float64(rep.Hops), RabbitMQ: rep.Broker.RabbitMQ, Measured: rep.Started, N: rep.N, Load: rep.LoadAtPeak}
	key := broker.CapacityKey(rep.Ladder.QueueType, rep.AtMostOnce)
	if err := m.SaveDrainCapacity(ctx, key, c); err != nil {
		return err
	}
	fmt.Fprintf(e.Err, "rungs: saved the drain capacity of %s rungs on the broker: %.0f dead-letter hops/s\n", key, c.HopsPerS)
	return nil
}
