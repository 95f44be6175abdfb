package ops

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// besideFake answers the policies and queues by name, and records what
// it was asked.
type besideFake struct {
	ps       topology.Policies
	psErr    error
	queues   map[string]topology.Queue
	policies int
	asked    []string
}

func (f *besideFake) Policies(context.Context, string) (topology.Policies, error) {
	f.policies++
	return f.ps, f.psErr
}

func (f *besideFake) QueueStats(_ context.Context, _ string, names []string) ([]topology.Queue, error) {
	var out []topology.Queue
	for _, n := range names {
		f.asked = append(f.asked, n)
		if q, ok := f.queues[n]; ok {
			out = append(out, q)
		}
	}
	return out, nil
}

func quorum(name string, args topology.Args, policy string, effective map[string]any, delayed int64, reported bool) topology.Queue {
	if args == nil {
		args = topology.Args{}
	}
	args["x-queue-type"] = "quorum"
	q := topology.Queue{Name: name, Args: args, Policy: policy, PolicyReported: policy != "", EffectivePolicy: effective,
		Stats: topology.QueueStats{Type: "quorum", Delayed: delayed, DelayedReported: reported}}
	return q
}

// ReadRetryBeside takes the ladders' queues as read, with the broker's
// word on their policies, reads by name the queues a policy names by
// ^name$ and a candidate whose read lacked messages_delayed, and asks
// nothing where no delayed retry can be: before 4.3, or beside a ladder
// without a quorum queue.
func TestReadRetryBeside(t *testing.T) {
	v436 := topology.Version{Major: 4, Minor: 3, Patch: 6}
	retry := map[string]any{"delayed-retry-type": "all", "delayed-retry-min": 1000}
	ps := topology.Policies{Policies: []topology.Policy{
		{Name: "wide", Pattern: "^(orders|jobs.*)$", Definition: retry},
		{Name: "named", Pattern: "^named$", Definition: retry},
	}}
	ladder := []topology.Queue{
		quorum("jobs.rung.0", nil, "", map[string]any{}, 0, true), // the broker says: no policy
		quorum("orders", nil, "wide", retry, 2, true),
		quorum("mail", topology.Args{"x-delayed-retry-type": "all", "x-delayed-retry-min": 500}, "", map[string]any{}, 0, false),
	}
	f := &besideFake{ps: ps, queues: map[string]topology.Queue{
		"named": quorum("named", nil, "named", retry, 1, true),
		"mail":  quorum("mail", topology.Args{"x-delayed-retry-type": "all", "x-delayed-retry-min": 500}, "", map[string]any{}, 3, true),
	}}
	versions := 0
	version := func() (topology.Version, error) { versions++; return v436, nil }

	h, err := ReadRetryBeside(context.Background(), f, version, "/", ladder, true)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, q := range h.Queues {
		got[q.Name] = q.Delayed
	}
	if len(got) != 3 || got["orders"] != 2 || got["mail"] != 3 || got["named"] != 1 || h.Delayed != 6 {
		t.Errorf("held %v (%d), want orders 2, mail 3 (its own page), named 1", got, h.Delayed)
	}
	if !slices.Equal(f.asked, []string{"named", "mail"}) || f.policies != 1 {
		t.Errorf("asked %q and the policies %d times, want named and mail by name, the policies once", f.asked, f.policies)
	}
	if sc := h.Scope; !sc.Ladders || sc.Queues != 3 || !slices.Equal(sc.Named, []string{"named"}) || sc.PoliciesUnread {
		t.Errorf("scope %+v", sc)
	}

	// With --ladder: no policies, no queue outside the ladder.
	f.asked, f.policies = nil, 0
	h, err = ReadRetryBeside(context.Background(), f, version, "/", ladder, false)
	if err != nil || len(h.Queues) != 2 || f.policies != 0 || !slices.Equal(f.asked, []string{"mail"}) {
		t.Errorf("--ladder: %+v %v, asked %q, policies %d", h.Queues, err, f.asked, f.policies)
	}

	// A user who may not list policies still sees the ladders' queues.
	f.asked, f.psErr = nil, broker.ErrUnauthorized
	if h, err = ReadRetryBeside(context.Background(), f, version, "/", ladder, true); err != nil || len(h.Queues) != 2 || !h.Scope.PoliciesUnread {
		t.Errorf("policies unreadable: %+v %v", h, err)
	}
	f.psErr = errors.New("boom")
	if _, err = ReadRetryBeside(context.Background(), f, version, "/", ladder, true); err == nil {
		t.Error("a failed policies read is no error")
	}
	f.psErr = nil

	// Before 4.3, or beside classic queues only: nothing read.
	f.asked, f.policies, versions = nil, 0, 0
	old := func() (topology.Version, error) {
		versions++
		return topology.Version{Major: 4, Minor: 0, Patch: 5}, nil
	}
	if h, err = ReadRetryBeside(context.Background(), f, old, "/", ladder, true); err != nil || h.Read || f.policies != 0 || len(f.asked) != 0 {
		t.Errorf("4.0.5: %+v %v, asked %q, policies %d", h, err, f.asked, f.policies)
	}
	classic := []topology.Queue{{Name: "jobs.rung.0", Stats: topology.QueueStats{Type: "classic"}}}
	versions = 0
	if h, err = ReadRetryBeside(context.Background(), f, version, "/", classic, false); err != nil || h.Read || versions != 0 {
		t.Errorf("classic ladder: %+v %v, version asked %d times", h, err, versions)
	}
}
