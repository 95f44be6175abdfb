package cli

import (
	"fmt"

	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// printDelays writes the inventories under the ladders' table
// (ui.DelaysText).
func (v view) printDelays(invs []topology.Inventory) {
	fmt.Fprint(v.Out, ui.DelaysText(invs, v.width()))
}

// toJSONDelays is the inventories in --json (ui.DelaysJSON).
func toJSONDelays(invs []topology.Inventory) any { return ui.DelaysJSON(invs) }

// jsonRetryQueue is a quorum queue under delayed retry in --json
// (ui.JSONRetryQueue).
type jsonRetryQueue = ui.JSONRetryQueue
