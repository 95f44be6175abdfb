package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

func TestDeadLetterCommandsRefuseBadInput(t *testing.T) {
	cases := map[string][]string{
		"peek without queue":     {"peek"},
		"peek count zero":        {"peek", "q", "-n", "0"},
		"peek count too big":     {"peek", "q", "-n", "5000"},
		"replay without from":    {"replay", "--to-queue", "x"},
		"replay without target":  {"replay", "--from", "q"},
		"replay two targets":     {"replay", "--from", "q", "--to-queue", "x", "--to-origin"},
		"replay ladder no delay": {"replay", "--from", "q", "--to-ladder", "jobs"},
		"replay delay alone":     {"replay", "--from", "q", "--to-queue", "x", "--delay", "5s"},
		"replay into itself":     {"replay", "--from", "q", "--to-queue", "q"},
		"replay park itself":     {"replay", "--from", "q", "--to-origin", "--park", "q"},
		"replay bad rate":        {"replay", "--from", "q", "--to-origin", "--rate", "fast"},
		"replay bad where":       {"replay", "--from", "q", "--to-origin", "--where", "tenant"},
		"replay bad delay":       {"replay", "--from", "q", "--to-ladder", "jobs", "--delay", "15"},
		"worker without demo":    {"worker"},
		"worker bad fail":        {"worker", "--demo", "--fail", "2"},
		"worker bad steps":       {"worker", "--demo", "--steps", "5s,soon"},
		"worker bad policy":      {"worker", "--demo", "--attempts", "0"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errs := run(t, offline, args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitUsage, out, errs)
			}
			if n := strings.Count(strings.TrimRight(errs, "\n"), "\n"); n != 0 || !strings.HasPrefix(errs, "rungs: ") {
				t.Errorf("want one line starting with 'rungs: ', got %q", errs)
			}
		})
	}
	for _, args := range [][]string{{"replay", "--from", "q", "--to-origin", "--yes"}, {"worker", "--demo"}} {
		code, _, errs := run(t, offline, append(args, "--read-only")...)
		if code == ExitOK || !strings.Contains(errs, "read-only") || strings.Contains(errs, "connection refused") {
			t.Errorf("%v --read-only: exit %d, %q", args, code, errs)
		}
	}
}

// rejectAll rejects n messages of a queue without requeueing, as a failing
// worker does, waiting for them to arrive.
func rejectAll(t *testing.T, cfg broker.Config, queue string, n int) {
	t.Helper()
	ch := brokertest.RawChannel(t, cfg)
	testutil.Eventually(t, 15*time.Second, fmt.Sprintf("%d messages to reject in %s", n, queue), func() error {
		for n > 0 {
			d, ok, err := ch.Get(queue, false)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				return fmt.Errorf("%d still to come", n)
			}
			if err := d.Nack(false, false); err != nil {
				t.Fatal(err)
			}
			n--
		}
		return nil
	})
}

func TestPeekDrawsTheHopsOfADeadLetter(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	ctx := context.Background()
	// work dead-letters what its worker rejects into dlq.
	if _, err := c.Apply(ctx, topology.Plan{Queues: []topology.Queue{
		{Name: "work", Durable: true, Args: topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"}},
		{Name: "dlq", Durable: true},
	}}); err != nil {
		t.Fatal(err)
	}
	mustRun(t, env, "apply", "--ladder", "p", "--unit", "100ms", "--levels", "4", "--radix", "2", "--target", "work")
	mustRun(t, env, "publish", "--ladder", "p", "--delay", "500ms", "--to", "work", "--count", "2", "--body", `{"order":42}`, "--header", "tenant=acme")
	rejectAll(t, cfg, "work", 2)
	// Dead-lettering is asynchronous: both must be in dlq before the peek
	// counts what is ready.
	testutil.Eventually(t, 15*time.Second, "2 messages in dlq", func() error {
		if n, err := c.Depth(ctx, "dlq"); err != nil || n != 2 {
			return fmt.Errorf("%d in dlq (%v)", n, err)
		}
		return nil
	})

	out := mustRun(t, env, "peek", "dlq")
	for _, want := range []string{
		"dlq: 2 of 2 ready message(s), from the head (classic queue)",
		"tenant=acme", `"order": 42`, "x-rungs-delay-ms=500",
		"p.rung.02  rung 2 (400ms)  expired ×1", "p.rung.00  rung 0 (100ms)  expired ×1", "work  target  rejected ×1",
		"from p.ingest key 0.1.0.1.work",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("peek output lacks %q:\n%s", want, out)
		}
	}
	var js ui.JSONPeek
	if err := json.Unmarshal([]byte(mustRun(t, env, "peek", "dlq", "-n", "1", "--json")), &js); err != nil {
		t.Fatal(err)
	}
	if js.Ready != 2 || js.Peeked != 1 || len(js.Messages) != 1 {
		t.Fatalf("peek --json: %+v", js)
	}
	m := js.Messages[0]
	if len(m.Deaths) != 3 || m.Deaths[0].Queue != "p.rung.02" || m.Deaths[0].Role != "rung" || *m.Deaths[0].Level != 2 ||
		m.Deaths[2].Queue != "work" || m.Deaths[2].Reason != "rejected" || !m.Redelivered || m.Body == nil || *m.Body != `{"order":42}` {
		t.Errorf("peek --json message: %+v", m)
	}
	// Peeking removed nothing, in read-only mode too.
	if out := mustRun(t, env, "peek", "dlq", "--read-only"); !strings.Contains(out, "2 of 2 ready") {
		t.Errorf("read-only peek:\n%s", out)
	}
}

