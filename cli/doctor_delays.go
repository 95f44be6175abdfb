package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
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

// checkDelays adds the delay findings of each vhost (health.DelayFindings)
// to the doctor's report: the vhost's delay inventory beside the ladders
// found there, against the running release and --target.
func (e *env) checkDelays(ctx context.Context, m *broker.Management, vhosts []string, found []topology.Found, observers map[string]ops.Observer, running, target topology.Version, add func(area, status, format string, a ...any)) {
	for _, vh := range vhosts {
		cctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
		inv, snap, err := ops.Delays(cctx, m, vh, found)
		cancel()
		area := "delays"
		if vh != "/" {
			area += " (vhost " + vh + ")"
		}
		if err != nil {
			add(area, checkWarn, "cannot take the inventory of delays: %v", err)
			continue
		}
		if o, ok := observers[vh]; ok {
			snap = snap.Merge(o.Report(o.At()).Snapshot)
		}
		var here []topology.Found
		for _, f := range found {
			if f.Ladder.Vhost == vh {
				here = append(here, f)
			}
		}
		addDelayFindings(area, inv, health.DelayFindings(inv, snap, here, running, target), target, add)
	}
}

// addDelayFindings writes the inventory's summary and its findings.
func addDelayFindings(area string, inv topology.Inventory, fs []health.DelayFinding, target topology.Version, add func(area, status, format string, a ...any)) {
	if inv.Empty() {
		add(area, checkOK, "no delays outside ladders (TTL queues, retry tiers, plugin exchanges)")
	}
	for _, g := range inv.Groups {
		add(area, checkInfo, "%s: %s", g.ID(), g.Describe())
	}
	for _, p := range inv.Plugins {
		add(area, checkInfo, "plugin exchange %s (x-delayed-message)", p.Name)
	}
	for _, f := range fs {
		status := checkWarn
		if f.Severity == health.Problem {
			status = checkProblem
		}
		when := ""
		switch {
		case !f.Today:
			when = fmt.Sprintf(" [on %s]", target)
		case f.OnTarget:
			when = fmt.Sprintf(" [today and on %s]", target)
		}
		add(area, status, "%s: %s%s; fix: %s", f.Object, f.Risk, when, f.Fix)
	}
	if len(fs) == 0 && !inv.Empty() {
		add(area, checkOK, "no delay at risk%s", onTarget(target))
	}
}

func onTarget(t topology.Version) string {
	if !t.Known() {
		return ""
	}
	return " on this release or " + t.String()
}

// doctorDefinitions checks the delays in an exported definitions file
// (rabbitmqctl export_definitions, or the management UI's export) without
// a broker: what an upgrade to --target breaks, judged on the release that
// exported it.
func (e *env) doctorDefinitions(path string, target topology.Version) error {
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
	vhosts := []string{e.vhost()}
	if len(head.Vhosts) > 0 {
		vhosts = nil
		for _, v := range head.Vhosts {
			vhosts = append(vhosts, v.Name)
		}
	}
	var checks []check
	add := func(area, status, format string, a ...any) {
		checks = append(checks, check{area, status, fmt.Sprintf(format, a...)})
	}
	add("definitions", checkInfo, "%s, exported by RabbitMQ %s", path, orDash(head.Version))
	for _, vh := range vhosts {
		snap, err := broker.ParseDefinitions(data, vh)
		if err != nil {
			return usageErr("--definitions: %v", err)
		}
		found := topology.Discover(snap)
		inv := topology.TakeInventory(snap, found)
		area := "delays"
		if vh != "/" {
			area += " (vhost " + vh + ")"
		}
		addDelayFindings(area, inv, health.DelayFindings(inv, snap, found, running, target), target, add)
	}
	problems := 0
	for _, c := range checks {
		if c.Status == checkProblem {
			problems++
		}
	}
	if e.opts.json {
		if err := writeJSON(e.Out, map[string]any{"ok": problems == 0, "problems": problems, "checks": checks}); err != nil {
			return err
		}
	} else {
		printChecks(e, checks, problems)
	}
	if problems > 0 {
		return &exitError{ExitError, nil}
	}
	return nil
}
