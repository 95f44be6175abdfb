package ops

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// healthyFacts are what doctor reads from a single 4.3.6 node that holds
// one quorum ladder without trouble: every check passes.
func healthyFacts(t *testing.T) DoctorFacts {
	t.Helper()
	snap := fixture.Jobs().Plan().Snapshot()
	found := topology.Discover(snap)
	if len(found) == 0 {
		t.Fatal("no ladder in fixture.Jobs' plan")
	}
	return DoctorFacts{
		API: "http://127.0.0.1:15672", User: "guest",
		Overview:  broker.Overview{RabbitMQVersion: "4.3.6", ErlangVersion: "27.3", Node: "rabbit@a"},
		AMQPVhost: snap.Vhost,
		Nodes:     []broker.Node{{Name: "rabbit@a", Running: true, Plugins: []string{"rabbitmq_management"}, Version: topology.Version{Major: 4, Minor: 3, Patch: 6}}},
		Flags:     map[string]bool{"quorum_queue": true, "stream_queue": true},
		Vhosts: []DoctorVhost{{
			Vhost: snap.Vhost, Found: found,
			Report: health.NewReport(found, snap, health.Watch{}),
		}},
	}
}

func statuses(fs Findings, area string) map[string]string {
	out := map[string]string{}
	for _, f := range fs {
		if area == "" || f.Area == area {
			out[f.Text] = f.Status
		}
	}
	return out
}

func find(fs Findings, part string) (Finding, bool) {
	for _, f := range fs {
		if strings.Contains(f.Text, part) {
			return f, true
		}
	}
	return Finding{}, false
}

func TestDoctorHealthyBrokerHasNoProblems(t *testing.T) {
	fs := Judge(healthyFacts(t))
	if n := fs.Problems(); n != 0 {
		t.Fatalf("%d problems: %+v", n, fs)
	}
	for _, want := range []string{"answers as guest: RabbitMQ 4.3.6", "AMQP accepts the credentials", "node rabbit@a runs rabbitmq_management", "matches its plan"} {
		if _, ok := find(fs, want); !ok {
			t.Errorf("no finding %q: %+v", want, fs)
		}
	}
	// Findings come in the order the checks made them: the broker first.
	if fs[0].Area != "broker" || fs[len(fs)-1].Area == "broker" {
		t.Errorf("order: first %+v, last %+v", fs[0], fs[len(fs)-1])
	}
}

// A broker whose management API does not answer is one problem and
// nothing else: every other check would only repeat it.
func TestDoctorStopsWhenTheAPIDoesNotAnswer(t *testing.T) {
	f := healthyFacts(t)
	f.OverviewErr = errors.New("connection refused")
	fs := Judge(f)
	if len(fs) != 1 || fs[0].Status != FindingProblem || !strings.Contains(fs[0].Text, "does not answer: connection refused") {
		t.Fatalf("%+v", fs)
	}
}

// Each failed read is a finding of its own weight.
func TestDoctorFailedReads(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(*DoctorFacts)
		want   string
		status string
	}{
		{"amqp", func(f *DoctorFacts) { f.AMQPErr = errors.New("403") }, "AMQP: 403", FindingProblem},
		{"nodes", func(f *DoctorFacts) { f.NodesErr = errors.New("403") }, "cannot list the nodes' plugins", FindingWarn},
		{"flags with a quorum ladder", func(f *DoctorFacts) { f.FlagsErr = errors.New("403") }, "cannot read the feature flags", FindingProblem},
		{"flags without", func(f *DoctorFacts) { f.FlagsErr = errors.New("403"); f.Vhosts = nil }, "cannot read the feature flags", FindingWarn},
		{"ladders", func(f *DoctorFacts) {
			f.Vhosts = []DoctorVhost{{Vhost: "/", ReadErr: errors.New("read definitions: 500")}}
		}, "cannot read definitions: 500", FindingProblem},
		{"re-read", func(f *DoctorFacts) { f.Vhosts[0].WatchErr = errors.New("500") }, "cannot re-read vhost", FindingProblem},
		{"stopped node", func(f *DoctorFacts) { f.Nodes = append(f.Nodes, broker.Node{Name: "rabbit@b"}) }, "node rabbit@b is not running", FindingProblem},
		{"missing plugin", func(f *DoctorFacts) {
			f.Nodes = append(f.Nodes, broker.Node{Name: "rabbit@b", Running: true, Plugins: []string{"rabbitmq_prelaunch"}})
		}, "does not run rabbitmq_management", FindingProblem},
		{"no ladder", func(f *DoctorFacts) { f.Only = "ghost"; f.Vhosts[0].Found, f.Vhosts[0].Report = nil, health.Report{} }, `no ladder "ghost"`, FindingProblem},
	} {
		f := healthyFacts(t)
		tc.break_(&f)
		got, ok := find(Judge(f), tc.want)
		if !ok || got.Status != tc.status {
			t.Errorf("%s: %+v, want %s %q", tc.name, got, tc.status, tc.want)
		}
	}
}

