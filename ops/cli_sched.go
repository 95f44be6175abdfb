package ops

import (
	"fmt"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// Decisions of the CLI's migrate, purge, teardown and console context
// commands that are the operation's, not the command line's.

// RefuseReadOnly refuses a migration under --read-only; a dry run moves
// nothing, so it is never refused.
func (in MigrateInput) RefuseReadOnly(cfg broker.Config) error {
	if in.DryRun {
		return nil
	}
	return RefuseReadOnly(cfg, "migrate")
}

// Question is what is asked before the plan runs; limit is --limit (0:
// all), which only a ladder's migration names.
func (mp MigratePlan) Question(limit int) string {
	if mp.Group != nil {
		return fmt.Sprintf("migrate about %d message(s) from the %d delay queue(s) of %s\n  into %s;\n  messages it cannot take go to %s",
			mp.Ready, len(mp.Rungs), mp.Source(), mp.Migration.To.Describe(), mp.Park)
	}
	what := fmt.Sprintf("migrate about %d message(s) in flight from %s\n  into %s;\n  messages it cannot take go to %s",
		mp.Ready, mp.Migration.From.Describe(), mp.Migration.To.Describe(), mp.Park)
	if limit > 0 {
		what += fmt.Sprintf(" (at most %d messages)", limit)
	}
	return what
}

// Word is what a typed confirmation asks for: the delay group's name, or
// the source ladder's.
func (mp MigratePlan) Word() string {
	if mp.Group != nil {
		return mp.Group.Name
	}
	return mp.Migration.From.Name
}

// WithArgs is ask for a purge's arguments: the QUEUE, when one is given.
func (a PurgeAsk) WithArgs(args []string) PurgeAsk {
	if len(args) == 1 {
		a.Queue = args[0]
	}
	return a
}

// Failure is why a purge stopped (nil when it did not), naming the queue
// that failed and what earlier queues lost already.
func (r PurgeResult) Failure(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("purge %s (after %d messages from earlier queues): %w", r.Failed, r.Purged, err)
}

// TeardownPlan is what a teardown deletes and what it loses.
type TeardownPlan struct {
	Ladder   topology.Ladder
	Plan     topology.Plan
	InFlight int64
}

// TeardownAsk is what a teardown was resolved from: the ladder, the
// snapshot it was looked up in (nil when the management API could not be
// read), whether it was found there, and how its absence reads.
type TeardownAsk struct {
	Ladder   topology.Ladder
	Snap     *topology.Snapshot
	Found    bool
	NotFound string
}

// PlanTeardown refuses a ladder that a snapshot did not find (without a
// snapshot the operator's word is taken) and counts what is in flight.
func PlanTeardown(a TeardownAsk) (TeardownPlan, error) {
	if a.Snap != nil && !a.Found {
		return TeardownPlan{}, fmt.Errorf("%s; nothing was deleted", a.NotFound)
	}
	p := TeardownPlan{Ladder: a.Ladder, Plan: a.Ladder.Plan()}
	if a.Snap != nil {
		// Judged on its own, without history: only the count matters here.
		p.InFlight = health.NewReport([]topology.Found{{Ladder: a.Ladder}}, *a.Snap, health.Watch{}).Ladders[0].Totals.InFlight
	}
	return p, nil
}

// Question is what is asked before the teardown runs.
func (p TeardownPlan) Question() string {
	return fmt.Sprintf("teardown %s: delete %d queues and %d exchanges; %d message(s) in flight will be lost",
		p.Ladder.Describe(), len(p.Plan.Queues), len(p.Plan.Exchanges), p.InFlight)
}

// Failure is why the teardown failed, nil when it did not.
func (p TeardownPlan) Failure(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("teardown %s: %w", p.Ladder.Name, err)
}

// ContextSource is the config source the console's `:ctx NAME` resolves
// through: the variables that chose the first broker read as unset, or
// every context would be pinned to the same broker; the others (the
// config file's path among them) carry over.
func ContextSource(getenv func(string) string, pathFlag, name string) ConfigSource {
	return ConfigSource{Getenv: func(k string) string {
		switch k {
		case "RUNGS_URL", "RUNGS_MGMT_URL", "RUNGS_VHOST", "RUNGS_CONTEXT":
			return ""
		}
		return getenv(k)
	}, PathFlag: pathFlag, ContextFlag: name}
}

// CarryReadOnly keeps read-only on a context switched to when the first
// broker was read-only because --read-only asked for it, whatever the
// context says.
func CarryReadOnly(cfg broker.Config, first broker.Config, asked bool) broker.Config {
	if first.ReadOnly && asked {
		cfg.ReadOnly = true
	}
	return cfg
}
