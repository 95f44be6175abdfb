package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/health"
)

// TestFaultStallCures measures what revives a stalled quorum rung on a
// single node, each remedy on rungs of its own where the stall leaves
// enough: a policy (unstall's default before 4.3), then a restart of the
// whole node (which may stall rungs anew: counted), then whatever is left
// through a Ra member restart (unstall --rabbitmqctl). Quorum membership
// changes need a cluster: see the README's account of the stall.
func TestFaultStallCures(t *testing.T) {
	s := newStallRun(t, "cure", "cure", "cureb")
	s.stall(t)
	ver, err := s.mgmt.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var waited int64
	for _, c := range s.stalled {
		waited += c
	}
	t.Logf("%v: %d restarts stalled %d rungs (%d messages): %v", ver, s.restarts, len(s.stalled), waited, s.stalled)

	// A policy, on the first stalled rung.
	q := sortedKeys(s.stalled)[0]
	snap, err := s.mgmt.Snapshot(context.Background(), "/")
	if err != nil {
		t.Fatal(err)
	}
	queue, _ := snap.Queue(q)
	_, undo, err := s.mgmt.NudgeDeadLettering(context.Background(), "/", queue)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	still := s.stillWaiting(t)
	if err := undo(context.Background()); err != nil {
		t.Error(err)
	}
	_, stuck := still[q]
	t.Logf("%v: a policy on %s (%d waiting): drained %v (watched %s)", ver, q, s.stalled[q], !stuck, time.Since(start).Round(time.Second))
	if want := ver.PolicyNudgeRevivesDeadLettering(); stuck == want {
		t.Errorf("%v: a policy drained %s: %v, want %v (topology.Version.PolicyNudgeRevivesDeadLettering)", ver, q, !stuck, want)
	}
	if len(still) == 0 {
		s.stall(t) // the restart needs stalled rungs of its own
		still = s.stalled
	}

	// A restart of the node, on every rung still stalled. What it cures is
	// a race, like the stall it is (4.3.6, two runs: 3 of 6 and 1 of 3
	// rungs drained, the rest stayed stalled, none newly), so the test
	// records it and asserts only that the Ra member restart below cures
	// whatever is left.
	before := still
	s.n.must("down")
	s.n.must("up")
	upAt := time.Now()
	waitForExpired(t, s.mgmt, s.found)
	after := s.stillWaiting(t)
	var cured, again, fresh []string
	for q := range before {
		if _, ok := after[q]; ok {
			again = append(again, q)
		} else {
			cured = append(cured, q)
		}
	}
	for q := range after {
		if _, ok := before[q]; !ok {
			fresh = append(fresh, q)
		}
	}
	t.Logf("%v: a node restart (judged %s after it answered): of %d stalled rungs %d drained %v, %d still stalled %v; %d newly stalled %v (waiting before %v, after %v)",
		ver, time.Since(upAt).Round(time.Second), len(before), len(cured), cured, len(again), again, len(fresh), fresh, before, after)

	// A Ra member restart on whatever is stalled now.
	ctl := s.ctl(t)
	rest := map[string][]string{} // ladder → its stalled rungs
	for q := range after {
		rest[ladderOfRung(q)] = append(rest[ladderOfRung(q)], q)
	}
	for l, qs := range rest {
		start := time.Now()
		out := mustRungs(t, s.env, append([]string{"unstall", "--ladder", l, "--yes", "--rabbitmqctl", ctl}, qs...)...)
		t.Logf("%v: unstall --rabbitmqctl %v (%s):\n%s", ver, qs, time.Since(start).Round(time.Millisecond), out)
		if strings.Count(out, ": draining") != len(qs) {
			t.Errorf("%v: a Ra member restart did not drain %v:\n%s", ver, qs, out)
		}
	}
	s.deliverAll(t, waited)
}

// stillWaiting watches the ladders' rungs for three statistics intervals
// (what unstall allows a remedy) and returns those whose expired messages
// waiting never fell below the first reading.
func (s *stallRun) stillWaiting(t *testing.T) map[string]int64 {
	t.Helper()
	first := expiredNow(t, s.mgmt, s.found)
	low := map[string]int64{}
	for q, c := range first {
		low[q] = c
	}
	for end := time.Now().Add(3 * health.DefaultInterval); time.Now().Before(end); {
		time.Sleep(time.Second)
		now := expiredNow(t, s.mgmt, s.found)
		if now == nil {
			continue // the node did not answer
		}
		for q := range low {
			if now[q] < first[q] {
				delete(low, q)
			}
		}
	}
	return low
}
