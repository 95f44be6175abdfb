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
// delayed and in flight (the vhost's --json lists the queue under delayed
// retry, and its storm counts the message once), and doctor warns about the argument, about a
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

	var named struct {
		Ladders []struct {
			InFlight int64       `json:"in_flight"`
			Delayed  int64       `json:"delayed"`
			Rungs    []jsonQueue `json:"rungs"`
		} `json:"ladders"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, env, "status", "--ladder", "jobs", "--json")), &named); err != nil {
		t.Fatal(err)
	}
	st := named.Ladders
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
	// The vhost's status --json lists the queues under delayed retry, as
	// its text does (4.3 only), and its storm judgement counts the held
	// message once, though it is both a rung's and a retry queue's.
	var whole struct {
		Retry []jsonRetryQueue `json:"delayed_retry"`
		Read  bool             `json:"delayed_retry_read"`
		Storm struct {
			Held    int64 `json:"held_by_delayed_retry"`
			Holding int   `json:"holding_queues"`
		} `json:"storm"`
	}
	raw := mustRun(t, env, "status", "--json")
	if err := json.Unmarshal([]byte(raw), &whole); err != nil {
		t.Fatal(err)
	}
	switch {
	case held && (!whole.Read || len(whole.Retry) != 1 || whole.Retry[0].Name != rung || whole.Retry[0].MessagesDelayed == nil || *whole.Retry[0].MessagesDelayed != 1 ||
		whole.Storm.Held != 1 || whole.Storm.Holding != 1):
		t.Errorf("%v: status --json: want %s under delayed retry holding 1, the storm holding 1 in 1 queue:\n%s", ver, rung, raw)
	case !held && (whole.Read || len(whole.Retry) != 0 || whole.Storm.Held != 0):
		t.Errorf("%v: status --json: want no delayed retry read:\n%s", ver, raw)
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