// TestPeekOfAQuorumRungByRelease checks the peek gate against each real
// broker. Before RabbitMQ 4.3 every peek raises a quorum message's
// delivery count, which a delivery limit acts on, so a rung needs --force
// (and read-only mode refuses it). From 4.3 a peek's nack does not count:
// 25 peeks of a resting rung need no --force, leave every message in
// place with its count at 0, and none arrives early.
// rungs apply declares its quorum rungs so that reading them is safe on
// every release: on 4.0 to 4.2 with no delivery limit (x-delivery-limit -1),
// on 3.x as they are (no default limit), and 4.3 does not count a peek. So
// 25 peeks of a rung need no --force and push nothing on early. A ladder an
// earlier rungs declared keeps 4's default of 20: there peek still needs
// --force on 4.0, and apply keeps it working, with no drift, and says so.
func TestPeekOfAQuorumRungByRelease(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	ver := releaseOf(t, cfg)
	mustRun(t, env, "apply", "--ladder", "q", "--layout", "prefix", "--unit", "1s", "--levels", "7", "--radix", "2", "--queue-type", "quorum")
	wantLimit := ver.QuorumDefaultDeliveryLimit() > 0
	for _, name := range []string{"q.rung.06", "q.rung.00", "q.unroutable", "q.done"} {
		q, ok := vhostSnapshot(t, cfg).Queue(name)
		limit, has := q.Args["x-delivery-limit"]
		want := wantLimit && name != "q.done" // done is a destination: its consumers' limit is theirs
		if !ok || has != want || (has && topology.NormalizeArg(limit) != int64(-1)) {
			t.Errorf("%v: %s (found %v) has x-delivery-limit %v, want it %v", ver, name, ok, limit, want)
		}
		if q.Args["x-queue-leader-locator"] != "balanced" {
			t.Errorf("%v: %s has x-queue-leader-locator %v, want balanced", ver, name, q.Args["x-queue-leader-locator"])
		}
	}
	if out := mustRun(t, env, "plan", "--ladder", "q"); !strings.Contains(out, "drift: none") {
		t.Errorf("%v: plan of an applied quorum ladder:\n%s", ver, out)
	}
	// 66s: 64s in q.rung.06, then 2s in q.rung.01. 25 peeks on a loaded
	// machine took longer than a 16s rung once (eight tests at a time).
	const delay = 66 * time.Second
	before := time.Now()
	mustRun(t, env, "publish", "--ladder", "q", "--delay", "66s", "--count", "2")
	if ver.QuorumRequeueNackCounts() {
		// A read still raises the rung's count, so read-only refuses it.
		code, _, errs := run(t, env, "peek", "q.rung.06", "--read-only")
		if code == ExitOK || !strings.Contains(errs, "read-only") {
			t.Fatalf("%v: read-only peek of a quorum rung: exit %d, %q", ver, code, errs)
		}
	}
	for i := range 25 {
		args := []string{"peek", "q.rung.06"}
		if i%2 == 1 && !ver.QuorumRequeueNackCounts() {
			args = append(args, "--read-only") // nothing a limit acts on changes
		}
		out := mustRun(t, env, args...)
		if !strings.Contains(out, "2 of 2 ready") {
			t.Fatalf("%v: peek %d:\n%s", ver, i, out)
		}
		if i == 24 && !ver.QuorumRequeueNackCounts() && strings.Contains(out, "x-delivery-count 1") {
			t.Errorf("%v: after 24 peeks a message's delivery count rose:\n%s", ver, out)
		}
	}

	// A ladder an earlier rungs declared, with the release's default limit.
	old, err := topology.Ladder{Name: "o", Vhost: cfg.Vhost, Layout: "prefix", Unit: time.Second, Levels: 7, Radix: 2, QueueType: topology.Quorum}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, cfg)
	if _, err := c.Apply(context.Background(), old.Plan()); err != nil {
		t.Fatal(err)
	}
	mustRun(t, env, "publish", "--ladder", "o", "--delay", "66s")
	code, out, errs := run(t, env, "apply", "--ladder", "o", "--layout", "prefix", "--unit", "1s", "--levels", "7", "--radix", "2", "--queue-type", "quorum")
	if code != ExitOK || !strings.Contains(out, "drift: none") {
		t.Fatalf("%v: apply over an earlier rungs' quorum ladder: exit %d\n%s%s", ver, code, out, errs)
	}
	if warned := strings.Contains(errs, "keep RabbitMQ "+ver.String()+"'s default delivery limit of 20"); warned != (wantLimit && ver.QuorumRequeueNackCounts()) {
		t.Errorf("%v: apply over an earlier rungs' ladder warned %v: %q", ver, warned, errs)
	}
	if q, _ := vhostSnapshot(t, cfg).Queue("o.rung.06"); q.Args["x-delivery-limit"] != nil || q.Args["x-queue-leader-locator"] != nil {
		t.Errorf("%v: apply changed an existing rung's arguments: %v", ver, q.Args)
	}
	if wantLimit && ver.QuorumRequeueNackCounts() {
		code, out, errs := run(t, env, "peek", "o.rung.06")
		if code != ExitUsage || !strings.Contains(errs, "quorum ladder o") || !strings.Contains(errs, "limit is 20") || !strings.Contains(errs, "--force") || out != "" {
			t.Fatalf("%v: peek of a rung with the default limit: exit %d, %q", ver, code, errs)
		}
		if out := mustRun(t, env, "peek", "o.rung.06", "--force"); !strings.Contains(out, "1 of 1 ready") {
			t.Errorf("%v: forced peek:\n%s", ver, out)
		}
	} else if out := mustRun(t, env, "peek", "o.rung.06"); !strings.Contains(out, "1 of 1 ready") {
		t.Errorf("%v: peek of an earlier rungs' rung:\n%s", ver, out)
	}

	got := 0
	if err := testutil.Until(t, delay+30*time.Second, func() error {
		for got < 2 {
			d, ok, err := c.Get(context.Background(), "q.done", true)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				return fmt.Errorf("%d of 2 peeked messages arrived", got)
			}
			got++
			if early := before.Add(delay).Sub(d.Received); early > 0 {
				t.Errorf("%v: a message peeked 25 times arrived %s early", ver, early)
			}
		}
		return nil
	}); err != nil {
		t.Errorf("%v: %v", ver, err)
	}
}

