package topology

import (
	"slices"
	"testing"
	"time"
)

// Every object a ladder of each layout owns names that ladder among its
// possible owners, and a name no ladder owns names none.
func TestLadderNamesOwningFindsEveryObjectsLadder(t *testing.T) {
	for _, lay := range LayoutNames() {
		l, err := Ladder{Name: "jobs.eu", Vhost: "/", Layout: lay, Unit: time.Second, Levels: 4, Targets: []string{"work"}}.Normalize()
		if err != nil {
			// Layouts without destinations, or with a fixed name.
			l, err = Ladder{Name: "jobs.eu", Vhost: "/", Layout: lay, Unit: time.Second, Levels: 4}.Normalize()
		}
		if err != nil {
			l, err = Ladder{Vhost: "/", Layout: lay, Unit: time.Second}.Normalize()
		}
		if err != nil {
			t.Fatalf("%s: %v", lay, err)
		}
		p := l.Plan()
		var names []string
		for _, q := range p.Queues {
			names = append(names, q.Name)
		}
		for _, x := range p.Exchanges {
			names = append(names, x.Name)
		}
		for _, n := range names {
			if n == "work" {
				continue
			}
			if got := LadderNamesOwning(n); !slices.Contains(got, l.Name) {
				t.Errorf("%s: %s names owners %v, not %s", lay, n, got, l.Name)
			}
		}
	}
	if got := LadderNamesOwning("orders", "work.parked"); len(got) != 0 {
		t.Errorf("queues no ladder owns name owners %v", got)
	}
}
