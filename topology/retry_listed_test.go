package topology_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// RetryListed judges a listing of every queue as the broker gives it
// (policy columns, messages_delayed) with the vhost's policies.
func TestRetryListed(t *testing.T) {
	v436 := topology.Version{Major: 4, Minor: 3, Patch: 6}
	retryDef := map[string]any{"delayed-retry-type": "failed", "delayed-retry-min": 3000.0, "delayed-retry-max": 9000.0}
	quorum := func(name string, args topology.Args) topology.Queue {
		if args == nil {
			args = topology.Args{}
		}
		args["x-queue-type"] = "quorum"
		return topology.Queue{Name: name, Args: args, Stats: topology.QueueStats{Type: "quorum", Ready: 4, Unacked: 1, Consumers: 2,
			Delayed: 7, DelayedReported: true, DeliveryLimit: 20, DeliveryLimitReported: true}}
	}
	// named is a queue as 4.3.6 lists it under a policy it names.
	named := func(q topology.Queue, policy, operator string, effective map[string]any) topology.Queue {
		q.Policy, q.OperatorPolicy, q.PolicyReported, q.EffectivePolicy = policy, operator, true, effective
		return q
	}
	byArg := quorum("by-arg", topology.Args{"x-delayed-retry-type": "all", "x-delayed-retry-min": int64(1000)})
	slow := topology.Policy{Name: "slow", Pattern: "^jobs\\.", ApplyTo: "quorum_queues", Definition: retryDef}
	ops := topology.Policy{Name: "ops", Pattern: "^audit$", ApplyTo: "queues", Definition: map[string]any{"delayed-retry-type": "returned", "delayed-retry-min": 500.0}}
	ps := topology.Policies{Policies: []topology.Policy{slow}, Operator: []topology.Policy{ops}}
	held := func(name, typ string, lo, hi time.Duration, source, policy string) topology.RetryQueue {
		return topology.RetryQueue{Name: name, Type: typ, Min: lo, Max: hi, Source: source, Policy: policy,
			Delayed: 7, Reported: true, Ready: 4, Unacked: 1, Consumers: 2, DeliveryLimit: 20, LimitKnown: true}
	}
	for name, tc := range map[string]struct {
		qs           []topology.Queue
		ps           topology.Policies
		held, unread []topology.RetryQueue
	}{
		"set by argument": {
			qs:   []topology.Queue{byArg},
			held: []topology.RetryQueue{held("by-arg", "all", time.Second, 0, "argument", "")},
		},
		"set by a policy the listing names": {
			qs: []topology.Queue{named(quorum("jobs.a", nil), "slow", "", retryDef)}, ps: ps,
			held: []topology.RetryQueue{held("jobs.a", "failed", 3*time.Second, 9*time.Second, "policy", "slow")},
		},
		"set by a policy, listed without the policy columns": {
			qs: []topology.Queue{quorum("jobs.b", nil)}, ps: ps,
			held: []topology.RetryQueue{held("jobs.b", "failed", 3*time.Second, 9*time.Second, "policy", "slow")},
		},
		"set by a policy the user may not list": {
			qs:   []topology.Queue{named(quorum("jobs.c", nil), "slow", "", retryDef)},
			held: []topology.RetryQueue{held("jobs.c", "failed", 3*time.Second, 9*time.Second, "policy", "slow")},
		},
		"set by an operator policy": {
			qs: []topology.Queue{named(quorum("audit", nil), "", "ops", ops.Definition)}, ps: ps,
			held: []topology.RetryQueue{held("audit", "returned", 500*time.Millisecond, 0, "operator policy", "ops")},
		},
		"a classic queue is left out, whatever sets it": {
			qs: []topology.Queue{
				{Name: "jobs.classic", Args: topology.Args{"x-delayed-retry-type": "all", "x-delayed-retry-min": int64(1000)}, Stats: topology.QueueStats{Type: "classic"}},
			},
			ps: ps,
		},
		"a policy whose pattern does not match": {
			qs: []topology.Queue{quorum("mail", nil), named(quorum("other", nil), "", "", nil)}, ps: ps,
		},
		"the listing gave no messages_delayed: its own page is read": {
			qs: []topology.Queue{func() topology.Queue {
				q := byArg
				q.Stats.Delayed, q.Stats.DelayedReported = 0, false
				return q
			}()},
			unread: []topology.RetryQueue{{Name: "by-arg", Type: "all", Min: time.Second, Source: "argument"}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			h, u := topology.RetryListed(tc.qs, tc.ps, v436)
			if !reflect.DeepEqual(h, tc.held) || !reflect.DeepEqual(u, tc.unread) {
				t.Errorf("RetryListed() =\n  %+v,\n  %+v\nwant\n  %+v,\n  %+v", h, u, tc.held, tc.unread)
			}
		})
	}
	// Before 4.3 no release has delayed retry; on 4.3.0 a policy's keys
	// are ignored (rabbitmq-server #16395).
	qs := []topology.Queue{byArg, named(quorum("jobs.a", nil), "slow", "", retryDef)}
	if h, u := topology.RetryListed(qs, ps, topology.Version{Major: 4, Minor: 0, Patch: 5}); h != nil || u != nil {
		t.Errorf("4.0.5: RetryListed() = %+v, %+v; want none", h, u)
	}
	h, _ := topology.RetryListed(qs, ps, topology.Version{Major: 4, Minor: 3, Patch: 0})
	if len(h) != 2 || h[0].Ignored || !h[1].Ignored {
		t.Errorf("4.3.0: RetryListed() = %+v; want the argument honoured, the policy ignored", h)
	}
}

// RetryNamed takes a queue by name only where a delayed-retry policy's
// pattern matches that one name: anchored at both ends, literal, case
// kept.
func TestRetryNamed(t *testing.T) {
	retry := map[string]any{"delayed-retry-type": "all", "delayed-retry-min": 1000}
	ps := topology.Policies{
		Policies: []topology.Policy{
			{Name: "a", Pattern: "^orders$", Definition: retry},
			{Name: "b", Pattern: `^billing\.in$`, ApplyTo: "quorum_queues", Definition: retry},
			{Name: "c", Pattern: "^jobs", Definition: retry},
			{Name: "d", Pattern: "orders$", Definition: retry},
			{Name: "e", Pattern: "^(?i)mail$", Definition: retry},
			{Name: "f", Pattern: "^x|y$", Definition: retry},
			{Name: "g", Pattern: "^plain$", Definition: map[string]any{"max-length": 10}},
			{Name: "h", Pattern: "^ex$", ApplyTo: "exchanges", Definition: retry},
			{Name: "i", Pattern: "^orders$", ApplyTo: "queues", Definition: retry},
		},
		Operator: []topology.Policy{{Name: "op", Pattern: "^audit$", Definition: retry}},
	}
	want := []string{"audit", "billing.in", "orders"}
	if got := topology.RetryNamed(ps, topology.Version{Major: 4, Minor: 3, Patch: 6}); !reflect.DeepEqual(got, want) {
		t.Errorf("RetryNamed = %q, want %q", got, want)
	}
	if got := topology.RetryNamed(ps, topology.Version{Major: 4, Minor: 0, Patch: 5}); got != nil {
		t.Errorf("4.0.5: RetryNamed = %q, want none", got)
	}
}
