package health

import (
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// clustered returns fixture.Jobs' snapshot with every queue replicated to
// three nodes, its leader chosen by leader, and the nodes in down offline.
func clustered(leader func(i int, q string) string, down ...string) topology.Snapshot {
	snap := fixture.Jobs().Plan().Snapshot()
	nodes := []string{"rabbit@a", "rabbit@b", "rabbit@c"}
	off := map[string]bool{}
	for _, n := range down {
		off[n] = true
	}
	for i := range snap.Queues {
		s := &snap.Queues[i].Stats
		s.Members = nodes
		s.Online = []string{}
		for _, n := range nodes {
			if !off[n] {
				s.Online = append(s.Online, n)
			}
		}
		s.Leader = leader(i, snap.Queues[i].Name)
	}
	return snap
}

func reportOf(t *testing.T, snap topology.Snapshot) LadderReport {
	t.Helper()
	found := topology.Discover(snap)
	if len(found) != 1 {
		t.Fatalf("found %d ladders", len(found))
	}
	return NewReport(found, snap, Watch{}).Ladders[0]
}

func TestPlacementSpreadAndOneNode(t *testing.T) {
	nodes := []string{"rabbit@a", "rabbit@b", "rabbit@c"}
	spread := reportOf(t, clustered(func(i int, _ string) string { return nodes[i%3] }))
	if spread.Placement.OneNode() != "" || !spread.Placement.Clustered() || len(spread.Placement.Leaders) != 3 {
		t.Errorf("spread leaders: %+v, one node %q", spread.Placement, spread.Placement.OneNode())
	}
	if got := spread.Placement.Spread(); !strings.HasPrefix(got, "rabbit@a ") || strings.Count(got, " · ") != 2 {
		t.Errorf("Spread() = %q", got)
	}
	one := reportOf(t, clustered(func(int, string) string { return "rabbit@b" }))
	if one.Placement.OneNode() != "rabbit@b" {
		t.Fatalf("all on rabbit@b: OneNode() = %q", one.Placement.OneNode())
	}
	w := one.Placement.OneNodeWarning("/", "jobs")
	for _, want := range []string{"rung leaders of jobs sit on rabbit@b of the 3 nodes", "rabbitmq-queues rebalance quorum --vhost-pattern '^/$' --queue-pattern '^jobs\\.'"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning lacks %q: %s", want, w)
		}
	}
	// One node, no members reported: nothing to say.
	single := reportOf(t, fixture.Jobs().Plan().Snapshot())
	if single.Placement.Clustered() || single.Placement.OneNode() != "" || single.Placement.Spread() != "" {
		t.Errorf("single node: %+v", single.Placement)
	}
}

func TestLostMembersRows(t *testing.T) {
	nodes := []string{"rabbit@a", "rabbit@b", "rabbit@c"}
	lr := reportOf(t, clustered(func(i int, _ string) string { return nodes[i%2] }, "rabbit@c"))
	var rungs int
	for _, r := range lr.Rows {
		if r.Kind != RungRow {
			continue
		}
		rungs++
		if r.Severity != Warning || r.Tag != "2 of 3 members" || !r.StatusIsMembership() ||
			!strings.Contains(r.Status, "rabbit@c down: 2 of 3 members online; one more loss stops it") {
			t.Fatalf("%s: %v %q %q", r.Queue, r.Severity, r.Tag, r.Status)
		}
	}
	if lr.Totals.MembersLost < rungs || lr.Totals.NoQuorum != 0 {
		t.Errorf("totals: %d lost, %d without quorum; %d rungs", lr.Totals.MembersLost, lr.Totals.NoQuorum, rungs)
	}
	lr = reportOf(t, clustered(func(int, string) string { return "rabbit@a" }, "rabbit@b", "rabbit@c"))
	for _, r := range lr.Rows {
		if r.Severity != Problem || r.Tag != "no quorum" || !strings.Contains(r.Status, "no quorum: 1 of 3 members online (rabbit@b, rabbit@c down)") {
			t.Fatalf("%s: %v %q %q", r.Queue, r.Severity, r.Tag, r.Status)
		}
	}
	if lr.Totals.NoQuorum != lr.Totals.MembersLost || lr.Totals.NoQuorum == 0 {
		t.Errorf("totals: %+v", lr.Totals)
	}
}
