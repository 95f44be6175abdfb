package ops

import (
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

func migrateVhost(t *testing.T) topology.Snapshot {
	t.Helper()
	from, err := topology.Ladder{Name: "a", Vhost: "/", Layout: "suffix", Unit: 100 * time.Millisecond, Levels: 3, QueueType: topology.Quorum}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	to, err := topology.Ladder{Name: "b", Vhost: "/", Layout: "prefix", Unit: 100 * time.Millisecond, Levels: 3, Radix: 2, QueueType: topology.Quorum}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	return from.Plan().Snapshot().Merge(to.Plan().Snapshot())
}

// A migration's plan refuses bad input as bad input, before anything moves.
func TestPlanMigrateRefuses(t *testing.T) {
	snap := migrateVhost(t)
	for _, tc := range []struct {
		req   MigrateRequest
		want  string
		input bool
	}{
		{MigrateRequest{From: "a", To: "a"}, "the same ladder", true},
		{MigrateRequest{From: "a", To: "ghost"}, `no ladder "ghost" in vhost /`, false},
		{MigrateRequest{From: "a", To: "b", Park: "b.done"}, "--park b.done is the", true},
		{MigrateRequest{From: "a", To: "b", Dest: "nowhere"}, "--dest: ", true},
	} {
		_, err := PlanMigrate(snap, tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) || IsInputError(err) != tc.input {
			t.Errorf("%+v: %v (input %v), want %q", tc.req, err, IsInputError(err), tc.want)
		}
	}
	mp, err := PlanMigrate(snap, MigrateRequest{From: "a", To: "b", Window: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(mp.Rungs) != 3 || mp.Park != "a.migrate.parked" || mp.Opts.Window != 10 || len(mp.Ladders) != 2 {
		t.Errorf("%+v", mp)
	}
}

// A dry run previews a rung through the peek gate: on releases where a
// peek counts as a delivery, a quorum rung needs --force and read-only
// refuses it; on 4.3, where it does not, it is previewed as it is.
func TestMigrateDryRunUsesThePeekGate(t *testing.T) {
	mp, err := PlanMigrate(migrateVhost(t), MigrateRequest{From: "a", To: "b"})
	if err != nil {
		t.Fatal(err)
	}
	mr := mp.Rungs[0]
	old := broker.PeekFacts{Version: topology.Version{Major: 4, Minor: 0, Patch: 5}, Limit: 20, LimitKnown: true}
	now := broker.PeekFacts{Version: topology.Version{Major: 4, Minor: 3, Patch: 6}, Limit: 20, LimitKnown: true}
	if s, _ := mp.GatePreview(mr, old, false, false); !strings.Contains(s, "add --force") {
		t.Errorf("4.0.5 without --force: %q", s)
	}
	if s, _ := mp.GatePreview(mr, old, true, true); !strings.Contains(s, "--read-only refuses") {
		t.Errorf("4.0.5 read-only: %q", s)
	}
	if s, _ := mp.GatePreview(mr, old, true, false); s != "" {
		t.Errorf("4.0.5 with --force: %q", s)
	}
	if s, _ := mp.GatePreview(mr, now, false, true); s != "" {
		t.Errorf("4.3.6: %q", s)
	}
	if s, _ := mp.GatePreview(MigrateRung{Rung: mr.Rung, Missing: true}, now, true, false); s != "the queue does not exist" {
		t.Errorf("missing: %q", s)
	}
}
