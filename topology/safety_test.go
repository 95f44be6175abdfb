package topology

import "testing"

// The one layout-safety verdict: only ladders routed by BCC are at risk;
// 3.13.0 to 3.13.2 lose the keys at every dead-lettering, quorum rungs
// before 3.13 when a dead-lettering retries, and an unknown release is
// not assumed broken. NewLadderLayout follows it.
func TestRiskOn(t *testing.T) {
	v := func(s string) Version {
		out, _ := ParseVersion(s)
		return out
	}
	for _, tc := range []struct {
		layout string
		qt     QueueType
		ver    string
		want   LayoutRisk
	}{
		{"direct", Quorum, "3.13.1", LayoutBroken},
		{"direct", Classic, "3.13.0", LayoutBroken},
		{"direct", Quorum, "3.12.14", LayoutLosesOnRetry},
		{"direct", Classic, "3.12.14", LayoutSafe},
		{"direct", Quorum, "3.13.3", LayoutSafe},
		{"direct", Quorum, "", LayoutSafe},
		{"prefix", Quorum, "3.13.1", LayoutSafe},
		{"prefix", Quorum, "3.10.8", LayoutSafe},
	} {
		l := Ladder{Name: "jobs", Layout: tc.layout, QueueType: tc.qt}
		if got := l.RiskOn(v(tc.ver)); got != tc.want {
			t.Errorf("%s %s on %q: %v, want %v", tc.layout, tc.qt, tc.ver, got, tc.want)
		}
		if tc.layout == DefaultLayout {
			wantLayout := DefaultLayout
			if tc.want != LayoutSafe {
				wantLayout = "prefix"
			}
			if got := v(tc.ver).NewLadderLayout(tc.qt); got != wantLayout {
				t.Errorf("new %s ladder on %q: %s, want %s", tc.qt, tc.ver, got, wantLayout)
			}
		}
	}
}

// Conflicts names what the broker would refuse to declare again: a
// checked argument or the exchange type, not an argument it ignores.
func TestPlanConflicts(t *testing.T) {
	l, err := Ladder{Name: "jobs", Layout: "prefix", Levels: 2, Radix: 2}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	plan := l.Plan()
	snap := plan.Snapshot()
	if c := plan.Conflicts(snap); len(c) != 0 {
		t.Fatalf("its own plan conflicts: %v", c)
	}
	for i := range snap.Queues {
		if q := &snap.Queues[i]; q.Name == plan.Queues[0].Name {
			q.Args = Args{}
			for k, v := range plan.Queues[0].Args {
				q.Args[k] = v
			}
			q.Args["x-dead-letter-exchange"] = "elsewhere"
			q.Args["x-something-else"] = "ignored"
		}
	}
	for i := range snap.Exchanges {
		if x := &snap.Exchanges[i]; x.Name == plan.Exchanges[0].Name {
			x.Type = "headers"
		}
	}
	c := plan.Conflicts(snap)
	if len(c) != 2 || c[0].Object != "exchange" || c[1].Object != "queue" || c[1].Name != plan.Queues[0].Name {
		t.Fatalf("%+v", c)
	}
}
