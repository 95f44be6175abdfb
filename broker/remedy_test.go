package broker

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/topology"
)

func quorumRung(name, dlx string) topology.Queue {
	return topology.Queue{Name: name, Durable: true, Args: topology.Args{
		"x-queue-type": "quorum", "x-dead-letter-exchange": dlx, "x-dead-letter-strategy": "at-least-once",
	}}
}

func TestNudgePolicyChangesNothing(t *testing.T) {
	q := quorumRung("jobs.rung.03.1", "jobs.rung.03.expired")
	// No policy applies: ours only repeats the queue's own argument.
	p := nudgePolicy(q, "jobs.rung.03.expired", nil)
	want := topology.Policy{
		Name: NudgePolicyPrefix + "jobs.rung.03.1", Pattern: `^jobs\.rung\.03\.1$`, ApplyTo: "queues",
		Definition: map[string]any{"dead-letter-exchange": "jobs.rung.03.expired"},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("no policy before:\n got %+v\nwant %+v", p, want)
	}
	// A policy applies: ours repeats its definition at a higher priority,
	// so that the effective policy keeps its meaning. A leftover nudge
	// policy and non-matching ones are not copied.
	existing := []topology.Policy{
		{Name: "limits", Pattern: "^jobs\\.", ApplyTo: "queues", Priority: 3, Definition: map[string]any{"max-length": 1000.0}},
		{Name: "low", Pattern: ".*", ApplyTo: "all", Priority: 1, Definition: map[string]any{"expires": 5.0}},
		{Name: "classic-only", Pattern: ".*", ApplyTo: "classic_queues", Priority: 9, Definition: map[string]any{"max-length": 1.0}},
		{Name: NudgePolicyPrefix + "jobs.rung.03.1", Pattern: ".*", ApplyTo: "queues", Priority: 99, Definition: map[string]any{"x": 1}},
	}
	p = nudgePolicy(q, "jobs.rung.03.expired", existing)
	if p.Priority != 4 || !reflect.DeepEqual(p.Definition, map[string]any{"max-length": 1000.0, "dead-letter-exchange": "jobs.rung.03.expired"}) {
		t.Errorf("with policies: %+v", p)
	}
	if existing[0].Definition["dead-letter-exchange"] != nil {
		t.Error("nudgePolicy changed the existing policy's definition")
	}
	// A policy that sets a dead-letter exchange keeps its own value.
	existing = []topology.Policy{{Name: "dlx", Pattern: ".*", ApplyTo: "queues", Definition: map[string]any{"dead-letter-exchange": "other"}}}
	if p = nudgePolicy(q, "jobs.rung.03.expired", existing); p.Definition["dead-letter-exchange"] != "other" || p.Priority != 1 {
		t.Errorf("with a dead-letter policy: %+v", p)
	}
}

func TestRaftRestartExprQuotes(t *testing.T) {
	got := RaftRestartExpr(`v"1\`, "jobs.rung.03.1")
	for _, want := range []string{
		`rabbit_misc:r(<<"v\"1\\"/utf8>>, queue, <<"jobs.rung.03.1"/utf8>>)`,
		"ra:members(amqqueue:get_pid(Q))", "ra:stop_server(quorum_queues, Id)", "ra:restart_server(quorum_queues, Id)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("expression lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(erlBinary("a\nb"), "\n") {
		t.Error("a control character must be escaped")
	}
}
