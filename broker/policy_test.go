package broker_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

func TestDelayedRetries(t *testing.T) {
	qq := func(args topology.Args) topology.Queue {
		a := topology.Args{"x-queue-type": "quorum"}
		for k, v := range args {
			a[k] = v
		}
		return topology.Queue{Name: "jobs.rung.00", Args: a}
	}
	pol := func(name, pattern string, prio int, def map[string]any) topology.Policy {
		return topology.Policy{Name: name, Pattern: pattern, ApplyTo: "queues", Priority: prio, Definition: def}
	}
	retry := map[string]any{"delayed-retry-type": "returned", "delayed-retry-min": 3000.0, "delayed-retry-max": 9000.0}
	cases := map[string]struct {
		q    topology.Queue
		ps   topology.Policies
		want []topology.DelayedRetry
	}{
		"none": {q: qq(nil), ps: topology.Policies{Policies: []topology.Policy{pol("ttl", ".*", 0, map[string]any{"message-ttl": 5.0})}}},
		"argument": {q: qq(topology.Args{"x-delayed-retry-type": "all", "x-delayed-retry-min": 3000.0}),
			want: []topology.DelayedRetry{{Source: "argument", Type: "all", Min: 3 * time.Second}}},
		"argument without a minimum does nothing": {q: qq(topology.Args{"x-delayed-retry-type": "all"})},
		"disabled": {q: qq(topology.Args{"x-delayed-retry-type": "disabled", "x-delayed-retry-min": 3000.0})},
		"the policy of highest priority applies": {q: qq(nil), ps: topology.Policies{Policies: []topology.Policy{
			pol("low", "^jobs", 1, retry), pol("high", "^jobs", 2, map[string]any{"message-ttl": 5.0}), pol("other", "^mail", 9, retry)}}},
		"policy and operator policy": {q: qq(nil), ps: topology.Policies{Policies: []topology.Policy{pol("slow", "^jobs", 0, retry)}, Operator: []topology.Policy{pol("ops", ".*", 0, retry)}},
			want: []topology.DelayedRetry{
				{Source: "policy", Name: "slow", Type: "returned", Min: 3 * time.Second, Max: 9 * time.Second},
				{Source: "operator policy", Name: "ops", Type: "returned", Min: 3 * time.Second, Max: 9 * time.Second}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := topology.DelayedRetries(tc.q, tc.ps); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DelayedRetries() = %+v, want %+v", got, tc.want)
			}
		})
	}
	d := topology.DelayedRetry{Source: "policy", Name: "slow", Type: "returned", Min: 3 * time.Second, Max: 9 * time.Second}
	if got, want := d.String(), "policy slow (type returned, 3s–9s)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// A quorum rung with delayed retry configured and a message handed back
// by a nack: RabbitMQ 4.3 holds it as messages_delayed, read in the one
// statistics request and counted in the depth; 3.10 and 4.0 omit the
// field and make the message ready again. The argument is listed as a
// source on every version; the policy keys only 4.3 accepts.
func TestDelayedRetryOnRealBroker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ver, err := e.mgmt.Version(ctxFor(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	_, rung := brokertest.DelayedRung(t, e.cfg, "jobs")
	s := brokertest.AwaitStats(t, e.cfg, rung, func(s topology.QueueStats) bool { return s.Delayed == 1 || s.Ready == 1 })
	if ver.QuorumDelayedRetry() {
		if s.Delayed != 1 || s.Ready != 0 || s.Messages() != 1 {
			t.Fatalf("%v: stats %+v, want 1 delayed, none ready", ver, s)
		}
	} else if s.Delayed != 0 || s.Ready != 1 {
		t.Fatalf("%v: stats %+v, want the message ready again and none delayed", ver, s)
	}
	if _, present := rawQueue(t, e, rung)["messages_delayed"]; present != ver.QuorumDelayedRetry() {
		t.Errorf("%v: messages_delayed present %v", ver, present)
	}

	code := brokertest.PutPolicy(t, e.cfg, "slow", `{"pattern":"^jobs\\.","apply-to":"queues","definition":{"delayed-retry-type":"returned","delayed-retry-min":2000}}`)
	want := []topology.DelayedRetry{{Source: "argument", Type: "all", Min: brokertest.DelayedRetryHold}}
	if ver.QuorumDelayedRetry() {
		if code != http.StatusCreated {
			t.Fatalf("%v: policy with delayed-retry keys: %d", ver, code)
		}
		want = append(want, topology.DelayedRetry{Source: "policy", Name: "slow", Type: "returned", Min: 2 * time.Second})
	} else if code != http.StatusBadRequest {
		// Measured on 3.10.8 and 4.0.5: "are not recognised policy settings".
		t.Fatalf("%v: policy with delayed-retry keys answered %d, want 400", ver, code)
	}
	ps, err := e.mgmt.Policies(ctxFor(t, 10*time.Second), e.vhost)
	if err != nil || ps.OperatorUnread {
		t.Fatalf("Policies: %+v %v", ps, err)
	}
	snap, err := e.mgmt.Snapshot(ctxFor(t, 10*time.Second), e.vhost)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := snap.Queue(rung)
	if got := topology.DelayedRetries(q, ps); !reflect.DeepEqual(got, want) {
		t.Errorf("%v: DelayedRetries() = %+v, want %+v", ver, got, want)
	}
}

func rawQueue(t *testing.T, e env, queue string) map[string]any {
	t.Helper()
	code, body := mgmtDo(t, e, http.MethodGet, "queues/"+url.PathEscape(e.vhost)+"/"+url.PathEscape(queue), "")
	var q map[string]any
	if err := json.Unmarshal(body, &q); err != nil || code != http.StatusOK {
		t.Fatalf("GET queue %s: %d %v", queue, code, err)
	}
	return q
}

// mgmtDo sends one request to the management API as the test's user and
// returns the status code and body.
func mgmtDo(t *testing.T, e env, method, path, body string) (int, []byte) {
	t.Helper()
	u, err := url.Parse(e.cfg.URL)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	mgmt, _ := e.cfg.ManagementURL()
	req, _ := http.NewRequest(method, mgmt+"/api/"+path, strings.NewReader(body))
	req.SetBasicAuth(u.User.Username(), pw)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, out
}
