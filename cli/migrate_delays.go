package cli

import (
	"fmt"
	"time"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// writeDelaysPreview shows the dry run of a migration of delays
// (--from-delays): per delay queue, where each of its first messages
// would go and what is left of its delay.
func (v view) writeDelaysPreview(mp ops.MigratePlan, out []ops.MigrateRungPreview) error {
	if v.json {
		return writeJSON(v.Out, map[string]any{"dry_run": true, "from_delays": mp.Source(), "to": toJSONLadder(mp.Migration.To), "park": mp.Park, "queues": out})
	}
	fmt.Fprintf(v.Out, "dry run: nothing was moved\n  from the delay queues of %s\n  into %s\n", mp.Source(), describe(mp.Migration.To))
	for _, rp := range out {
		head := fmt.Sprintf("%s (%s): %d ready", rp.Queue, topology.FormatDelay(time.Duration(rp.TTLMS)*time.Millisecond), rp.Ready)
		if rp.Skipped != "" {
			fmt.Fprintf(v.Out, "%s; not previewed: %s\n", head, rp.Skipped)
			continue
		}
		fmt.Fprintf(v.Out, "%s, the first %d:\n", head, len(rp.Messages))
		w := table(v.Out)
		for _, m := range rp.Messages {
			fmt.Fprintf(w, "  #%d\t%s\t%s left of %s (%s)\t%s\n", m.Position+1, orDash(m.MessageID), topology.FormatDelay(time.Duration(m.RemainingMS)*time.Millisecond), topology.FormatDelay(time.Duration(m.DelayMS)*time.Millisecond), m.Basis, previewWhereText(m))
		}
		_ = w.Flush()
	}
	return nil
}
