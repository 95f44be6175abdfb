package broker

import (
	"context"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/rungs-dev/rungs/topology"
)

// FeatureFlag is one of the broker's feature flags (GET /api/feature-flags).
type FeatureFlag struct {
	Name      string `json:"name"`
	State     string `json:"state"` // enabled, disabled, unavailable
	Stability string `json:"stability"`
	Desc      string `json:"desc"`
}

// Enabled reports whether the flag is on.
func (f FeatureFlag) Enabled() bool { return f.State == "enabled" }

// FeatureFlags lists the broker's feature flags, sorted by name. Listing
// them needs the management user to be an administrator or monitoring user.
func (m *Management) FeatureFlags(ctx context.Context) ([]FeatureFlag, error) {
	var ffs []FeatureFlag
	if err := m.get(ctx, "feature-flags", nil, &ffs); err != nil {
		return nil, err
	}
	sort.Slice(ffs, func(i, j int) bool { return ffs[i].Name < ffs[j].Name })
	return ffs, nil
}

// Node is one cluster node and the plugins running on it.
type Node struct {
	Name    string
	Running bool
	// Plugins are the rabbitmq_* applications the node runs (enabled
	// plugins and their dependencies), sorted.
	Plugins []string
	// OSPid is the node's operating-system process id, meaningful on its
	// own machine only (0 when not reported).
	OSPid int
	// Version is the node's RabbitMQ release (its rabbit application's
	// version); zero while the node has not reported its applications.
	Version topology.Version
	// ConfigFiles are the configuration files the node read
	// (rabbitmq.conf, advanced.config). The management API shows which
	// files, not the settings in them: an advanced.config is where the
	// settings rabbitmq.conf cannot carry live, the quorum dead-letter
	// worker's prefetch among them.
	ConfigFiles []string
}

// Nodes lists the cluster's nodes with their running plugins, in one
// request (GET /api/nodes with the columns parameter).
func (m *Management) Nodes(ctx context.Context) ([]Node, error) {
	var ns []struct {
		Name         string   `json:"name"`
		Running      bool     `json:"running"`
		ConfigFiles  []string `json:"config_files"`
		OSPid        string   `json:"os_pid"`
		Applications []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"applications"`
	}
	if err := m.get(ctx, "nodes", url.Values{"columns": {"name,running,applications,config_files,os_pid"}}, &ns); err != nil {
		return nil, err
	}
	out := make([]Node, 0, len(ns))
	for _, n := range ns {
		node := Node{Name: n.Name, Running: n.Running, ConfigFiles: n.ConfigFiles}
		node.OSPid, _ = strconv.Atoi(n.OSPid)
		for _, a := range n.Applications {
			if a.Name == "rabbit" {
				node.Version, _ = topology.ParseVersion(a.Version)
			}
			// rabbitmq_prelaunch is the core's boot application, not a plugin.
			if strings.HasPrefix(a.Name, "rabbitmq_") && a.Name != "rabbitmq_prelaunch" {
				node.Plugins = append(node.Plugins, a.Name)
			}
		}
		sort.Strings(node.Plugins)
		out = append(out, node)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
