package ops

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// remedies records what Run applied and undid.
type remedies struct {
	did, undone []string
	fail        error
}

func (r *remedies) MoveLeader(_ context.Context, _, q string) (string, string, error) {
	r.did = append(r.did, "move "+q)
	return "n1", "n2", r.fail
}

func (r *remedies) NudgeDeadLettering(_ context.Context, _ string, q topology.Queue) (string, func(context.Context) error, error) {
	r.did = append(r.did, "nudge "+q.Name)
	return "p-" + q.Name, func(context.Context) error { r.undone = append(r.undone, q.Name); return nil }, r.fail
}

func (r *remedies) RestartMember(_ context.Context, _, q string) (string, error) {
	r.did = append(r.did, "restart "+q)
	return "m", r.fail
}

func TestUnstallRun(t *testing.T) {
	targets := []StalledRung{{Queue: topology.Queue{Name: "a"}, Before: 5}, {Queue: topology.Queue{Name: "b"}, Before: 5}}
	// a drains at the first read; b never does.
	read := topology.Snapshot{Queues: []topology.Queue{{Name: "a", Stats: topology.QueueStats{Expired: 1}}, {Name: "b", Stats: topology.QueueStats{Expired: 5}}}}
	for _, c := range []struct {
		remedy topology.StallRemedy
		did    []string
		err    string
		hint   bool
	}{
		{topology.RemedyLeaderMove, []string{"move a", "move b"}, "b still not draining after the leader move; see the node's log", false},
		// b gets a second restart, which does not help either.
		{topology.RemedyRaRestart, []string{"restart a", "restart b", "restart b"}, "b still not draining after the Ra member restart; see the node's log", false},
		{topology.RemedyPolicy, []string{"nudge a", "nudge b"}, "the policy did not get b moving", true},
	} {
		r := &remedies{}
		c0 := &clock{t: time.Unix(0, 0)}
		w := DrainWatch{Vhost: "/", Until: c0.t.Add(UnstallVerify), Timeout: time.Second, Now: c0.now, Sleep: c0.sleep}
		var applied, drained []string
		ev := UnstallEvents{Applied: func(a Applied) { applied = append(applied, a.Queue) }, Draining: func(d Drained) { drained = append(drained, d.Queue.Name) }}
		p := UnstallPlan{Vhost: "/", Targets: targets, Remedy: c.remedy}
		err := p.Run(context.Background(), r, &byName{recorded: recorded{snaps: []topology.Snapshot{read}}}, w, ev)
		var still *StillStalledError
		if !errors.As(err, &still) || err.Error() != c.err || (len(still.Hint) > 0) != c.hint {
			t.Fatalf("%v: %v", c.remedy, err)
		}
		wantApplied := []string{"a", "b"}
		if c.remedy == topology.RemedyRaRestart {
			wantApplied = append(wantApplied, "b")
		}
		if !reflect.DeepEqual(r.did, c.did) || !reflect.DeepEqual(applied, wantApplied) || !reflect.DeepEqual(drained, []string{"a"}) {
			t.Errorf("%v: did %v, applied %v, drained %v", c.remedy, r.did, applied, drained)
		}
		if c.remedy == topology.RemedyPolicy && !reflect.DeepEqual(r.undone, []string{"a", "b"}) {
			t.Errorf("policies undone: %v", r.undone)
		}
	}
	// A remedy that fails stops at once; a policy declared is undone.
	r := &remedies{fail: errors.New("refused")}
	p := UnstallPlan{Vhost: "/", Targets: targets, Remedy: topology.RemedyPolicy}
	if err := p.Run(context.Background(), r, &byName{}, DrainWatch{}, UnstallEvents{}); err == nil || len(r.did) != 1 || len(r.undone) != 0 {
		t.Errorf("failed nudge: %v, did %v, undone %v", err, r.did, r.undone)
	}
}

// A rung that the first Ra member restart leaves stalled and the second
// gets moving: Run restarts it again, and only it, and succeeds.
func TestUnstallRunRestartsAgain(t *testing.T) {
	targets := []StalledRung{{Queue: topology.Queue{Name: "a"}, Before: 5}, {Queue: topology.Queue{Name: "b"}, Before: 5}}
	stalled := topology.Snapshot{Queues: []topology.Queue{{Name: "a", Stats: topology.QueueStats{Expired: 1}}, {Name: "b", Stats: topology.QueueStats{Expired: 5}}}}
	moving := topology.Snapshot{Queues: []topology.Queue{{Name: "b", Stats: topology.QueueStats{Expired: 2}}}}
	// The first watch takes one read for a and b, then one a sample for b
	// until its deadline; every read after that sees b moving.
	reads := int(UnstallVerify/StallSampleEvery) + 1
	snaps := append(make([]topology.Snapshot, 0, reads+1), stalled)
	for len(snaps) < reads {
		snaps = append(snaps, stalled)
	}
	snaps = append(snaps, moving)
	r := &remedies{}
	c := &clock{t: time.Unix(0, 0)}
	w := DrainWatch{Vhost: "/", Until: c.t.Add(UnstallVerify), Timeout: time.Second, Now: c.now, Sleep: c.sleep}
	var drained []string
	ev := UnstallEvents{Draining: func(d Drained) { drained = append(drained, d.Queue.Name) }}
	p := UnstallPlan{Vhost: "/", Targets: targets, Remedy: topology.RemedyRaRestart}
	if err := p.Run(context.Background(), r, &byName{recorded: recorded{snaps: snaps}}, w, ev); err != nil {
		t.Fatalf("Run: %v (did %v, drained %v)", err, r.did, drained)
	}
	if want := []string{"restart a", "restart b", "restart b"}; !reflect.DeepEqual(r.did, want) || !reflect.DeepEqual(drained, []string{"a", "b"}) {
		t.Errorf("did %v, drained %v", r.did, drained)
	}
}
