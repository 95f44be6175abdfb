package ops

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// unstall acts on the stalled rungs of its own ladder: another layout's
// ladder of the same name, which a scope by name also watches, is not it.
func TestStalledRungsAreTheLaddersOwn(t *testing.T) {
	snap := fixture.Stalled()
	w := health.Watch{Interval: 5 * time.Second, Still: fixture.StalledWaits, Waited: fixture.StalledWaits}
	rep := health.NewReport(topology.Discover(snap), snap, w)
	l := fixture.Jobs()
	if got := StalledRungs(rep, l); len(got) != 3 || got[0].Before == 0 {
		t.Fatalf("%+v", got)
	}
	other := l
	other.Layout = "suffix"
	if got := StalledRungs(rep, other); len(got) != 0 {
		t.Errorf("another layout's ladder: %+v", got)
	}
	if _, err := NamedStalledRungs(l, snap, []string{"jobs.done"}); err == nil || !strings.Contains(err.Error(), "is not a rung") {
		t.Errorf("a queue that is not a rung: %v", err)
	}
	if got, err := NamedStalledRungs(l, snap, []string{"jobs.rung.03.1"}); err != nil || len(got) != 1 || got[0].Before != 536 {
		t.Errorf("a named rung: %+v %v", got, err)
	}
	if err := CheckUnstall(fixture.Orders()); err == nil {
		t.Error("a classic ladder cannot stall")
	}
}

// The remedy follows Version.StallRemedy: a policy before 4.3 (members
// unread), a leader move from 4.3 where every rung has another member,
// and --rabbitmqctl named where one has none. Doctor's hint says the same.
func TestChooseRemedyAndHint(t *testing.T) {
	v410, v436 := topology.Version{Major: 4, Minor: 0, Patch: 5}, topology.Version{Major: 4, Minor: 3, Patch: 6}
	targets := []StalledRung{{Queue: topology.Queue{Name: "jobs.rung.03.1"}, Before: 5}}
	unread := func(string) (int, error) { t.Fatal("members read"); return 0, nil }
	if r, err := ChooseRemedy(v410, targets, unread); err != nil || r != topology.RemedyPolicy {
		t.Errorf("4.0.5: %v %v", r, err)
	}
	if r, err := ChooseRemedy(topology.Version{}, targets, unread); err != nil || r != topology.RemedyPolicy {
		t.Errorf("unknown release: %v %v", r, err)
	}
	if r, err := ChooseRemedy(v436, targets, func(string) (int, error) { return 3, nil }); err != nil || r != topology.RemedyLeaderMove {
		t.Errorf("4.3.6 cluster: %v %v", r, err)
	}
	if _, err := ChooseRemedy(v436, targets, func(string) (int, error) { return 1, nil }); err == nil || !strings.Contains(err.Error(), "--rabbitmqctl PREFIX") {
		t.Errorf("4.3.6 single node: %v", err)
	}
	if _, err := ChooseRemedy(v436, targets, func(string) (int, error) { return 0, errors.New("403") }); err == nil || !strings.HasSuffix(err.Error(), "nothing was changed") {
		t.Errorf("members unread: %v", err)
	}
	l := fixture.Jobs()
	l.Vhost = "prod"
	if h := UnstallHint(l, []string{"a", "b"}, v410); h != "rungs unstall --ladder jobs --vhost prod (restarts the dead-letter worker of a, b; nothing is purged)" {
		t.Errorf("4.0.5 hint: %s", h)
	}
	if h := UnstallHint(l, []string{"a"}, v436); !strings.Contains(h, "in a cluster it moves the leader of a to another member; on a single node add --rabbitmqctl PREFIX") {
		t.Errorf("4.3.6 hint: %s", h)
	}
	for r, want := range map[topology.StallRemedy]string{topology.RemedyPolicy: "no-op policy", topology.RemedyLeaderMove: "move each rung's leader", topology.RemedyRaRestart: "with rabbitmqctl -n x"} {
		if got := RemedyHow(r, "rabbitmqctl -n x"); !strings.Contains(got, want) {
			t.Errorf("%v: %q", r, got)
		}
	}
}

func TestDraining(t *testing.T) {
	rung := func(name string, before int64) StalledRung {
		return StalledRung{Queue: topology.Queue{Name: name}, Before: before}
	}
	queue := func(name string, expired int64) topology.Queue {
		return topology.Queue{Name: name, Stats: topology.QueueStats{Expired: expired}}
	}
	rungs := []StalledRung{rung("a", 10), rung("b", 10), rung("c", 10)}
	for _, c := range []struct {
		name            string
		qs              []topology.Queue
		draining, still []string
	}{
		{"none moved", []topology.Queue{queue("a", 10), queue("b", 12), queue("c", 10)}, nil, []string{"a", "b", "c"}},
		{"one fell", []topology.Queue{queue("a", 10), queue("b", 9), queue("c", 10)}, []string{"b"}, []string{"a", "c"}},
		{"a queue gone holds none", []topology.Queue{queue("a", 10), queue("b", 10)}, []string{"c"}, []string{"a", "b"}},
	} {
		d, still := Draining(rungs, c.qs)
		var names []string
		for _, x := range d {
			names = append(names, x.Queue.Name)
		}
		if !reflect.DeepEqual(names, c.draining) || !reflect.DeepEqual(StalledNames(still), c.still) {
			t.Errorf("%s: draining %v, still %v", c.name, names, StalledNames(still))
		}
	}
}

func TestWatchDrainStopsWhenAllDrainOrAtTheDeadline(t *testing.T) {
	falling := &byName{recorded: recorded{snaps: []topology.Snapshot{
		{Queues: []topology.Queue{{Name: "a", Stats: topology.QueueStats{Expired: 5}}}},
		{Queues: []topology.Queue{{Name: "a", Stats: topology.QueueStats{Expired: 4}}}},
	}}}
	c := &clock{t: time.Unix(0, 0)}
	w := DrainWatch{Vhost: "/", Until: c.t.Add(UnstallVerify), Timeout: time.Second, Now: c.now, Sleep: c.sleep}
	rungs := []StalledRung{{Queue: topology.Queue{Name: "a"}, Before: 5}}
	var heard []int64
	still, err := w.WatchDrain(context.Background(), falling, rungs, func(d Drained) { heard = append(heard, d.Now.Stats.Expired) })
	if err != nil || len(still) != 0 || !reflect.DeepEqual(heard, []int64{4}) || len(falling.asked) != 2 {
		t.Fatalf("falling: still %v, heard %v, %d reads, %v", still, heard, len(falling.asked), err)
	}
	stuck := &byName{recorded: recorded{snaps: []topology.Snapshot{{Queues: []topology.Queue{{Name: "a", Stats: topology.QueueStats{Expired: 5}}}}}}}
	c = &clock{t: time.Unix(0, 0)}
	w.Until, w.Now, w.Sleep = c.t.Add(UnstallVerify), c.now, c.sleep
	still, err = w.WatchDrain(context.Background(), stuck, rungs, func(Drained) { t.Error("a stuck rung drained") })
	if err != nil || len(still) != 1 || len(stuck.asked) != int(UnstallVerify/StallSampleEvery) {
		t.Fatalf("stuck: still %v, %d reads, %v", still, len(stuck.asked), err)
	}
}
