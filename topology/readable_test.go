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

// On a release whose quorum queues have a default delivery limit, apply
// declares the rungs and the unroutable queue of rungs' own quorum ladders
// without one; nothing else changes, and nothing changes elsewhere.
func TestForReleaseTurnsTheDefaultLimitOffWhereOneExists(t *testing.T) {
	for _, layout := range []string{"direct", "prefix", "suffix"} {
		l := mustLadder(t, Ladder{Name: "j", Layout: layout, Levels: 3, Radix: 2, QueueType: Quorum})
		plan := l.Plan()
		for _, rel := range []string{"4.0.5", "4.2.1", "4.3.6"} {
			p := plan.ForRelease(mustVersion(t, rel))
			for i, q := range p.Queues {
				role, _, _ := l.QueueRole(q.Name)
				limit, has := q.Args["x-delivery-limit"]
				want := role == RoleRung || role == RoleUnroutable
				if has != want || (has && limit != int64(-1)) {
					t.Errorf("%s on %s: %s (%s) has x-delivery-limit %v", layout, rel, q.Name, role, limit)
				}
				if d := ArgsDiff(plan.Queues[i].Args, q.Args); len(d) > 1 || (len(d) == 1) != want {
					t.Errorf("%s on %s: %s differs from the plan by %v", layout, rel, q.Name, d)
				}
				if _, touched := plan.Queues[i].Args["x-delivery-limit"]; touched {
					t.Fatalf("ForRelease changed the plan it was called on: %s", q.Name)
				}
			}
		}
		for _, rel := range []string{"3.10.8", "3.13.7", ""} {
			v, _ := ParseVersion(rel)
			for _, q := range plan.ForRelease(v).Queues {
				if _, has := q.Args["x-delivery-limit"]; has {
					t.Errorf("%s on %q: %s has a delivery limit argument (3.x dead-letters at the first hand-back with -1)", layout, rel, q.Name)
				}
			}
		}
		classic := mustLadder(t, Ladder{Name: "j", Layout: layout, Levels: 3, Radix: 2, QueueType: Classic})
		for _, q := range classic.Plan().ForRelease(mustVersion(t, "4.0.5")).Queues {
			if _, has := q.Args["x-delivery-limit"]; has {
				t.Errorf("classic %s: %s has a delivery limit argument", layout, q.Name)
			}
		}
	}
	nsb := mustLadder(t, Ladder{Layout: "nsb", QueueType: Quorum})
	for _, q := range nsb.Plan().ForRelease(mustVersion(t, "4.0.5")).Queues {
		if _, has := q.Args["x-delivery-limit"]; has {
			t.Errorf("nsb: %s has a delivery limit argument NServiceBus does not declare", q.Name)
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
	// A limit an operator set is drift, and a conflict apply refuses.
	snap := on4.Snapshot()
	for i, q := range snap.Queues {
		if q.Name == "j.rung.00" {
			args := Args{}
			for k, v := range q.Args {
				args[k] = v
			}
			args["x-delivery-limit"] = int64(5)
			snap.Queues[i].Args = args
		}
	}
	for _, p := range []Plan{plain, on4} {
		if d := Diff(p, snap); len(d) != 1 {
			t.Errorf("a rung with a limit of 5: drift %v, want one", d)
		}
		if c := p.KeepingLegacyArgs(snap).Conflicts(snap); len(c) != 1 {
			t.Errorf("a rung with a limit of 5: conflicts %v, want one", c)
		}
	}
}
