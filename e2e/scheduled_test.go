package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// TestScheduledCancelSurvivesKill cancels 1 in 10 of 20,000 scheduled
// messages by header, kills rungs with SIGKILL in the middle, and runs the
// cancel again: every selected message must end up parked (a duplicate,
// when the kill fell between a copy's confirm and its original's ack, is
// counted), every other one must still wait in its rung, once.
func TestScheduledCancelSurvivesKill(t *testing.T) {
	t.Parallel()
	env := brokertest.Require(t)
	cfg := env.NewVhost(t)
	const n, every = 20000, 10
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	l, err := topology.Ladder{Name: "kill", Vhost: cfg.Vhost, Layout: "prefix", Unit: time.Second, Levels: 13, Radix: 2,
		QueueType: topology.Classic, Targets: []string{"kill.work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []topology.Plan{{Queues: []topology.Queue{{Name: "kill.work", Durable: true}}}, l.Plan()} {
		if _, err := conn.Apply(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := l.Trace(time.Hour, "kill.work")
	if err != nil {
		t.Fatal(err)
	}
	for sent := 0; sent < n; sent += 2000 {
		msgs := ops.Delayed{Trace: tr, Body: []byte("job")}.Messages(sent+1, 2000, time.Now())
		for i := range msgs {
			msgs[i].MessageID = "m" + strconv.Itoa(sent+i+1)
			sel := "no"
			if (sent+i+1)%every == 0 {
				sel = "yes"
			}
			msgs[i].Headers = map[string]any{"sel": sel, topology.HeaderDelayMS: tr.Delay.Milliseconds()}
		}
		if res, err := conn.Publish(ctx, msgs); err != nil || res.Confirmed != len(msgs) {
			t.Fatalf("publish: %+v %v", res, err)
		}
	}
	t.Logf("published %d", n)
	rungsEnv := []string{"RUNGS_URL=" + cfg.URL, "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost}
	args := []string{"scheduled", "cancel", "--ladder", "kill", "--where", "sel=yes", "--yes", "--json", "--timeout", "60s", "--window", "20"}
	park := ops.DefaultPark(l)

	r := startRungs(t, rungsEnv, args...)
	killed := r.killWhen(t, func() bool {
		d, err := conn.Depth(ctx, park)
		return err == nil && d >= n/every/4
	})
	parkedAtKill, _ := conn.Depth(ctx, park)
	t.Logf("killed: %v, with %d parked", killed, parkedAtKill)
	out := mustRungs(t, rungsEnv, args...)
	t.Logf("second run: %s", strings.TrimSpace(out))

	parked := drainIDs(t, cfg, park)
	inRungs := map[string]int{}
	for _, rung := range l.Rungs() {
		for id, c := range drainIDs(t, cfg, rung.Queue) {
			inRungs[id] += c
		}
	}
	dups := 0
	for i := 1; i <= n; i++ {
		id := "m" + strconv.Itoa(i)
		if i%every == 0 {
			switch {
			case parked[id] == 0:
				t.Errorf("%s was selected and is not parked (%d in the rungs)", id, inRungs[id])
			case inRungs[id] != 0:
				t.Errorf("%s is parked and still in the rungs", id)
			}
			dups += max(parked[id]-1, 0)
		} else if inRungs[id] != 1 || parked[id] != 0 {
			t.Errorf("%s was not selected: %d in the rungs, %d parked", id, inRungs[id], parked[id])
		}
	}
	t.Logf("%d selected, %d parked copies, %d duplicates from the kill; %d messages in the rungs", n/every, len(parked)+dups, dups, len(inRungs))
}
