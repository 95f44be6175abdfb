package cli

import (
	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// runScanBench runs the scan phase (--scan) and prints its report.
func (e *env) runScanBench(cmd *cobra.Command, bf benchFlags) error {
	o := bench.DefaultScanOptions()
	if bf.scan < 1 {
		return usageErr("--scan %d: want at least 1 message", bf.scan)
	}
	o.N = bf.scan
	return e.runPhase(cmd, bf, func(m *broker.Management, l topology.Ladder, binary string) (string, any, []string, error) {
		o.Ladder, o.Binary, o.Log = l, binary, e.Err
		rep, err := bench.RunScan(cmd.Context(), e.config(), m, o)
		return rep.Markdown(), rep, rep.Problems, err
	})
}