// Quorum ladders need 3.10+ and both feature flags; the messages name the
// ladder and what to enable.
func TestDoctorQuorumPrerequisites(t *testing.T) {
	f := healthyFacts(t)
	f.Overview.RabbitMQVersion = "3.9.13"
	f.Flags["stream_queue"] = false
	st := statuses(Judge(f), "")
	if l := f.quorumLadder(); l == "" {
		t.Fatal("the fixture has no quorum ladder")
	}
	var sawRelease, sawFlag bool
	for text, status := range st {
		sawRelease = sawRelease || strings.Contains(text, "needs RabbitMQ 3.10+") && status == FindingProblem
		sawFlag = sawFlag || strings.HasPrefix(text, "stream_queue is not enabled") && status == FindingProblem
	}
	if !sawRelease || !sawFlag {
		t.Errorf("release %v, flag %v: %v", sawRelease, sawFlag, st)
	}
	v3913 := topology.Version{Major: 3, Minor: 9, Patch: 13}
	if !v3913.Less(minAtLeastOnce) || (topology.Version{Major: 3, Minor: 10}).Less(minAtLeastOnce) {
		t.Error("3.9.13 predates at-least-once dead-lettering, 3.10.0 has it")
	}
}

// The layout-safety verdict shows in doctor: a direct ladder on 3.13.1
// is a problem, a direct quorum ladder before 3.13 a warning, a prefix
// ladder neither.
func TestDoctorLayoutSafety(t *testing.T) {
	for _, tc := range []struct {
		layout  string
		version string
		want    string
		status  string
	}{
		{"direct", "3.13.1", "which this broker loses at every rung", FindingProblem},
		{"direct", "3.12.14", "drop BCC keys when they retry a dead-lettering", FindingWarn},
		{"direct", "3.13.7", "", ""},
		{"prefix", "3.13.1", "", ""},
	} {
		l, err := topology.Ladder{Name: "jobs", Vhost: "/", Layout: tc.layout, Levels: 2, Radix: 4, QueueType: topology.Quorum}.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		snap := l.Plan().Snapshot()
		found := topology.Discover(snap)
		f := healthyFacts(t)
		f.Overview.RabbitMQVersion = tc.version
		f.Vhosts = []DoctorVhost{{Vhost: "/", Found: found, Report: health.NewReport(found, snap, health.Watch{})}}
		fs := Judge(f)
		var got Finding
		for _, fi := range fs {
			if fi.Area == "ladder jobs" && strings.Contains(fi.Text, "BCC") {
				got = fi
			}
		}
		if got.Status != tc.status || !strings.Contains(got.Text, tc.want) {
			t.Errorf("%s on %s: %+v, want %s %q", tc.layout, tc.version, got, tc.status, tc.want)
		}
	}
}

// Stalled rungs are problems, with the cause and the remedy of the
// release: a policy before 4.3, a leader move or a Ra member restart from.
func TestDoctorStalledRungsAndTheirRemedy(t *testing.T) {
	snap := fixture.Stalled()
	found := topology.Discover(snap)
	w := health.Watch{Interval: 5 * time.Second, Still: fixture.StalledWaits, Waited: fixture.StalledWaits}
	for version, remedy := range map[string]string{
		"4.0.5": "(restarts the dead-letter worker of jobs.rung.03.4, jobs.rung.03.2, jobs.rung.03.1; nothing is purged)",
		"4.3.6": "in a cluster it moves the leader of jobs.rung.03.4, jobs.rung.03.2, jobs.rung.03.1 to another member; on a single node add --rabbitmqctl PREFIX",
	} {
		f := healthyFacts(t)
		f.Overview.RabbitMQVersion = version
		f.Vhosts = []DoctorVhost{{Vhost: snap.Vhost, Found: found, Report: health.NewReport(found, snap, w)}}
		fs := Judge(f)
		if got, ok := find(fs, "jobs.rung.03.1 is stalled: 536 expired messages"); !ok || got.Status != FindingProblem {
			t.Errorf("%s: stalled rung %+v in %+v", version, got, fs)
		}
		if got, ok := find(fs, "remedy: rungs unstall --ladder jobs"); !ok || !strings.Contains(got.Text, remedy) {
			t.Errorf("%s: remedy %q, want %q", version, got.Text, remedy)
		}
	}
}

