package ops

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

func version(s string) func() (topology.Version, error) {
	return func() (topology.Version, error) {
		v, ok := topology.ParseVersion(s)
		if !ok {
			return v, errors.New("no answer")
		}
		return v, nil
	}
}

// apply refuses, with nothing declared, another shape under a ladder's
// name, a layout the release loses messages of, and an object the broker
// would refuse to declare again; it warns where it could not check.
func TestPlanApply(t *testing.T) {
	direct, _ := topology.Ladder{Name: "jobs", Vhost: "/", Layout: "direct", Levels: 3, Radix: 2, QueueType: topology.Quorum}.Normalize()
	other, _ := topology.Ladder{Name: "jobs", Vhost: "/", Layout: "direct", Levels: 4, Radix: 2, QueueType: topology.Quorum}.Normalize()
	snap := direct.Plan().Snapshot()
	clash := direct.Plan().Snapshot()
	clash.Queues[len(clash.Queues)-1].Args = topology.Args{"x-queue-type": "classic"}
	for _, tc := range []struct {
		name    string
		req     ApplyRequest
		err     string
		warning string
	}{
		{"again", ApplyRequest{Ladder: direct, Existing: &direct, Snap: &snap, Version: version("4.3.6")}, "", ""},
		{"another shape", ApplyRequest{Ladder: other, Existing: &direct, Snap: &snap, Version: version("4.3.6")}, "already exists in vhost / as 3 levels of 1s, radix 2, quorum; the flags describe 4 levels", ""},
		{"broken BCC", ApplyRequest{Ladder: direct, Snap: &snap, Version: version("3.13.1")}, "drops BCC routing keys", ""},
		{"retry loses BCC", ApplyRequest{Ladder: direct, Snap: &snap, Version: version("3.12.14")}, "", "drop BCC keys when they retry a dead-lettering"},
		{"version unread", ApplyRequest{Ladder: direct, Snap: &snap, Version: version("")}, "", "the broker's version was not checked (no answer)"},
		{"no snapshot", ApplyRequest{Ladder: direct, SnapErr: errors.New("401"), Version: version("4.3.6")}, "", "cannot read the vhost through the management API (401)"},
		{"conflict", ApplyRequest{Ladder: direct, Snap: &clash, Version: version("4.3.6")}, "exists with other arguments", ""},
	} {
		ap, err := PlanApply(tc.req)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "nothing was declared")):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err == "" && len(ap.Plan.Queues) == 0:
			t.Errorf("%s: no plan", tc.name)
		case tc.warning == "" && len(ap.Warnings) > 0, tc.warning != "" && (len(ap.Warnings) == 0 || !strings.Contains(ap.Warnings[0], tc.warning)):
			t.Errorf("%s: warnings %q, want %q", tc.name, ap.Warnings, tc.warning)
		}
	}
	// A classic prefix ladder does not depend on the release: it is not read.
	prefix, _ := topology.Ladder{Name: "jobs", Vhost: "/", Layout: "prefix", Levels: 3, Radix: 2, QueueType: topology.Classic}.Normalize()
	if _, err := PlanApply(ApplyRequest{Ladder: prefix, Snap: &topology.Snapshot{}, Version: func() (topology.Version, error) { t.Fatal("version read"); return topology.Version{}, nil }}); err != nil {
		t.Fatal(err)
	}
}

