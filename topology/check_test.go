package topology

import (
	"strings"
	"testing"
	"time"
)

func TestCheckRoute(t *testing.T) {
	l, err := Ladder{Name: "jobs", Levels: 4, Radix: 2, Unit: time.Second}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := l.Trace(5*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	snap := l.Plan().Snapshot()
	if err := NewGraph(snap).CheckRoute(tr); err != nil {
		t.Fatalf("the plan itself routes differently: %v", err)
	}

	// A rung whose TTL a policy or an old declaration changed delays by
	// the wrong amount: the console's form must refuse it as the CLI does.
	wrong := l.Plan().Snapshot()
	for i, q := range wrong.Queues {
		if q.Name == tr.Hops[0].Queue {
			args := map[string]any{}
			for k, v := range q.Args {
				args[k] = v
			}
			args["x-message-ttl"] = int64(1)
			wrong.Queues[i].Args = args
		}
	}
	if err := NewGraph(wrong).CheckRoute(tr); err == nil || !strings.Contains(err.Error(), "has TTL 1ms on the broker") {
		t.Errorf("TTL drift: %v", err)
	}

	// Without the bindings nothing routes.
	bare := l.Plan().Snapshot()
	bare.Bindings = nil
	if err := NewGraph(bare).CheckRoute(tr); err == nil {
		t.Error("a ladder without bindings routed")
	}
}
