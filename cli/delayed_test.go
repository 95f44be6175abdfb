package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// A quorum rung with delayed retry set by its arguments holds a message a
// nack handed back. On RabbitMQ 4.3 status and status --json show it
// delayed and in flight, and doctor warns about the argument, about a
// policy that sets it on another rung, and about the held message. 3.10
// and 4.0 ignore the arguments (the message is ready again), refuse the
// policy keys, and doctor says the arguments as a note for the upgrade.
func TestStatusAndDoctorShowDelayedRetry(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	mgmt, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ver, err := mgmt.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held := ver.QuorumDelayedRetry()
	l, rung := brokertest.DelayedRung(t, cfg, "jobs")
	brokertest.AwaitStats(t, cfg, rung, func(s topology.QueueStats) bool { return s.Delayed == 1 || s.Ready == 1 })

	var st []struct {
		InFlight int64       `json:"in_flight"`
		Delayed  int64       `json:"delayed"`
		Rungs    []jsonQueue `json:"rungs"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, env, "status", "--ladder", "jobs", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	var got jsonQueue
	for _, q := range st[0].Rungs {
		if q.Queue == rung {
			got = q
		}
	}
	switch {
	case held && (st[0].Delayed != 1 || st[0].InFlight != 1 || got.Delayed != 1 || got.Ready != 0):
		t.Errorf("%v: status --json %+v, rung %+v: want 1 delayed in flight", ver, st[0], got)
	case !held && (st[0].Delayed != 0 || got.Delayed != 0 || got.Ready != 1):
		t.Errorf("%v: status --json %+v, rung %+v: want the message ready, none delayed", ver, st[0], got)
	}
	text := mustRun(t, env, "status", "--ladder", "jobs")
	if strings.Contains(text, "DELAYED") != held {
		t.Errorf("%v: DELAYED column shown %v:\n%s", ver, !held, text)
	}

	other := l.Rungs()[0].Queue
	code := brokertest.PutPolicy(t, cfg, "slow", `{"pattern":"^`+strings.ReplaceAll(regexp.QuoteMeta(other), `\`, `\\`)+`$","apply-to":"queues","definition":{"delayed-retry-type":"returned","delayed-retry-min":2000,"delayed-retry-max":8000}}`)
	if want := map[bool]int{true: http.StatusCreated, false: http.StatusBadRequest}[held]; code != want {
		t.Fatalf("%v: policy with delayed-retry keys answered %d, want %d", ver, code, want)
	}
	_, out, _ := run(t, env, "doctor", "--ladder", "jobs", "--json")
	var rep struct{ Checks []check }
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	find := func(parts ...string) string {
		for _, c := range rep.Checks {
			if containsAll(c.Text, parts) {
				return c.Status
			}
		}
		return ""
	}
	severity := map[bool]string{true: checkWarn, false: checkInfo}[held]
	if s := find("delayed retry on "+rung, "arguments x-delayed-retry-*", "type all"); s != severity {
		t.Errorf("%v: the argument: %q, want %s\n%s", ver, s, severity, out)
	}
	if s := find("delayed retry on "+other, "policy slow", "2s to 8s"); held && s != checkWarn || !held && s != "" {
		t.Errorf("%v: the policy: %q\n%s", ver, s, out)
	}
	if s := find(rung + ": 1 message held by delayed retry beyond the rung's TTL"); held && s != checkWarn || !held && s != "" {
		t.Errorf("%v: the held message: %q\n%s", ver, s, out)
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// doctor names rungs that one source configures alike together, warns
// where the broker honours delayed retry and notes it where it does not
// (a cluster mid-upgrade follows its oldest node), and says when it could
// not read the policies.
func TestCheckDelayedRetry(t *testing.T) {
	snap := fixture.DelayedRetry()
	lr := health.NewReport(topology.Discover(snap), snap, health.Watch{}).Ladders[0]
	ps := broker.Policies{Policies: []broker.Policy{{Name: "slow", Pattern: `^tasks\.rung\.0[01]`, ApplyTo: "quorum_queues", Definition: map[string]any{"delayed-retry-type": "all", "delayed-retry-min": 3000.0}}}}
	checks := func(v topology.Version, err error) []check {
		var out []check
		checkDelayedRetry(lr, snap, ps, err, v, func(area, status, format string, a ...any) {
			out = append(out, check{area, status, fmt.Sprintf(format, a...)})
		})
		return out
	}
	want := "delayed retry on tasks.rung.01.3, tasks.rung.01.2, tasks.rung.01.1 and 3 more, set by the policy slow (type all, 3s)"
	for v, status := range map[topology.Version]string{{Major: 4, Minor: 3, Patch: 6}: checkWarn, topology.Oldest(topology.Version{Major: 4, Minor: 3, Patch: 6}, topology.Version{Major: 4, Minor: 0, Patch: 5}): checkInfo} {
		got := checks(v, nil)
		if len(got) != 1 || got[0].Status != status || !strings.HasPrefix(got[0].Text, want) || got[0].Area != "ladder tasks" {
			t.Errorf("%v: %+v, want one %s %q", v, got, status, want)
		}
	}
	if got := checks(topology.Version{Major: 4, Minor: 3}, errors.New("403")); len(got) != 2 || !strings.Contains(got[0].Text, "cannot read the policies") || got[0].Status != checkInfo {
		t.Errorf("unreadable policies: %+v", got)
	}
}
