package cli

import (
	"encoding/json"
	"os"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// parseTarget reads doctor's --target: a release such as 4.3 or 4.3.6.
func parseTarget(s string) (topology.Version, error) {
	if s == "" {
		return topology.Version{}, nil
	}
	v, ok := topology.ParseVersion(s)
	if !ok || !v.Known() {
		return v, usageErr("--target %q is not a RabbitMQ release (try 4.3 or 4.3.6)", s)
	}
	return v, nil
}

// doctorDefinitions checks the delays in an exported definitions file
// (rabbitmqctl export_definitions, or the management UI's export) without
// a broker: what an upgrade to --target breaks, judged on the release that
// exported it. A file that lists no vhost is checked as vhost's.
func doctorDefinitions(v view, vhost, path string, target topology.Version) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return usageErr("--definitions: %v", err)
	}
	var head struct {
		Version string `json:"rabbitmq_version"`
		Vhosts  []struct {
			Name string `json:"name"`
		} `json:"vhosts"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return usageErr("--definitions %s is not a definitions file: %v", path, err)
	}
	running, _ := topology.ParseVersion(head.Version)
	vhosts := []string{vhost}
	if len(head.Vhosts) > 0 {
		vhosts = nil
		for _, hv := range head.Vhosts {
			vhosts = append(vhosts, hv.Name)
		}
	}
	checks := ops.Findings{}
	checks.Add("definitions", checkInfo, "%s, exported by RabbitMQ %s", path, orDash(head.Version))
	for _, vh := range vhosts {
		snap, err := broker.ParseDefinitions(data, vh)
		if err != nil {
			return usageErr("--definitions: %v", err)
		}
		found := topology.Discover(snap)
		inv := topology.TakeInventory(snap, found)
		checks = append(checks, ops.DelayChecks(ops.DelayArea(vh), inv, snap, found, running, target)...)
	}
	return v.printDoctor(checks)
}
