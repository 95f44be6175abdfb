package cli

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/bench"
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
	o.Inflow, o.InflowFor = inflow, inflowFor
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
	return e.view().printBench(bf, rep.Markdown(), rep, rep.Problems)
}