// Drift fix (issue 19): peek --json carries the x-death a replay into a
// ladder saved aside (x-rungs-x-death), as the text view does.
func TestPeekJSONCarriesTheSavedDeath(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	if _, err := c.Apply(context.Background(), topology.Plan{Queues: []topology.Queue{{Name: "held", Durable: true}}}); err != nil {
		t.Fatal(err)
	}
	saved := []any{amqp.Table{"queue": "jobs.rung.01", "reason": "expired", "count": int64(2), "exchange": "jobs.ingest",
		"routing-keys": []any{"0.1.jobs.work"}, "time": time.Unix(1700000000, 0)}}
	ch := brokertest.RawChannel(t, cfg)
	if err := ch.PublishWithContext(context.Background(), "", "held", false, false, amqp.Publishing{
		Headers: amqp.Table{topology.HeaderSavedDeath: saved}, Body: []byte("x"),
	}); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	_ = testutil.Until(t, 15*time.Second, func() error {
		if err := json.Unmarshal([]byte(mustRun(t, env, "peek", "held", "--json")), &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return errors.New("held is empty")
		}
		return nil
	})
	if len(out.Messages) != 1 {
		t.Fatalf("peek --json: %+v", out)
	}
	var deaths []ui.JSONDeath
	if err := json.Unmarshal(out.Messages[0]["saved_deaths"], &deaths); err != nil || len(deaths) != 1 ||
		deaths[0].Queue != "jobs.rung.01" || deaths[0].Reason != "expired" || deaths[0].Count != 2 {
		t.Fatalf("saved_deaths %s: %+v %v", out.Messages[0]["saved_deaths"], deaths, err)
	}
	if text := mustRun(t, env, "peek", "held"); !strings.Contains(text, "saved x-death") {
		t.Errorf("the text view lost the saved x-death:\n%s", text)
	}
}
