package ops

import (
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

func strategyLadders(t *testing.T) (alo, amo topology.Ladder) {
	t.Helper()
	var err error
	if alo, err = (topology.Ladder{Name: "bursts", Vhost: "/", Levels: 3, Radix: 4, QueueType: topology.Quorum}).Normalize(); err != nil {
		t.Fatal(err)
	}
	amo = alo
	amo.AtMostOnce = true
	return alo, amo
}

// The strategy is the ladder's, as its queue type is: kept from the
// ladder found when the flag is not given, refused with classic rungs.
func TestLadderSpecStrategy(t *testing.T) {
	_, amo := strategyLadders(t)
	spec := LadderSpec{Name: "bursts", Given: map[string]bool{}}
	if l, err := spec.Ladder("/", &amo); err != nil || !l.AtMostOnce {
		t.Errorf("without the flag: %+v, %v", l, err)
	}
	spec.Given["dead-letter-strategy"] = true
	if l, err := spec.Ladder("/", &amo); err != nil || l.AtMostOnce {
		t.Errorf("--dead-letter-strategy at-least-once: %+v, %v", l, err)
	}
	spec.AtMostOnce = true
	if l, err := spec.Ladder("/", nil); err != nil || !l.AtMostOnce || l.QueueType != topology.Quorum {
		t.Errorf("a new ladder at most once: %+v, %v", l, err)
	}
	spec.QueueType, spec.Given["queue-type"] = topology.Classic, true
	if _, err := spec.Ladder("/", nil); err == nil || !strings.Contains(err.Error(), "classic queues ignore them") {
		t.Errorf("classic at most once: %v", err)
	}
	spec.Given["dead-letter-strategy"], spec.AtMostOnce = false, false
	if l, err := spec.Ladder("/", &amo); err != nil || l.AtMostOnce {
		// the shape's change is apply's to refuse, not the strategy's
		t.Errorf("--queue-type classic over an at-most-once ladder: %+v, %v", l, err)
	}
}

// apply states the trade of an at-most-once ladder each time, and
// refuses to change the strategy of one that exists: the broker would
// refuse the declaration.
func TestPlanApplyStrategy(t *testing.T) {
	alo, amo := strategyLadders(t)
	amoSnap, aloSnap := amo.Plan().Snapshot(), alo.Plan().Snapshot()
	ap, err := PlanApply(ApplyRequest{Ladder: amo, Snap: &topology.Snapshot{}, Version: version("4.3.6")})
	if err != nil || len(ap.Warnings) != 1 || !strings.Contains(ap.Warnings[0], "dead-letters at most once") || !strings.Contains(ap.Warnings[0], "a node stopping") {
		t.Errorf("new at-most-once ladder: %q, %v", ap.Warnings, err)
	}
	if ap, err = PlanApply(ApplyRequest{Ladder: amo, Existing: &amo, Snap: &amoSnap, Version: version("4.3.6")}); err != nil || len(ap.Warnings) != 1 {
		t.Errorf("again: %q, %v", ap.Warnings, err)
	}
	for _, tc := range []struct {
		ladder, existing topology.Ladder
		snap             topology.Snapshot
		want             string
	}{
		{alo, amo, amoSnap, "dead-letter at-most-once and the flags ask at-least-once"},
		{amo, alo, aloSnap, "dead-letter at-least-once and the flags ask at-most-once"},
	} {
		_, err := PlanApply(ApplyRequest{Ladder: tc.ladder, Existing: &tc.existing, Snap: &tc.snap, Version: version("4.3.6")})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was declared") || !strings.Contains(err.Error(), "rungs migrate") {
			t.Errorf("%v, want %q", err, tc.want)
		}
	}
}

// doctor names an at-most-once ladder and what it risks, as a warning.
func TestDoctorAtMostOnce(t *testing.T) {
	for _, amo := range []bool{false, true} {
		alo, l := strategyLadders(t)
		if !amo {
			l = alo
		}
		snap := l.Plan().Snapshot()
		found := topology.Discover(snap)
		f := healthyFacts(t)
		f.Nodes[0].ConfigFiles = []string{"/etc/rabbitmq/rabbitmq.conf"}
		f.Vhosts = []DoctorVhost{{Vhost: "/", Found: found, Report: health.NewReport(found, snap, health.Watch{})}}
		got, ok := find(Judge(f), "dead-letters at most once")
		if ok != amo {
			t.Fatalf("at most once %v: finding %v", amo, got)
		}
		if _, prefetch := find(Judge(f), "dead-letter worker"); prefetch == amo {
			t.Errorf("at most once %v: the dead-letter worker's prefetch named %v", amo, prefetch)
		}
		if amo && (got.Status != FindingWarn || got.Area != "ladder bursts" || !strings.Contains(got.Text, "lost if that rung cannot take it")) {
			t.Errorf("%+v", got)
		}
	}
}

// --at-most-once-below implies at most once, is kept like the strategy
// when not given, contradicts an explicit at-least-once, and a change of
// it is refused in place.
func TestLadderSpecAtMostOnceBelow(t *testing.T) {
	alo, _ := strategyLadders(t)
	spec := LadderSpec{Name: "bursts", Radix: 4, Levels: 3, AtMostOnceBelow: 10 * time.Second, Given: map[string]bool{"at-most-once-below": true, "radix": true, "levels": true}}
	part, err := spec.Ladder("/", nil)
	if err != nil || !part.AtMostOnce || part.AtMostOnceBelow != 12*time.Second {
		t.Fatalf("%+v, %v", part, err)
	}
	if l, err := (LadderSpec{Name: "bursts", Given: map[string]bool{}}).Ladder("/", &part); err != nil || l.AtMostOnceBelow != 12*time.Second {
		t.Errorf("kept: %+v, %v", l, err)
	}
	spec.Given["dead-letter-strategy"] = true
	if _, err := spec.Ladder("/", nil); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("with at-least-once: %v", err)
	}
	snap := alo.Plan().Snapshot()
	_, err = PlanApply(ApplyRequest{Ladder: part, Existing: &alo, Snap: &snap, Version: version("4.3.6")})
	if err == nil || !strings.Contains(err.Error(), "flags ask at-most-once below 12s") {
		t.Errorf("%v", err)
	}
	ap, err := PlanApply(ApplyRequest{Ladder: part, Snap: &topology.Snapshot{}, Version: version("4.3.6")})
	if err != nil || len(ap.Warnings) != 1 || !strings.Contains(ap.Warnings[0], "from its rungs shorter than 12s") {
		t.Errorf("%q, %v", ap.Warnings, err)
	}
}