// A quorum ladder's rungs and unroutable queue are declared without a
// delivery limit where the release has a default (4.0 on); queues that
// exist keep what they have, and on 4.0 to 4.2, where reading them then
// needs --force, apply says so. An unread version or vhost declares no
// argument (an existing queue must be declared again as it was), and says
// what that costs.
func TestPlanApplyDeclaresRungsWithoutTheDefaultLimit(t *testing.T) {
	l, _ := topology.Ladder{Name: "jobs", Vhost: "/", Layout: "prefix", Levels: 3, Radix: 2, QueueType: topology.Quorum}.Normalize()
	limits := func(p topology.Plan) (n int) {
		for _, q := range p.Queues {
			if q.Args["x-delivery-limit"] == int64(-1) {
				n++
			}
		}
		return n
	}
	rungs := len(l.Rungs()) + 1 // and the unroutable queue
	empty := topology.Snapshot{}
	old := l.Plan().Snapshot() // applied by an earlier rungs
	for _, tc := range []struct {
		ver     string
		snap    *topology.Snapshot
		limited int
		warning string
	}{
		{"3.10.8", &empty, 0, ""},
		{"4.0.5", &empty, rungs, ""},
		{"4.3.6", &empty, rungs, ""},
		{"4.0.5", nil, 0, "cannot read the vhost"},
		{"4.0.5", &old, 0, fmt.Sprintf("%d queues of ladder jobs keep RabbitMQ 4.0.5's default delivery limit of 20", rungs)},
		{"4.3.6", &old, 0, ""},
		{"", &empty, 0, "the broker's version was not read (no answer), so the quorum rungs are declared as before"},
	} {
		ap, err := PlanApply(ApplyRequest{Ladder: l, Snap: tc.snap, SnapErr: errors.New("401"), Version: version(tc.ver)})
		if err != nil {
			t.Fatalf("%q: %v", tc.ver, err)
		}
		if n := limits(ap.Plan); n != tc.limited {
			t.Errorf("%q over %v: %d queues without a limit, want %d", tc.ver, tc.snap != nil, n, tc.limited)
		}
		if w := strings.Join(ap.Warnings, "\n"); (tc.warning == "") != (w == "") || !strings.Contains(w, tc.warning) {
			t.Errorf("%q over %v: warnings %q, want %q", tc.ver, tc.snap != nil, w, tc.warning)
		}
	}
}

// The ladder defaults: what the spec does not give comes from the ladder
// found on the broker, else the defaults; a new ladder is prefix where the
// release would lose a direct ladder's BCC keys, unless the spec names a
// layout.
func TestLadderSpec(t *testing.T) {
	base, _ := topology.Ladder{Name: "jobs", Vhost: "/", Layout: "direct", Levels: 20, Radix: 2, Unit: time.Second, QueueType: topology.Classic}.Normalize()
	spec := LadderSpec{Name: "jobs", Layout: topology.DefaultLayout, Unit: time.Second, MaxDelay: 7 * 24 * time.Hour, HasMaxDelay: true, QueueType: topology.DefaultQueueType, Given: map[string]bool{"max-delay": true}}
	l, err := spec.Ladder("/", &base)
	if err != nil {
		t.Fatal(err)
	}
	if l.Radix != 2 || l.QueueType != topology.Classic || l.MaxDelay() < 7*24*time.Hour {
		t.Errorf("over an existing binary classic ladder: %s", l.Describe())
	}
	n, err := LadderSpec{Name: "jobs", Layout: topology.DefaultLayout, Unit: time.Second, QueueType: topology.DefaultQueueType, Given: map[string]bool{}}.Ladder("/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n.Layout != topology.DefaultLayout || n.QueueType != topology.DefaultQueueType {
		t.Errorf("a new ladder: %s", n.Describe())
	}
	if _, err := (LadderSpec{Name: "jobs", Layout: "prefix", Unit: time.Second, MaxDelay: 0, HasMaxDelay: true, Given: map[string]bool{"max-delay": true}}).Ladder("/", nil); err == nil || !strings.HasPrefix(err.Error(), "--max-delay: ") {
		t.Errorf("max delay 0: %v", err)
	}
	for ver, want := range map[string]string{"3.13.1": "prefix", "3.12.14": "prefix", "4.3.6": "direct", "": "direct"} {
		s := spec
		s.Given = map[string]bool{}
		nl, note, err := s.NewLadder("/", n, version(ver))
		if err != nil || nl.Layout != want || (note != "") != (want == "prefix") {
			t.Errorf("%q: %s, note %q, err %v", ver, nl.Layout, note, err)
		}
		s.Given["layout"] = true
		if nl, note, _ := s.NewLadder("/", n, version(ver)); nl.Layout != "direct" || note != "" {
			t.Errorf("%q with --layout direct: %s, %q", ver, nl.Layout, note)
		}
	}
}
