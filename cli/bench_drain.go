package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// runDrain runs the drain phase (--drain) and prints its report.
func (e *env) runDrain(cmd *cobra.Command, bf benchFlags) error {
	o, err := bf.in.DrainOptions()
	if err != nil {
		return err
	}
	if _, _, err := e.opts.ladder.atMostOnce(); err != nil {
		return err
	}
	m, err := e.clients().benchBroker()
	if err != nil {
		return err
	}
	if o.Ladder, err = e.opts.ladder.defaultLadder(e.view(), e.vhost(), func() (topology.Version, error) { return e.clients().brokerVersion(cmd.Context()) }); err != nil {
		return err
	}
	o.Log = e.Err
	if bf.in.Record != "" {
		f, err := os.Create(bf.in.Record)
		if err != nil {
			return usageErr("--record: %v", err)
		}
		defer f.Close()
		o.Record = f
	}
	rep, err := bench.RunDrain(cmd.Context(), e.config(), m, o)
	if err != nil {
		return err
	}
	if bf.save {
		if err := e.saveCapacity(cmd.Context(), m, rep); err != nil {
			return err
		}
	}
	return e.view().printBench(bf, rep.Markdown(), rep, rep.Problems)
}

// saveCapacity keeps the drain's dead-letter hops a second on the broker,
// keyed by the rungs' kind, when the run measured them.
func (e *env) saveCapacity(ctx context.Context, m *broker.Management, rep bench.DrainReport) error {
	c, key, ok := rep.Capacity()
	if !ok {
		fmt.Fprintf(e.Err, "rungs: capacity not saved: the ladder kept up (last message %.1fs late, %d lost); a larger --drain measures it\n", rep.Late.Max/1000, rep.Lost)
		return nil
	}
	if err := m.SaveDrainCapacity(ctx, key, c); err != nil {
		return err
	}
	fmt.Fprintf(e.Err, "rungs: saved the drain capacity of %s rungs on the broker: %.0f dead-letter hops/s\n", key, c.HopsPerS)
	return nil
}
