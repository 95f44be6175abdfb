package ui

import (
	"fmt"
	"io"
	"strings"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// PlanText is `rungs plan`'s text before the drift: the ladder, what its
// plan declares, what another radix would cost and, with objects, every
// object of the plan.
func PlanText(l topology.Ladder, plan topology.Plan, objects bool) string {
	var b strings.Builder
	fmt.Fprintln(&b, l.Describe())
	fmt.Fprintf(&b, "  %s, %s, %s; a random delay takes %.1f hops on average, %d at most\n",
		topology.Counted(len(plan.Exchanges), "exchange", "exchanges"), topology.Counted(len(plan.Queues), "queue", "queues"),
		topology.Counted(len(plan.Bindings), "binding", "bindings"), l.MeanHops(), l.Levels)
	if len(l.RadixCosts()) > 1 { // prefix and direct: the radix is a choice
		WriteRadixCosts(&b, l)
	}
	if objects {
		w := TextTable(&b)
		for _, x := range plan.Exchanges {
			fmt.Fprintf(w, "  exchange\t%s\t%s\t%s\n", x.Name, x.Type, x.Args)
		}
		for _, q := range plan.Queues {
			fmt.Fprintf(w, "  queue\t%s\t\t%s\n", q.Name, q.Args)
		}
		for _, bd := range plan.Bindings {
			fmt.Fprintf(w, "  binding\t%s\t→ %s\t[%s]\n", bd.Source, bd.Destination, bd.RoutingKey)
		}
		w.Flush()
	}
	return b.String()
}

// WriteRadixCosts shows what the same range costs in each radix: a higher
// radix means fewer, cheaper hops (docs/benchmarks measures it) for more
// queues.
func WriteRadixCosts(out io.Writer, l topology.Ladder) {
	w := TextTable(out)
	fmt.Fprintln(w, "  radix\tlevels\trungs\tbindings\tmean hops\tmax hops\t")
	for _, c := range l.RadixCosts() {
		mark := ""
		if c.Radix == l.Radix {
			mark = "← this ladder"
		}
		fmt.Fprintf(w, "  %d\t%d\t%d\t%d\t%.1f\t%d\t%s\n", c.Radix, c.Levels, c.Cost.Rungs, c.Cost.Bindings, c.Cost.MeanHops, c.Cost.MaxHops, mark)
	}
	w.Flush()
}

// DriftText lists how the broker differs from a plan.
func DriftText(ds []topology.Drift) string {
	if len(ds) == 0 {
		return "drift: none, the broker matches the plan\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "drift: %d difference(s)\n", len(ds))
	for _, d := range ds {
		fmt.Fprintln(&b, "  "+d.String())
	}
	return b.String()
}

// PlanDriftText is the end of `rungs plan`'s text: the drift for the
// output, or for the error stream why it was not checked.
func PlanDriftText(c ops.DriftCheck) (out, errs string) {
	if !c.Checked {
		return "", fmt.Sprintf("rungs: could not read the broker, drift not checked: %v\n", c.Err)
	}
	return DriftText(c.Drift), ""
}

// AppliedText is what `rungs apply` declared, before its verification.
func AppliedText(l topology.Ladder, res broker.ApplyResult) string {
	return fmt.Sprintf("applied %s\n  %s, %s, %s declared\n", l.Describe(),
		topology.Counted(res.Exchanges, "exchange", "exchanges"), topology.Counted(res.Queues, "queue", "queues"), topology.Counted(res.Bindings, "binding", "bindings"))
}

// UnstallAppliedText says what unstall's remedy did to one rung.
func UnstallAppliedText(a ops.Applied) string {
	switch a.Remedy {
	case topology.RemedyLeaderMove:
		return fmt.Sprintf("%s: moved its leader from %s to %s (%s is a follower again)\n", a.Queue, a.From, a.To, a.From)
	case topology.RemedyPolicy:
		return fmt.Sprintf("%s: declared policy %s\n", a.Queue, a.Policy)
	}
	return fmt.Sprintf("%s: restarted Ra member %s\n", a.Queue, a.Member)
}

// UnstallDrainingText says that a rung drains again.
func UnstallDrainingText(d ops.Drained) string {
	return fmt.Sprintf("%s: draining, %s waiting to be dead-lettered (was %s)\n", d.Queue.Name,
		topology.FormatCount(d.Now.Stats.Expired), topology.FormatCount(d.Before))
}

// UnstallHintText says what to run on the node where the policy did not
// help (still's hint).
func UnstallHintText(still *ops.StillStalledError) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v; on the node, run:\n", still)
	for _, h := range still.Hint {
		fmt.Fprintln(&b, "  "+h)
	}
	fmt.Fprintln(&b, "or run unstall again with --rabbitmqctl PREFIX")
	return b.String()
}

// ParkedText says where reroute --park routed each lost destination.
func ParkedText(req ops.RerouteRequest) string {
	var b strings.Builder
	for i, d := range req.Parked {
		fmt.Fprintf(&b, "%s: parked in %s (replay them from there once %s is back)\n", d, req.Park.Queues[i].Name, d)
	}
	return b.String()
}

// DiscoveredText is discover's table, one ladder a line, or that there
// is none where it looked.
func DiscoveredText(states []health.LadderReport, where string) string {
	if len(states) == 0 {
		return fmt.Sprintf("no ladders in %s\n", where)
	}
	var b strings.Builder
	w := TextTable(&b)
	fmt.Fprintln(w, "vhost\tladder\tlayout\tunit\tlevels\tmax delay\tqueues\tin flight\tunroutable\tstalled\tdrift\ttargets")
	for _, st := range states {
		l, tt := st.Found.Ladder, st.Totals
		levels := fmt.Sprintf("%d", l.Levels)
		if l.Radix != 2 {
			levels += fmt.Sprintf("×r%d", l.Radix)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", l.Vhost, l.Name, l.Layout, topology.FormatDelay(l.Unit), levels,
			topology.FormatDelay(l.MaxDelay()), l.RungKind(), tt.InFlight, tt.Unroutable, tt.Stalled, tt.Drift, strings.Join(l.Targets, ","))
	}
	w.Flush()
	return b.String()
}
