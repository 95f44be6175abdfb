package topology

import (
	"strings"
	"testing"
)

// A quorum ladder's done and unroutable queues dead-letter nowhere, so
// they get no dead-letter strategy (RabbitMQ 4.0 logs a warning every few
// seconds for one that has it); its rungs keep at-least-once.
func TestTerminalQueuesHaveNoDeadLetterStrategy(t *testing.T) {
	for _, layout := range []string{"direct", "prefix", "suffix"} {
		l := mustLadder(t, Ladder{Name: "j", Layout: layout, Levels: 3, Radix: 2, QueueType: Quorum})
		for _, q := range l.Plan().Queues {
			_, dlx := q.Args["x-dead-letter-exchange"]
			strategy, has := q.Args["x-dead-letter-strategy"]
			if dlx != has || (has && strategy != "at-least-once") {
				t.Errorf("%s %s: dead-letter exchange %v, strategy %v", layout, q.Name, dlx, q.Args["x-dead-letter-strategy"])
			}
		}
	}
}

// A ladder an earlier rungs declared has the strategy on its done and
// unroutable queues: that is no drift, and applying keeps it (the broker
// refuses a re-declare without it). Anything else about it still is drift.
func TestLegacyStrategyIsNoDrift(t *testing.T) {
	l := mustLadder(t, Ladder{Name: "j", Layout: "direct", Levels: 3, Radix: 2, QueueType: Quorum})
	plan := l.Plan()
	old := plan.Snapshot()
	for i, q := range old.Queues {
		if q.Name == "j.done" || q.Name == "j.unroutable" {
			args := Args{}
			for k, v := range q.Args {
				args[k] = v
			}
			args["x-dead-letter-strategy"] = "at-least-once"
			old.Queues[i].Args = args
		}
	}
	if d := Diff(plan, old); len(d) != 0 {
		t.Fatalf("a ladder of an earlier rungs drifts: %v", d)
	}
	kept := plan.KeepingLegacyArgs(old)
	for _, q := range kept.Queues {
		got, _ := old.Queue(q.Name)
		if d := ArgsDiff(q.Args, got.Args); len(d) != 0 {
			t.Errorf("%s would be re-declared with other arguments: %v", q.Name, d)
		}
	}
	for _, q := range plan.Queues {
		if _, has := q.Args["x-dead-letter-strategy"]; has && (q.Name == "j.done" || q.Name == "j.unroutable") {
			t.Errorf("KeepingLegacyArgs changed the plan it was called on: %s", q.Name)
		}
	}
	// Another value, or the strategy gone from a rung, is drift.
	for i, q := range old.Queues {
		switch q.Name {
		case "j.done":
			old.Queues[i].Args["x-dead-letter-strategy"] = "at-most-once"
		case "j.rung.00":
			args := Args{}
			for k, v := range q.Args {
				if k != "x-dead-letter-strategy" {
					args[k] = v
				}
			}
			old.Queues[i].Args = args
		}
	}
	d := Diff(plan, old)
	text := ""
	for _, x := range d {
		text += x.String() + "\n"
	}
	for _, want := range []string{"j.done", "j.rung.00"} {
		if !strings.Contains(text, want) {
			t.Errorf("no drift reported for %s:\n%s", want, text)
		}
	}
}
