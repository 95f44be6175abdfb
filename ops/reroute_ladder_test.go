package ops

import (
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

func TestRerouteLadder(t *testing.T) {
	ladder := func(layout string) topology.Ladder {
		l, err := topology.Ladder{Name: "jobs", Vhost: "/", Layout: layout, Unit: time.Second, Levels: 3, Radix: 2, QueueType: topology.Quorum}.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	one := ladder("prefix").Plan().Snapshot()
	both := one
	other := ladder("suffix").Plan().Snapshot()
	both.Exchanges = append(append([]topology.Exchange(nil), one.Exchanges...), other.Exchanges...)
	both.Queues = append(append([]topology.Queue(nil), one.Queues...), other.Queues...)
	both.Bindings = append(append([]topology.Binding(nil), one.Bindings...), other.Bindings...)
	tests := []struct {
		name  string
		snap  topology.Snapshot
		q     LadderQuery
		want  string // the ladder's layout, or the refusal
		usage bool
	}{
		{"found", one, LadderQuery{Name: "jobs"}, "prefix", false},
		{"none", one, LadderQuery{Name: "ghost"}, `no ladder "ghost" in vhost /; nothing was changed`, false},
		{"two layouts", both, LadderQuery{Name: "jobs"}, `2 ladders are named "jobs" (prefix, suffix): add --layout; nothing was changed`, true},
		{"the layout picks", both, LadderQuery{Name: "jobs", Layout: "suffix"}, "suffix", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := RerouteLadder(tt.snap, tt.q, tt.q.Name, "/")
			got := l.Layout
			if err != nil {
				got = err.Error()
			}
			if got != tt.want || IsInputError(err) != tt.usage {
				t.Fatalf("RerouteLadder = %q (input error %v), want %q (%v)", got, IsInputError(err), tt.want, tt.usage)
			}
		})
	}
}
