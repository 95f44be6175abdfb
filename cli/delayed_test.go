package cli

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/broker/brokertest"
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
	_, ver := brokertest.Management(t, cfg)
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
