package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// status reads delayed retry beside its ladders, not across the vhost: a
// ladder's destinations with delayed retry, orders by a policy whose
// pattern names two queues and mail by its arguments, each holding the
// message its consumer rejected, show in status and status --ladder (text
// and --json, with the scope read); named, outside the ladder but named by
// a policy's ^named$, shows in status only, read by name; outside, with
// delayed retry by its arguments and a rejected message too, is neither
// shown nor asked for, and no request lists the vhost's queues unfiltered
// or sorted. 3.10 and 4.0 have no delayed retry: status asks for no
// policy and no queue beyond its ladder's, and says nothing of it.
func TestStatusReadsDelayedRetryBesideItsLadders(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	_, ver := brokertest.Management(t, cfg)
	has := ver.QuorumDelayedRetry()
	hold := brokertest.DelayedRetryHold.Milliseconds()
	want := map[bool]int{true: http.StatusCreated, false: http.StatusBadRequest}[ver.QuorumDelayedRetryPolicy()]
	for name, pattern := range map[string]string{"retry": `^(orders|billing)$`, "named": `^named$`} {
		body := fmt.Sprintf(`{"pattern":%q,"apply-to":"quorum_queues","definition":{"delayed-retry-type":"all","delayed-retry-min":%d}}`, pattern, hold)
		if code := brokertest.PutPolicy(t, cfg, name, body); code != want {
			t.Fatalf("%v: policy %s answered %d, want %d", ver, name, code, want)
		}
	}
	ch := brokertest.RawChannel(t, cfg)
	byArgs := amqp.Table{"x-queue-type": "quorum", "x-delayed-retry-type": "all", "x-delayed-retry-min": hold}
	for name, args := range map[string]amqp.Table{"orders": {"x-queue-type": "quorum"}, "mail": byArgs, "outside": byArgs, "named": {"x-queue-type": "quorum"}} {
		if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, env, "apply", "--ladder", "jobs", "--max-delay", "1m", "--target", "orders", "--target", "mail")
	for _, q := range []string{"orders", "mail", "outside", "named"} {
		brokertest.PublishTo(t, cfg, q, 1)
		brokertest.Reject(t, cfg, q)
		brokertest.AwaitStats(t, cfg, q, func(s topology.QueueStats) bool { return s.Delayed == 1 || s.Ready == 1 })
	}

	rec := recordMgmt(t, env)
	vhostPath := "/api/queues/" + url.PathEscape(cfg.Vhost)
	asked := func(args ...string) {
		t.Helper()
		for _, u := range rec.take() {
			p := u.EscapedPath()
			switch {
			case strings.Contains(p, "/outside"):
				t.Errorf("%v: rungs %s asked for a queue outside its ladders: %s", ver, strings.Join(args, " "), u)
			case p == vhostPath && (u.Query().Get("use_regex") != "true" || u.Query().Get("sort") != "name"):
				t.Errorf("%v: rungs %s walked the vhost's queues: %s", ver, strings.Join(args, " "), u)
			case strings.HasPrefix(p, "/api/policies") && (!has || slices.Contains(args, "--ladder")):
				t.Errorf("%v: rungs %s read the policies: %s", ver, strings.Join(args, " "), u)
			case strings.Contains(p, "/named") && (!has || slices.Contains(args, "--ladder")):
				t.Errorf("%v: rungs %s read a queue outside its ladder: %s", ver, strings.Join(args, " "), u)
			}
		}
	}
	type status struct {
		Retry []jsonRetryQueue `json:"delayed_retry"`
		Read  bool             `json:"delayed_retry_read"`
		Scope *struct {
			Reach        string   `json:"reach"`
			LadderQueues int      `json:"ladder_queues"`
			PolicyNamed  []string `json:"policy_named"`
			PoliciesRead bool     `json:"policies_read"`
			WholeVhost   string   `json:"whole_vhost"`
		} `json:"delayed_retry_scope"`
		Storm struct {
			Held    int64 `json:"held_by_delayed_retry"`
			Holding int   `json:"holding_queues"`
		} `json:"storm"`
	}
	read := func(args ...string) (status, string) {
		t.Helper()
		raw := mustRun(t, env, append(args, "--json")...)
		asked(args...)
		var st status
		if err := json.Unmarshal([]byte(raw), &st); err != nil {
			t.Fatalf("%v\n%s", err, raw)
		}
		return st, raw
	}
	held := func(st status) map[string]string {
		out := map[string]string{}
		for _, q := range st.Retry {
			n := "?"
			if q.MessagesDelayed != nil {
				n = fmt.Sprint(*q.MessagesDelayed)
			}
			out[q.Name] = fmt.Sprintf("%s %s %s %d", n, q.Source, q.Policy, q.MinMS)
		}
		return out
	}

	for _, args := range [][]string{{"status"}, {"status", "--ladder", "jobs"}} {
		beside := len(args) == 1
		if !has {
			st, raw := read(args...)
			if st.Read || len(st.Retry) != 0 || st.Scope != nil || st.Storm.Held != 0 {
				t.Errorf("%v: rungs %s --json read delayed retry:\n%s", ver, strings.Join(args, " "), raw)
			}
			if text := mustRun(t, env, args...); strings.Contains(text, "elayed retry") {
				t.Errorf("%v: rungs %s speaks of delayed retry:\n%s", ver, strings.Join(args, " "), text)
			}
			asked(args...)
			continue
		}
		wantHeld := map[string]string{
			"orders": fmt.Sprintf("1 policy retry %d", hold),
			"mail":   fmt.Sprintf("1 argument  %d", hold),
		}
		wantNamed := []string{}
		if beside {
			wantHeld["named"] = fmt.Sprintf("1 policy named %d", hold)
			wantNamed = []string{"named"}
		}
		var st status
		var raw string
		testutil.Eventually(t, 20*time.Second, "status to show what delayed retry holds", func() error {
			st, raw = read(args...)
			if got := held(st); !st.Read || !maps.Equal(got, wantHeld) {
				return fmt.Errorf("%v: rungs %s --json: %v, want %v\n%s", ver, strings.Join(args, " "), got, wantHeld, raw)
			}
			return nil
		})
		if sc := st.Scope; sc == nil || sc.Reach != "ladders" || sc.LadderQueues == 0 || !slices.Equal(sc.PolicyNamed, wantNamed) ||
			!sc.PoliciesRead || sc.WholeVhost != "rungs discover --delays" {
			t.Errorf("%v: rungs %s --json: scope %+v\n%s", ver, strings.Join(args, " "), st.Scope, raw)
		}
		if st.Storm.Held != int64(len(wantHeld)) || st.Storm.Holding != len(wantHeld) {
			t.Errorf("%v: rungs %s --json: storm %+v, want %d held in as many queues", ver, strings.Join(args, " "), st.Storm, len(wantHeld))
		}
		// A narrow terminal wraps a line; what it says is the same.
		text := strings.ReplaceAll(mustRun(t, env, args...), "\n  ", " ")
		asked(args...)
		wantText := []string{fmt.Sprintf("%d held by delayed retry in %d queues", len(wantHeld), len(wantHeld)), "policy retry", "argument",
			"Delayed retry read in", "rungs discover --delays"}
		for _, w := range wantText {
			if !strings.Contains(text, w) {
				t.Errorf("%v: rungs %s lacks %q:\n%s", ver, strings.Join(args, " "), w, text)
			}
		}
		if strings.Contains(text, "outside") || strings.Contains(text, "named") != beside {
			t.Errorf("%v: rungs %s: outside shown, or named shown %v:\n%s", ver, strings.Join(args, " "), !beside, text)
		}
	}
}
