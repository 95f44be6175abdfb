package cli

import (
	"os"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// doctorDefinitions checks the delays in an exported definitions file
// without a broker (ops.DefinitionsChecks) and prints the checks.
func doctorDefinitions(v view, vhost, path string, target topology.Version) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return usageErr("--definitions: %v", err)
	}
	checks, err := ops.DefinitionsChecks(data, path, vhost, target)
	if err != nil {
		return err
	}
	return v.printDoctor(checks)
}