// doctor names rungs that one source configures alike together, warns
// where the broker honours delayed retry and notes it where it does not
// (a cluster mid-upgrade follows its oldest node), and says when it could
// not read the policies.
func TestCheckDelayedRetry(t *testing.T) {
	snap := fixture.DelayedRetry()
	lr := health.NewReport(topology.Discover(snap), snap, health.Watch{}).Ladders[0]
	ps := topology.Policies{Policies: []topology.Policy{{Name: "slow", Pattern: `^tasks\.rung\.0[01]`, ApplyTo: "quorum_queues", Definition: map[string]any{"delayed-retry-type": "all", "delayed-retry-min": 3000.0}}}}
	checks := func(v topology.Version, err error) Findings {
		var out Findings
		checkDelayedRetry(DoctorLadder{LadderReport: lr, Snapshot: snap, Policies: ps, PoliciesErr: err, Rules: v}, &out)
		return out
	}
	want := "delayed retry on tasks.rung.01.3, tasks.rung.01.2, tasks.rung.01.1 and 3 more, set by the policy slow (type all, 3s)"
	for v, status := range map[topology.Version]string{{Major: 4, Minor: 3, Patch: 6}: FindingWarn, topology.Oldest(topology.Version{Major: 4, Minor: 3, Patch: 6}, topology.Version{Major: 4, Minor: 0, Patch: 5}): FindingInfo} {
		got := checks(v, nil)
		if len(got) != 1 || got[0].Status != status || !strings.HasPrefix(got[0].Text, want) || got[0].Area != "ladder tasks" {
			t.Errorf("%v: %+v, want one %s %q", v, got, status, want)
		}
	}
	if got := checks(topology.Version{Major: 4, Minor: 3}, errors.New("403")); len(got) != 2 || !strings.Contains(got[0].Text, "cannot read the policies") || got[0].Status != FindingInfo {
		t.Errorf("unreadable policies: %+v", got)
	}
}

// The oldest node's release sets the quorum rules in a cluster mid-upgrade.
func TestDoctorRulesFollowTheOldestNode(t *testing.T) {
	f := healthyFacts(t)
	f.Nodes = append(f.Nodes, broker.Node{Name: "rabbit@b", Running: true, Version: topology.Version{Major: 4, Minor: 0, Patch: 5}})
	if got := f.Rules(); got != (topology.Version{Major: 4, Minor: 0, Patch: 5}) {
		t.Errorf("rules %v", got)
	}
}

// In a cluster doctor names the queues that lost a member by the node that
// is down, fails on queues without quorum, and warns when every leader of
// a ladder sits on one node.
func TestDoctorPlacement(t *testing.T) {
	with := func(down []string, leader func(i int) string) Findings {
		snap := fixture.Jobs().Plan().Snapshot()
		nodes := []string{"rabbit@a", "rabbit@b", "rabbit@c"}
		for i := range snap.Queues {
			s := &snap.Queues[i].Stats
			s.Members, s.Leader, s.Online = nodes, leader(i), []string{}
			for _, n := range nodes {
				if !slices.Contains(down, n) {
					s.Online = append(s.Online, n)
				}
			}
		}
		found := topology.Discover(snap)
		f := healthyFacts(t)
		f.Vhosts = []DoctorVhost{{Vhost: snap.Vhost, Found: found, Report: health.NewReport(found, snap, health.Watch{})}}
		return Judge(f)
	}
	spread := func(i int) string { return []string{"rabbit@a", "rabbit@b", "rabbit@c"}[i%3] }

	fs := with(nil, spread)
	if got, ok := find(fs, "rungs run on 3 nodes, every member online; leaders: rabbit@a "); !ok || got.Status != FindingOK || fs.Problems() != 0 {
		t.Errorf("healthy cluster: %+v", fs)
	}
	fs = with([]string{"rabbit@c"}, spread)
	if got, ok := find(fs, "lost their member on rabbit@c: jobs."); !ok || got.Status != FindingWarn || fs.Problems() != 0 {
		t.Errorf("a node down: %+v", fs)
	}
	for _, f := range fs {
		if strings.Contains(f.Text, "members online; one more loss") {
			t.Errorf("a lost member reported per queue as well: %+v", f)
		}
	}
	fs = with([]string{"rabbit@b", "rabbit@c"}, spread)
	if got, ok := find(fs, "without quorum (half their members or fewer online)"); !ok || got.Status != FindingProblem {
		t.Errorf("two nodes down: %+v", fs)
	}
	fs = with(nil, func(int) string { return "rabbit@b" })
	if got, ok := find(fs, "rung leaders of jobs sit on rabbit@b of the 3 nodes"); !ok || got.Status != FindingWarn {
		t.Errorf("leaders on one node: %+v", fs)
	}
	if _, ok := find(Judge(healthyFacts(t)), "rungs run on"); ok {
		t.Error("a single node reports a placement")
	}
}
