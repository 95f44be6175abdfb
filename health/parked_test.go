package health

import (
	"testing"

	"github.com/rungs-dev/rungs/topology"
)

// The retry library parks jobs by publishing into QUEUE.parked, so no
// dead-letter argument links the two: the console finds it by that name.
func TestRetryParkingQueueShowsAsDeadLetters(t *testing.T) {
	l, err := topology.Ladder{Name: "jobs", Levels: 3, Radix: 2, Targets: []string{"jobs.work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	snap := l.Plan().Snapshot()
	snap.Queues = append(snap.Queues, topology.Queue{Name: "jobs.work"}, topology.Queue{Name: "jobs.work.parked"})
	found := topology.Discover(snap)
	if len(found) != 1 {
		t.Fatalf("found %v", found)
	}
	var dead []string
	for _, r := range LadderRows(found[0], snap, Watch{}) {
		if r.Kind == DeadLetterRow {
			dead = append(dead, r.Queue)
		}
	}
	if len(dead) != 1 || dead[0] != "jobs.work.parked" {
		t.Fatalf("dead-letter rows %v, want jobs.work.parked", dead)
	}
}
