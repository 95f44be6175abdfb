package cli

import (
	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
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
	c := ops.CheckDrift(plan, r.snap, r.mgmtErr)
	out := struct {
		Ladder    jsonLadder            `json:"ladder"`
		Exchanges []ui.PlanExchangeJSON `json:"exchanges"`
		Queues    []ui.PlanQueueJSON    `json:"queues"`
		Bindings  []ui.PlanBindingJSON  `json:"bindings"`
		Checked   bool                  `json:"checked"`
		Error     string                `json:"error,omitempty"`
		Drift     []jsonDrift           `json:"drift"`
	}{Ladder: toJSONLadder(r.ladder), Checked: c.Checked, Error: c.ErrText(), Drift: toJSONDrift(c.Drift)}
	out.Exchanges, out.Queues, out.Bindings = ui.PlanObjectsJSON(plan)
	if err := v.emit(out, ui.PlanText(r.ladder, plan, objects)); err != nil {
		return err
	}
	// What could not be checked goes to stderr, so that stdout stays a
	// plan and its drift.
	drift, unchecked := ui.PlanDriftText(c)
	v.textOnly(v.Err, unchecked)
	v.textOnly(v.Out, drift)
	return exitWith(c.PlanExit())
}

// exitWith ends a command with code, ops.ExitOK being no error.
func exitWith(code int) error {
	if code == ops.ExitOK {
		return nil
	}
	return &exitError{code, nil}
}
