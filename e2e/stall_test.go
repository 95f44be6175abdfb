package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// TestFaultStalledQuorumLadder restarts a node of its own while a quorum
// ladder is in flight, which leaves some rungs' expired messages waiting
// to be dead-lettered for good (rabbitmq-server #12625): the console,
// status and doctor must say the rungs are stalled within a few refreshes;
// unstall must refuse bad input and change nothing then, and get the rungs
// moving (one through rabbitmqctl, the rest through a policy); every
// confirmed message must arrive, none early, duplicates counted.
func TestFaultStalledQuorumLadder(t *testing.T) {
	n := startNode(t, "stall", 0, nil)
	env := n.rungsEnv()
	const (
		ladder  = "stall"
		perRun  = 134 // per delay, 15 delays: 2,010 messages
		minimum = 5
		maximum = 19
	)
	mustRungs(t, env, "apply", "--ladder", ladder, "--unit", "1ms", "--levels", "6", "--queue-type", "quorum")
	mgmt, err := broker.NewManagement(n.config())
	if err != nil {
		t.Fatal(err)
	}
	f := topology.Found{Ladder: ladderOf(t, mgmt, ladder)}

	m := newTerm(t, 120, 40, env, rungsBinary(t)+" --ladder "+ladder+" --refresh 1s; echo rungs-exit=$?; sleep 600")
	m.waitFor("the ladder view", text("ladders › "+ladder), 30*time.Second)

	// The stall is a race inside the broker: a restart does not always
	// cause one. What stalls is a rung whose messages expire while the
	// node is down or booting: at boot the queue expires them before the
	// dead-letter exchange (3.10: "Cannot forward any dead-letter messages
	// ... exchange ... does not exist") or the next rungs (4.0: "... this
	// can happen if the dead-letter routing topology is misconfigured") are
	// there, logged once, and its worker never tries again. Each attempt
	// keeps the node down until a different point of level 3 (4s to 16s
	// rungs) after the publish: 3.10 stalls most often when all of level 3
	// expired while it was down, 4.0 when the 4s rung expires as it boots.
	// Every attempt's messages count.
	downUntil := []time.Duration{21 * time.Second, 0, 10 * time.Second, 21 * time.Second, 0}
	confirmed := map[string]int{}         // id prefix → confirmed
	publishedAt := map[string]time.Time{} // id prefix → when its publish began
	var upAt time.Time
	stalled := map[string]int64{}
	for attempt := 1; attempt <= len(downUntil) && len(stalled) == 0; attempt++ {
		started := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		for d := minimum; d <= maximum; d++ {
			prefix := fmt.Sprintf("a%d-%02ds-", attempt, d)
			publishedAt[prefix] = time.Now()
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rungs(t, env, "publish", "--ladder", ladder, "--delay", strconv.Itoa(d)+"s", "--count", strconv.Itoa(perRun), "--id-prefix", prefix, "--json")
				var rep publishReport
				if err := json.Unmarshal([]byte(r.out), &rep); err != nil || r.code != 0 {
					t.Errorf("publish %s: exit %d %v\n%s%s", prefix, r.code, err, r.out, r.errOut)
				}
				mu.Lock()
				confirmed[prefix] = rep.Confirmed
				mu.Unlock()
			}()
		}
		wg.Wait()
		n.must("down")
		time.Sleep(time.Until(started.Add(downUntil[attempt-1])))
		n.must("up")
		upAt = time.Now()
		stalled = waitForExpired(t, mgmt, f)
		t.Logf("attempt %d (down from the publish's end until %s after its start, %s): rungs with expired messages waiting: %v",
			attempt, downUntil[attempt-1], upAt.Sub(started).Round(time.Second), stalled)
	}
	if len(stalled) == 0 {
		t.Fatalf("%d restarts in flight left no rung with expired messages waiting; the broker did not stall", len(downUntil))
	}
	var total int64
	for _, c := range stalled {
		total += c
	}

	// Detection: the console, status and doctor.
	m.waitFor("the console's stalled verdict", regexp.MustCompile(`✗ \d+ stalled`), 2*time.Minute)
	consoleAt := time.Since(upAt)
	r := rungs(t, env, "status", "--ladder", ladder, "--json")
	var st []struct {
		Stalled int `json:"stalled"`
	}
	if err := json.Unmarshal([]byte(r.out), &st); err != nil || len(st) != 1 || st[0].Stalled == 0 {
		t.Errorf("status --json does not report the stall (%v): %s%s", err, r.out, r.errOut)
	}
	doctorStart := time.Now()
	r = rungs(t, env, "doctor", "--ladder", ladder)
	doctorTook := time.Since(doctorStart)
	if r.code != 1 || !strings.Contains(r.out, "is stalled") || !strings.Contains(r.out, "rungs unstall --ladder "+ladder) || !strings.Contains(r.out, "likely cause") {
		t.Errorf("doctor: exit %d, want 1 naming the stalled rungs, the cause and the remedy\n%s%s", r.code, r.out, r.errOut)
	}
	t.Logf("stall of %d messages in %v: the console showed it %s after the node answered; doctor, run then, took %s to name it",
		total, stalled, consoleAt.Round(time.Second), doctorTook.Round(time.Second))

	// Bad input changes nothing: no policy, the same rungs still waiting.
	queues := sortedKeys(stalled)
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"unstall", "--ladder", ladder, ladder + ".rung.09.1", "--yes"}, "not a rung of ladder"},
		{[]string{"unstall", "--ladder", "nope", "--yes"}, `no ladder "nope"`},
		{[]string{"unstall", "--ladder", ladder, "--yes", "--read-only"}, "read-only"},
		{[]string{"unstall", "--ladder", ladder, queues[0], "--yes", "--rabbitmqctl", "false"}, "cannot reach the node"},
		{[]string{"unstall", "--ladder", ladder, queues[0]}, "needs --yes"},
	} {
		r := rungs(t, env, bad.args...)
		line := strings.TrimRight(r.errOut, "\n")
		if r.code == 0 || strings.Contains(line, "\n") || !strings.Contains(line, bad.want) {
			t.Errorf("rungs %s: exit %d, want one line naming %q:\n%s", strings.Join(bad.args, " "), r.code, bad.want, r.errOut)
		}
	}
	if ps := brokertest.Policies(t, broker.Config{URL: n.url(), MgmtURL: n.mgmtURL()}); len(ps) > 0 {
		t.Errorf("bad input left policies behind: %v", ps)
	}
	if again := expiredNow(t, mgmt, f); len(again) != len(stalled) {
		t.Errorf("after bad input, rungs waiting: %v, before: %v", again, stalled)
	}

	// The remedies: the first rung through the management API (a policy),
	// the rest, if any, by a Ra member restart through rabbitmqctl.
	start := time.Now()
	out := mustRungs(t, env, "unstall", "--ladder", ladder, queues[0], "--yes")
	t.Logf("unstall %s (policy, %s):\n%s", queues[0], time.Since(start).Round(time.Millisecond), out)
	if !strings.Contains(out, "declared policy") || !strings.Contains(out, queues[0]+": draining") {
		t.Errorf("unstall did not drain %s:\n%s", queues[0], out)
	}
	if len(queues) > 1 {
		script, err := filepath.Abs("../scripts/broker.sh")
		if err != nil {
			t.Fatal(err)
		}
		ctl := "env " + strings.Join(n.env, " ") + " bash " + script + " ctl"
		start = time.Now()
		args := append([]string{"unstall", "--ladder", ladder, "--yes", "--rabbitmqctl", ctl}, queues[1:]...)
		out = mustRungs(t, env, args...)
		t.Logf("unstall %v (rabbitmqctl, %s):\n%s", queues[1:], time.Since(start).Round(time.Millisecond), out)
		if strings.Count(out, "restarted Ra member") != len(queues)-1 || strings.Count(out, ": draining") != len(queues)-1 {
			t.Errorf("unstall --rabbitmqctl did not restart and drain %v:\n%s", queues[1:], out)
		}
	}
	if ps := brokertest.Policies(t, broker.Config{URL: n.url(), MgmtURL: n.mgmtURL()}); len(ps) > 0 {
		t.Errorf("unstall left policies behind: %v", ps)
	}
	m.waitFor("the console's all-clear", text("✓ moving"), 2*time.Minute)

	// Every confirmed message arrives, none early; duplicates are counted.
	got := map[string]*arrivals{}
	want := 0
	for p, c := range confirmed {
		got[p] = newArrivals()
		want += c
	}
	seen := func() int {
		s := 0
		for _, a := range got {
			s += len(a.seen)
		}
		return s
	}
	foreign := 0
	consumeUntil(t, n.config(), ladder+".done", 3*time.Minute, 30*time.Second,
		func(d broker.Delivery) {
			i := strings.LastIndexByte(d.MessageID, '-')
			if i < 0 || got[d.MessageID[:i+1]] == nil {
				foreign++
				return
			}
			p := d.MessageID[:i+1]
			got[p].record(d, p, perRun, publishedAt[p])
		},
		func() bool { return seen() >= want })
	lost, dups, early := 0, 0, 0
	for p, a := range got {
		lost += confirmed[p] - len(a.seen)
		dups += a.duplicates()
		early += len(a.early)
		if len(a.early) > 0 {
			t.Errorf("%s: %d arrived early, e.g. %v", p, len(a.early), a.early[:min(3, len(a.early))])
		}
	}
	t.Logf("confirmed %d, arrived %d distinct, %d duplicates, %d early, %d foreign; %d had waited in stalled rungs",
		want, seen(), dups, early, foreign, total)
	if lost > 0 {
		t.Errorf("lost %d confirmed messages", lost)
	}
	if foreign > 0 {
		t.Errorf("%d messages nobody sent", foreign)
	}
	m.keys("q")
	m.waitFor("a clean exit", text("rungs-exit=0"), 10*time.Second)
}

