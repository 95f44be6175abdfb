package cli

import (
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
	o := bench.DefaultDrainOptions()
	o.N = bf.drain
	return e.runPhase(cmd, bf, func(m *broker.Management, l topology.Ladder, _ string) (string, any, []string, error) {
		o.Ladder, o.Log = l, e.Err
		rep, err := bench.RunDrain(cmd.Context(), e.config(), m, o)
		return rep.Markdown(), rep, rep.Problems, err
	})
}
