package topology

import (
	"testing"
	"time"
)

// scopeLadders is one ladder of each layout, with a target where the
// layout has them.
func scopeLadders(t *testing.T) []Ladder {
	t.Helper()
	var ls []Ladder
	for _, lay := range Layouts() {
		l := Ladder{Name: "sc.pe", Vhost: "v", Layout: lay.Name(), Unit: time.Second, Levels: 3, Radix: 4, QueueType: Quorum}
		switch lay.Name() {
		case "suffix":
			l.Radix = 2
		case "nsb", "nsb1", "celery":
			l = Ladder{Vhost: "v", Layout: lay.Name(), Unit: time.Second, Levels: 28, Radix: 2, QueueType: Quorum}
			if lay.Name() == "celery" {
				l.Name = "x_celery"
			}
			if lay.Name() == "nsb1" {
				l.QueueType = Classic
			}
		}
		if lay.Name() != "suffix" {
			l.Targets = []string{"orders"}
		}
		ls = append(ls, mustLadder(t, l))
	}
	return ls
}

// A ladder's scope holds every object of its plan and every name it owns,
// and none of another ladder's: a scoped read sees the whole ladder and
// nothing else.
func TestScopeHoldsTheLadderAndNothingElse(t *testing.T) {
	for _, l := range scopeLadders(t) {
		t.Run(l.Layout, func(t *testing.T) {
			in := l.Scope().Matcher()
			any := DiscoveryScope().Matcher()
			p := l.Plan()
			var names []string
			if len(l.Targets) > 0 {
				names = []string{"orders", "orders.parked"}
			}
			for _, q := range p.Queues {
				names = append(names, q.Name)
			}
			for _, x := range p.Exchanges {
				names = append(names, x.Name)
			}
			for _, n := range names {
				if !in(n) {
					t.Errorf("%s is not in the scope %s", n, l.Scope().Regex())
				}
				if n != "orders" && n != "orders.parked" && !any(n) {
					t.Errorf("%s is not in the discovery scope", n)
				}
			}
			for _, rung := range l.Rungs() {
				if !l.layout().Owns(l, rung.Queue) || !in(rung.Queue) {
					t.Errorf("rung %s not owned or not in scope", rung.Queue)
				}
			}
			for _, n := range []string{"scxpe.done", "other.done", "sc.pe.donex", "xsc.pe.ingest", "orders2", "sc.pe"} {
				if in(n) && !l.layout().Owns(l, n) && l.Layout != "nsb" && l.Layout != "nsb1" {
					t.Errorf("%s is in the scope %s", n, l.Scope().Regex())
				}
			}
		})
	}
}

// A left-over rung (drift) is in the scope, so a scoped snapshot still
// shows it as extra.
func TestScopeHoldsLeftOverRungs(t *testing.T) {
	l := mustLadder(t, Ladder{Name: "lad", Layout: "direct", Unit: time.Second, Levels: 2, Radix: 16, QueueType: Quorum})
	if !l.Scope().Matcher()("lad.rung.07.3") {
		t.Fatalf("left-over rung lad.rung.07.3 is not in %s", l.Scope().Regex())
	}
}

func TestScopeCoveringAndEmpty(t *testing.T) {
	var empty Scope
	if !empty.Empty() || empty.Regex() != "" || empty.Matcher()("x") {
		t.Fatal("an empty scope must match nothing")
	}
	l := mustLadder(t, Ladder{Name: "lad", Layout: "direct", Unit: time.Second, Levels: 2, Radix: 2, QueueType: Quorum, Targets: []string{"t"}})
	sc := l.Scope().Covering(Snapshot{Queues: []Queue{{Name: "lad.done"}, {Name: "t.dlq"}}})
	if got := sc.Names; len(got) != 3 || got[0] != "t" || got[1] != "t.dlq" || got[2] != "t.parked" {
		t.Fatalf("Covering names = %v", got)
	}
	if two := ScopeOf("v", []Ladder{l, l}); len(two.Patterns) != 1 {
		t.Fatalf("duplicate patterns kept: %v", two.Patterns)
	}
}
