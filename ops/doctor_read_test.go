package ops

import (
	"reflect"
	"testing"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

func TestDoctorReads(t *testing.T) {
	if s := DoctorScope("/", ""); !s.Inbound || s.Ladders != nil {
		t.Errorf("every ladder: %+v", s)
	}
	if s := DoctorScope("/", "jobs"); !s.Inbound || !reflect.DeepEqual(s.Ladders, []string{"jobs"}) {
		t.Errorf("one ladder: %+v", s)
	}
	found := func(l topology.Ladder) health.LadderReport {
		return health.LadderReport{Found: topology.Found{Ladder: l}}
	}
	classic := topology.Ladder{Name: "c", QueueType: topology.Classic, Layout: "celery"}
	quorum := topology.Ladder{Name: "q", QueueType: topology.Quorum, Layout: "suffix"}
	for _, c := range []struct {
		name    string
		ladders []health.LadderReport
		want    bool
	}{{"none", nil, false}, {"classic", []health.LadderReport{found(classic)}, false}, {"quorum", []health.LadderReport{found(classic), found(quorum)}, true}} {
		if got := ReadsPolicies(health.Report{Ladders: c.ladders}); got != c.want {
			t.Errorf("%s: reads policies %v", c.name, got)
		}
	}
	got := KeySampled([]topology.Found{{Ladder: classic}, {Ladder: quorum}})
	if len(got) != 1 || got[0].Name != "c" {
		t.Errorf("key sampled: %+v", got)
	}
}
