package cli

import (
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// refuseBrokenBCC stops a command from declaring a ladder its broker's
// release cannot route (ops.CheckLayout), and returns the warning line to
// print once the broker answers, so that a broker nobody reaches gets one
// error line.
func refuseBrokenBCC(l topology.Ladder, version func() (topology.Version, error)) (warning string, err error) {
	w, err := ops.CheckLayout(l, version)
	if w == "" || err != nil {
		return "", err
	}
	return "rungs: warning: " + oneLine(broker.Redact(w)), nil
}
