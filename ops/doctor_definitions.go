package ops

import (
	"encoding/json"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// ParseTarget reads doctor's --target: a release such as 4.3 or 4.3.6;
// "" is none (the zero Version).
func ParseTarget(s string) (topology.Version, error) {
	if s == "" {
		return topology.Version{}, nil
	}
	v, ok := topology.ParseVersion(s)
	if !ok || !v.Known() {
		return v, badInput("--target %q is not a RabbitMQ release (try 4.3 or 4.3.6)", s)
	}
	return v, nil
}

// DefinitionsChecks checks the delays in an exported definitions file
// (rabbitmqctl export_definitions, or the management UI's export), read
// from path, without a broker: what an upgrade to target breaks, judged on
// the release that exported it. A file that lists no vhost is checked as
// vhost's. A file it cannot read is bad input.
func DefinitionsChecks(data []byte, path, vhost string, target topology.Version) (Findings, error) {
	var head struct {
		Version string `json:"rabbitmq_version"`
		Vhosts  []struct {
			Name string `json:"name"`
		} `json:"vhosts"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, badInput("--definitions %s is not a definitions file: %v", path, err)
	}
	running, _ := topology.ParseVersion(head.Version)
	vhosts := []string{vhost}
	if len(head.Vhosts) > 0 {
		vhosts = nil
		for _, hv := range head.Vhosts {
			vhosts = append(vhosts, hv.Name)
		}
	}
	exported := head.Version
	if exported == "" {
		exported = "-"
	}
	checks := Findings{}
	checks.Add("definitions", FindingInfo, "%s, exported by RabbitMQ %s", path, exported)
	for _, vh := range vhosts {
		snap, err := broker.ParseDefinitions(data, vh)
		if err != nil {
			return nil, badInput("--definitions: %v", err)
		}
		found := topology.Discover(snap)
		inv := topology.TakeInventory(snap, found)
		checks = append(checks, DelayChecks(DelayArea(vh), inv, snap, found, running, target)...)
	}
	return checks, nil
}
