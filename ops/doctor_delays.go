package ops

import (
	"fmt"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// checkDelays judges every vhost's delays outside ladders (TTL queues,
// retry tiers, plugin exchanges) against the running release and the
// upgrade's target (health.DelayFindings).
func checkDelays(f DoctorFacts, out *Findings) {
	for _, vh := range f.Vhosts {
		if !vh.DelaysRead {
			continue
		}
		area := DelayArea(vh.Vhost)
		if vh.DelaysErr != nil {
			out.Add(area, FindingWarn, "cannot take the inventory of delays: %v", vh.DelaysErr)
			continue
		}
		*out = append(*out, DelayChecks(area, vh.Delays, vh.DelaySnap, vh.Found, f.Version(), f.Target)...)
	}
}

// DelayArea is the report's area for one vhost's delays.
func DelayArea(vhost string) string {
	if vhost == "/" {
		return "delays"
	}
	return "delays (vhost " + vhost + ")"
}

// DelayChecks are the findings of one vhost's inventory: a summary of each
// group and plugin exchange, then what is at risk on running and target.
// doctor runs it on a broker and on an exported definitions file.
func DelayChecks(area string, inv topology.Inventory, snap topology.Snapshot, found []topology.Found, running, target topology.Version) Findings {
	var out Findings
	if inv.Empty() {
		out.Add(area, FindingOK, "no delays outside ladders (TTL queues, retry tiers, plugin exchanges)")
	}
	for _, g := range inv.Groups {
		out.Add(area, FindingInfo, "%s: %s", g.ID(), g.Describe())
	}
	for _, p := range inv.Plugins {
		out.Add(area, FindingInfo, "plugin exchange %s (x-delayed-message)", p.Name)
	}
	fs := health.DelayFindings(inv, snap, found, running, target)
	for _, f := range fs {
		status := FindingWarn
		if f.Severity == health.Problem {
			status = FindingProblem
		}
		when := ""
		switch {
		case !f.Today:
			when = fmt.Sprintf(" [on %s]", target)
		case f.OnTarget:
			when = fmt.Sprintf(" [today and on %s]", target)
		}
		out.Add(area, status, "%s: %s%s; fix: %s", f.Object, f.Risk, when, f.Fix)
	}
	if len(fs) == 0 && !inv.Empty() {
		on := ""
		if target.Known() {
			on = " on this release or " + target.String()
		}
		out.Add(area, FindingOK, "no delay at risk%s", on)
	}
	return out
}