// ladderOf reads the named ladder from the node.
func ladderOf(t *testing.T, m *broker.Management, name string) topology.Ladder {
	t.Helper()
	snap, err := m.Snapshot(context.Background(), "/")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range topology.Discover(snap) {
		if f.Ladder.Name == name {
			return f.Ladder
		}
	}
	t.Fatalf("no ladder %s", name)
	return topology.Ladder{}
}

// expiredNow is each rung of f with expired messages waiting, by count.
func expiredNow(t *testing.T, m *broker.Management, f topology.Found) map[string]int64 {
	t.Helper()
	qs, err := m.Stats(context.Background(), "/")
	if err != nil {
		return nil // the node may be starting
	}
	rungs := map[string]bool{}
	for _, r := range f.Ladder.Rungs() {
		rungs[r.Queue] = true
	}
	out := map[string]int64{}
	for _, q := range qs {
		if rungs[q.Name] && q.Stats.Expired > 0 {
			out[q.Name] = q.Stats.Expired
		}
	}
	return out
}

// waitForExpired waits until the restarted node's statistics show either
// rungs whose expired messages wait (returned) or an empty ladder (nil).
func waitForExpired(t *testing.T, m *broker.Management, f topology.Found) map[string]int64 {
	t.Helper()
	start := time.Now()
	for time.Since(start) < 90*time.Second {
		time.Sleep(time.Second)
		qs, err := m.Stats(context.Background(), "/")
		if err != nil {
			continue
		}
		var inFlight int64
		snap := topology.Snapshot{Queues: qs}
		for _, r := range f.Ladder.Rungs() {
			q, _ := snap.Queue(r.Queue)
			inFlight += q.Stats.Messages()
		}
		// Twice, a statistics interval apart: a healthy rung's waiting
		// count drains between them.
		if e := expiredNow(t, m, f); len(e) > 0 {
			time.Sleep(6 * time.Second)
			if again := expiredNow(t, m, f); len(again) > 0 {
				return again
			}
		}
		// A restarted quorum queue reports no figures for a statistics
		// interval or two: an empty ladder means something only later.
		if inFlight == 0 && time.Since(start) > 30*time.Second {
			return nil
		}
	}
	return nil
}

func sortedKeys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
