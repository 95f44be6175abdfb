package topology

import (
	"testing"
)

func mustVersion(t *testing.T, s string) Version {
	t.Helper()
	v, ok := ParseVersion(s)
	if !ok {
		t.Fatalf("ParseVersion(%q) failed", s)
	}
	return v
}

// For a quorum ladder of rungs' own layouts, apply places every queue's
// leader across the cluster (3.10 on) and, on a release whose quorum
// queues have a default delivery limit, declares the rungs and the
// unroutable queue without one; nothing else changes, and nothing changes
// elsewhere.
func TestForRelease(t *testing.T) {
	for _, layout := range []string{"direct", "prefix", "suffix"} {
		l := mustLadder(t, Ladder{Name: "j", Layout: layout, Levels: 3, Radix: 2, QueueType: Quorum})
		plan := l.Plan()
		for _, rel := range []string{"3.10.8", "3.13.7", "4.0.5", "4.2.1", "4.3.6"} {
			v := mustVersion(t, rel)
			p := plan.ForRelease(v)
			for i, q := range p.Queues {
				role, _, _ := l.QueueRole(q.Name)
				limit, hasLimit := q.Args["x-delivery-limit"]
				wantLimit := (role == RoleRung || role == RoleUnroutable) && v.Major >= 4
				if hasLimit != wantLimit || (hasLimit && limit != int64(-1)) {
					t.Errorf("%s on %s: %s (%s) has x-delivery-limit %v", layout, rel, q.Name, role, limit)
				}
				if q.Args["x-queue-leader-locator"] != "balanced" {
					t.Errorf("%s on %s: %s has x-queue-leader-locator %v", layout, rel, q.Name, q.Args["x-queue-leader-locator"])
				}
				want := 1
				if wantLimit {
					want = 2
				}
				if d := ArgsDiff(plan.Queues[i].Args, q.Args); len(d) != want {
					t.Errorf("%s on %s: %s differs from the plan by %v", layout, rel, q.Name, d)
				}
				if len(plan.Queues[i].Args) != len(q.Args)-want {
					t.Fatalf("ForRelease changed the plan it was called on: %s", q.Name)
				}
			}
		}
		for _, rel := range []string{"3.9.29", ""} {
			v, _ := ParseVersion(rel)
			if p := plan.ForRelease(v); len(ArgsDiff(p.Queues[0].Args, plan.Queues[0].Args)) != 0 {
				t.Errorf("%s on %q: %v", layout, rel, p.Queues[0].Args)
			}
		}
		classic := mustLadder(t, Ladder{Name: "j", Layout: layout, Levels: 3, Radix: 2, QueueType: Classic})
		for _, q := range classic.Plan().ForRelease(mustVersion(t, "4.0.5")).Queues {
			if len(ArgsDiff(q.Args, Args{})) != len(q.Args) || q.Args["x-delivery-limit"] != nil || q.Args["x-queue-leader-locator"] != nil {
				t.Errorf("classic %s: %s has %v", layout, q.Name, q.Args)
			}
		}
	}
	nsb := mustLadder(t, Ladder{Layout: "nsb", QueueType: Quorum})
	for _, q := range nsb.Plan().ForRelease(mustVersion(t, "4.0.5")).Queues {
		if q.Args["x-delivery-limit"] != nil || q.Args["x-queue-leader-locator"] != nil {
			t.Errorf("nsb: %s has arguments NServiceBus does not declare: %v", q.Name, q.Args)
		}
	}
}

// A ladder applied on 4.x has the argument, and one applied on 3.x or by
// an earlier rungs lacks it: neither is drift against a plan made with or
// without the release, and apply keeps what each queue has, since the
// broker refuses to declare it again otherwise. Another limit is drift.
func TestDeliveryLimitByReleaseIsNoDrift(t *testing.T) {
	l := mustLadder(t, Ladder{Name: "j", Layout: "prefix", Levels: 3, Radix: 2, QueueType: Quorum})
	plain := l.Plan()
	on4 := plain.ForRelease(mustVersion(t, "4.0.5"))
	for name, c := range map[string]struct{ plan, broker Plan }{
		"applied by an earlier rungs, planned on 4.0": {on4, plain},
		"applied on 4.0, planned without a release":   {plain, on4},
		"applied on 4.0, planned on 4.3":              {on4, on4},
	} {
		snap := c.broker.Snapshot()
		if d := Diff(c.plan, snap); len(d) != 0 {
			t.Errorf("%s: drift %v", name, d)
		}
		kept := c.plan.KeepingLegacyArgs(snap)
		for _, q := range kept.Queues {
			got, _ := snap.Queue(q.Name)
			if d := ArgsDiff(q.Args, got.Args); len(d) != 0 {
				t.Errorf("%s: %s would be declared again with other arguments: %v", name, q.Name, d)
			}
		}
		if c := kept.Conflicts(snap); len(c) != 0 {
			t.Errorf("%s: conflicts %v", name, c)
		}
	}
	// Another leader locator, or a limit an operator set, is drift, and a
	// conflict apply refuses.
	for key, value := range map[string]any{"x-queue-leader-locator": "client-local", "x-delivery-limit": int64(5)} {
		snap := on4.Snapshot()
		for i, q := range snap.Queues {
			if q.Name == "j.rung.00" {
				args := Args{}
				for k, v := range q.Args {
					args[k] = v
				}
				args[key] = value
				snap.Queues[i].Args = args
			}
		}
		for _, p := range []Plan{plain, on4} {
			if d := Diff(p, snap); len(d) != 1 {
				t.Errorf("a rung with %s %v: drift %v, want one", key, value, d)
			}
			if c := p.KeepingLegacyArgs(snap).Conflicts(snap); len(c) != 1 {
				t.Errorf("a rung with %s %v: conflicts %v, want one", key, value, c)
			}
		}
	}
}
