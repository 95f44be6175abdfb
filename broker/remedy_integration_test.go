package broker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// TestNudgeDeadLetteringOnBroker declares the nudge policy on a quorum rung
// of a real broker: the broker accepts it (on 3.10 and 4.x alike), applies
// it to that queue alone, and undo removes it. Read-only refuses it.
func TestNudgeDeadLetteringOnBroker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	applyQuorumLadder(ctx, t, e, "nudge", 3)
	snap, err := e.mgmt.Snapshot(ctx, e.vhost)
	if err != nil {
		t.Fatal(err)
	}
	q, ok := snap.Queue("nudge.rung.01")
	if !ok {
		t.Fatalf("no rung nudge.rung.01 in %v", snap.Queues)
	}
	name, undo, err := e.mgmt.NudgeDeadLettering(ctx, e.vhost, q)
	if err != nil {
		t.Fatal(err)
	}
	if got := brokertest.Policies(t, e.cfg); len(got) != 1 || got[0] != name {
		t.Errorf("policies after the nudge: %v, want [%s]", got, name)
	}
	if err := undo(ctx); err != nil {
		t.Fatal(err)
	}
	if got := brokertest.Policies(t, e.cfg); len(got) != 0 {
		t.Errorf("policies after undo: %+v", got)
	}
	if err := undo(ctx); err != nil {
		t.Errorf("a second undo: %v", err)
	}

	ro := e.cfg
	ro.ReadOnly = true
	m, err := broker.NewManagement(ro)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.NudgeDeadLettering(ctx, e.vhost, q); !errors.Is(err, broker.ErrReadOnly) {
		t.Errorf("read-only: %v, want broker.ErrReadOnly", err)
	}
	classic := topology.Queue{Name: "c", Args: topology.Args{"x-dead-letter-exchange": "x"}}
	if _, _, err := e.mgmt.NudgeDeadLettering(ctx, e.vhost, classic); err == nil || !strings.Contains(err.Error(), "not quorum") {
		t.Errorf("classic queue: %v", err)
	}
}

// TestMoveLeaderOnSingleNode reads a quorum rung's members on a real
// single node: one, its leader, so MoveLeader refuses with nothing
// changed; read-only refuses first. (The move itself needs a cluster:
// e2e's TestClusterStallCures.)
func TestMoveLeaderOnSingleNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	applyQuorumLadder(ctx, t, e, "lead", 2)
	leader, members, err := e.mgmt.QuorumMembers(ctx, e.vhost, "lead.rung.01")
	if err != nil || leader == "" || len(members) != 1 || members[0] != leader {
		t.Fatalf("members of lead.rung.01: leader %q, members %v, %v; want the one node", leader, members, err)
	}
	if _, _, err := e.mgmt.MoveLeader(ctx, e.vhost, "lead.rung.01"); err == nil || !strings.Contains(err.Error(), "no other member can lead it") {
		t.Errorf("MoveLeader on a single member: %v", err)
	}
	if _, again, err := e.mgmt.QuorumMembers(ctx, e.vhost, "lead.rung.01"); err != nil || len(again) != 1 {
		t.Errorf("members after the refusal: %v, %v", again, err)
	}
	ro := e.cfg
	ro.ReadOnly = true
	m, err := broker.NewManagement(ro)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.MoveLeader(ctx, e.vhost, "lead.rung.01"); !errors.Is(err, broker.ErrReadOnly) {
		t.Errorf("read-only: %v, want broker.ErrReadOnly", err)
	}
}

// applyQuorumLadder applies a prefix quorum ladder of 1s units, radix 2.
func applyQuorumLadder(ctx context.Context, t *testing.T, e env, name string, levels int) {
	t.Helper()
	l, err := topology.Ladder{Name: name, Vhost: e.vhost, Layout: "prefix", Unit: time.Second, Levels: levels, Radix: 2, QueueType: topology.Quorum}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.conn.Apply(ctx, l.Plan()); err != nil {
		t.Fatal(err)
	}
}
