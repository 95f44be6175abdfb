package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/topology"
)

func (e *env) planCommand() *cobra.Command {
	var objects bool
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Show a ladder's plan and its drift from the broker (exit 3 on drift)",
		Long: `plan computes every object the ladder needs and compares it with what the
broker holds. It exits 0 when they match, 3 when they drift (missing,
extra or differently declared objects), so it can gate a deploy. When the
ladder exists on the broker, the shape flags not given are its discovered
ones, so --unit 2s shows the same ladder at 2s.`,
		Example: `  rungs plan --ladder jobs
  rungs plan --ladder jobs --unit 10ms --max-delay 1d --objects
  rungs plan --ladder jobs --json | jq .drift`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := e.resolveLadderFrom(cmd.Context(), e.checkSnapshot)
			if err != nil {
				return err
			}
			e.view().printLayoutNote(r)
			return e.view().printPlan(r, e.declaredPlan(cmd.Context(), r), objects)
		},
	}
	cmd.Flags().BoolVar(&objects, "objects", false, "list every exchange, queue and binding")
	cmd.Flags().StringSliceVar(&e.opts.ladder.targets, "target", nil, "destination queue expected to be bound (repeatable)")
	e.opts.ladder.registerStrategy(cmd.Flags(), true)
	return cmd
}

func (v view) printPlan(r resolved, plan topology.Plan, objects bool) error {
	var drift []topology.Drift
	if r.snap != nil {
		drift = topology.Diff(plan, *r.snap)
	}
	if v.json {
		type jx struct {
			Name string         `json:"name"`
			Type string         `json:"type"`
			Args map[string]any `json:"arguments"`
		}
		type jq struct {
			Name string         `json:"name"`
			Args map[string]any `json:"arguments"`
		}
		type jb struct {
			Source          string `json:"source"`
			Destination     string `json:"destination"`
			DestinationType string `json:"destination_type"`
			RoutingKey      string `json:"routing_key"`
		}
		out := struct {
			Ladder    jsonLadder  `json:"ladder"`
			Exchanges []jx        `json:"exchanges"`
			Queues    []jq        `json:"queues"`
			Bindings  []jb        `json:"bindings"`
			Checked   bool        `json:"checked"`
			Error     string      `json:"error,omitempty"`
			Drift     []jsonDrift `json:"drift"`
		}{Ladder: toJSONLadder(r.ladder), Checked: r.snap != nil, Drift: toJSONDrift(drift)}
		for _, x := range plan.Exchanges {
			out.Exchanges = append(out.Exchanges, jx{x.Name, x.Type, nonNil(x.Args)})
		}
		for _, q := range plan.Queues {
			out.Queues = append(out.Queues, jq{q.Name, nonNil(q.Args)})
		}
		for _, b := range plan.Bindings {
			out.Bindings = append(out.Bindings, jb{b.Source, b.Destination, b.DestinationType, b.RoutingKey})
		}
		if r.mgmtErr != nil {
			out.Error = r.mgmtErr.Error()
		}
		if err := writeJSON(v.Out, out); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(v.Out, describe(r.ladder))
		fmt.Fprintf(v.Out, "  %s, %s, %s; a random delay takes %.1f hops on average, %d at most\n",
			topology.Counted(len(plan.Exchanges), "exchange", "exchanges"), topology.Counted(len(plan.Queues), "queue", "queues"),
			topology.Counted(len(plan.Bindings), "binding", "bindings"), r.ladder.MeanHops(), r.ladder.Levels)
		if len(r.ladder.RadixCosts()) > 1 { // prefix and direct: the radix is a choice
			printRadixCosts(v, r.ladder)
		}
		if objects {
			w := table(v.Out)
			for _, x := range plan.Exchanges {
				fmt.Fprintf(w, "  exchange\t%s\t%s\t%s\n", x.Name, x.Type, x.Args)
			}
			for _, q := range plan.Queues {
				fmt.Fprintf(w, "  queue\t%s\t\t%s\n", q.Name, q.Args)
			}
			for _, b := range plan.Bindings {
				fmt.Fprintf(w, "  binding\t%s\t→ %s\t[%s]\n", b.Source, b.Destination, b.RoutingKey)
			}
			w.Flush()
		}
		if r.snap == nil {
			fmt.Fprintf(v.Err, "rungs: could not read the broker, drift not checked: %v\n", r.mgmtErr)
		} else {
			printDrift(v.Out, drift)
		}
	}
	if r.snap == nil {
		return &exitError{ExitError, nil}
	}
	if len(drift) > 0 {
		return &exitError{ExitDrift, nil}
	}
	return nil
}

func nonNil(a topology.Args) map[string]any {
	if a == nil {
		return map[string]any{}
	}
	return a
}

// printRadixCosts shows what the same range costs in each radix: a higher
// radix means fewer, cheaper hops (docs/benchmarks measures it) for more
// queues.
func printRadixCosts(v view, l topology.Ladder) {
	w := table(v.Out)
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
