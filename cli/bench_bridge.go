package cli

import (
	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/bench"
)

// runBenchBridge runs the bridge phase (--bridge) and prints its report.
func (e *env) runBenchBridge(cmd *cobra.Command, bf benchFlags) error {
	o, err := bf.in.BridgeOptions()
	if err != nil {
		return err
	}
	m, err := e.clients().benchBroker()
	if err != nil {
		return err
	}
	o.Log = e.Err
	rep, err := bench.RunBridge(cmd.Context(), e.config(), m, o)
	if err != nil {
		return err
	}
	return e.view().printBench(bf, rep.Markdown(), rep, rep.Problems)
}
