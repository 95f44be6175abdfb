package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// brokerEnv gives a test its own vhost and the environment that points
// rungs at it.
// releaseOf is the RabbitMQ release of the broker cfg names.
func releaseOf(t *testing.T, cfg broker.Config) topology.Version {
	t.Helper()
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func brokerEnv(t *testing.T) (map[string]string, broker.Config) {
	t.Helper()
	cfg := brokertest.NewVhost(t)
	return map[string]string{"RUNGS_URL": cfg.URL, "RUNGS_MGMT_URL": cfg.MgmtURL, "RUNGS_VHOST": cfg.Vhost}, cfg
}

func mustRun(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	code, out, errs := run(t, env, args...)
	if code != ExitOK {
		t.Fatalf("rungs %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func dial(t *testing.T, cfg broker.Config) *broker.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// drain takes every message from a queue within the deadline, waiting for n.
func drain(t *testing.T, c *broker.Conn, queue string, n int, within time.Duration) []broker.Delivery {
	t.Helper()
	var got []broker.Delivery
	_ = testutil.Until(t, within, func() error {
		for len(got) < n {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			d, ok, err := c.Get(ctx, queue, true)
			cancel()
			if err != nil {
				t.Fatalf("get %s: %v", queue, err)
			}
			if !ok {
				return errors.New(queue + " is empty")
			}
			got = append(got, d)
		}
		return nil
	})
	return got
}

func TestApplyPlanPublishStatusPurgeTeardown(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	ladder := []string{"--ladder", "jobs", "--unit", "10ms", "--levels", "10", "--radix", "2"}
	out := mustRun(t, env, append([]string{"apply"}, ladder...)...)
	if !strings.Contains(out, "drift: none") {
		t.Fatalf("apply:\n%s", out)
	}
	// Shape flags are discovered from now on.
	if out := mustRun(t, env, "plan", "--ladder", "jobs"); !strings.Contains(out, "10 levels of 10ms") {
		t.Fatalf("plan did not use the discovered shape:\n%s", out)
	}
	if out := mustRun(t, env, "trace", "250ms", "--ladder", "jobs"); !strings.Contains(out, "checked: the broker's bindings route it exactly this way") {
		t.Fatalf("trace:\n%s", out)
	}
	var res struct{ Confirmed, Requested int }
	if err := json.Unmarshal([]byte(mustRun(t, env, "publish", "--ladder", "jobs", "--delay", "300ms", "--count", "20", "--json", "--body", `{"job":1}`)), &res); err != nil || res.Confirmed != 20 {
		t.Fatalf("publish: %+v %v", res, err)
	}
	c := dial(t, cfg)
	got := drain(t, c, "jobs.done", 20, 15*time.Second)
	if len(got) != 20 {
		t.Fatalf("%d of 20 messages reached jobs.done", len(got))
	}
	if string(got[0].Body) != `{"job":1}` {
		t.Fatalf("body %q", got[0].Body)
	}
	// A message held in a long rung, then purge the whole ladder.
	mustRun(t, env, "publish", "--ladder", "jobs", "--delay", "10s", "--count", "3")
	code, _, errs := run(t, env, "purge", "--ladder", "jobs")
	if code != ExitUsage || !strings.Contains(errs, "--yes") {
		t.Fatalf("purge without --yes: exit %d %s", code, errs)
	}
	if out := mustRun(t, env, "purge", "--ladder", "jobs", "--yes"); !strings.Contains(out, "purged 3 message(s)") {
		t.Fatalf("purge:\n%s", out)
	}
	mustRun(t, env, "teardown", "--ladder", "jobs", "--yes")
	if out := mustRun(t, env, "discover"); !strings.Contains(out, "no ladders") {
		t.Fatalf("after teardown:\n%s", out)
	}
}

func TestPlanExitsThreeOnDrift(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	mustRun(t, env, "apply", "--ladder", "d", "--levels", "3", "--radix", "2")
	// A left-over rung from a taller ladder is drift.
	c := dial(t, cfg)
	extra := topology.Plan{Queues: []topology.Queue{{Name: "d.rung.07", Durable: true}}}
	if _, err := c.Apply(context.Background(), extra); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, env, "plan", "--ladder", "d")
	if code != ExitDrift || !strings.Contains(out, "extra queue d.rung.07") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestApplyConflictNamesQueueAndArgumentAndDeletesNothing(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	// Someone else's queue where the ladder wants its done queue.
	c := dial(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Apply(ctx, topology.Plan{Queues: []topology.Queue{{Name: "c.done", Durable: true, Args: topology.Args{"x-max-length": int64(5)}}}}); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, env, "apply", "--ladder", "c", "--levels", "3", "--radix", "2", "--unit", "1s", "--queue-type", "classic")
	if code != ExitError || !strings.Contains(errs, "c.done") || !strings.Contains(errs, "x-max-length") || !strings.Contains(errs, "nothing was declared") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if out := mustRun(t, env, "discover", "--json"); strings.Contains(out, `"name": "c"`) {
		t.Fatalf("apply declared part of the ladder:\n%s", out)
	}
}

// After the default radix changed, a ladder applied before must keep its
// shape: flags not given come from the broker, and a shape that differs is
// refused before anything is declared, since two shapes of one ladder share
// its exchanges and would deliver messages twice.
func TestApplyKeepsAnExistingLaddersShapeAndRefusesAnother(t *testing.T) {
	t.Parallel()
	env, _ := brokerEnv(t)
	// A classic ladder, as those made before quorum became the default:
	// re-applied without --queue-type it stays classic.
	mustRun(t, env, "apply", "--ladder", "k", "--radix", "2", "--max-delay", "1h", "--target", "k.work", "--queue-type", "classic")
	before := mustRun(t, env, "discover", "--json")
	out := mustRun(t, env, "apply", "--ladder", "k", "--max-delay", "1h")
	if !strings.Contains(out, "12 levels of 1s, max delay") || strings.Contains(out, "radix") || !strings.Contains(out, "classic queues") {
		t.Fatalf("re-apply without --radix changed the shape:\n%s", out)
	}
	for _, args := range [][]string{
		{"--radix", "16"},
		{"--radix", "16", "--max-delay", "1h"},
		{"--unit", "2s"},
		{"--levels", "13"},
		{"--queue-type", "quorum"},
	} {
		code, _, errs := run(t, env, append([]string{"apply", "--ladder", "k"}, args...)...)
		if code != ExitError || !strings.Contains(errs, "already exists in vhost") || !strings.Contains(errs, "12 levels of 1s, radix 2, classic") ||
			!strings.Contains(errs, "nothing was declared") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("apply %v: exit %d: %s", args, code, errs)
		}
	}
	if after := mustRun(t, env, "discover", "--json"); after != before {
		t.Fatalf("a refused apply changed the broker:\nbefore %s\nafter %s", before, after)
	}
	// Other commands resolve the same way: plan with --unit shows the
	// binary ladder at 2s, not a radix-16 one.
	code, out, errs := run(t, env, "plan", "--ladder", "k", "--unit", "2s")
	if code != ExitDrift || !strings.Contains(out, "12 levels of 2s") || strings.Contains(out, "radix 16") {
		t.Fatalf("plan --unit 2s: exit %d\n%s%s", code, out, errs)
	}
}

// The other direction: a ladder made with the default is quorum, keeps
// quorum when re-applied or planned without --queue-type, and an explicit
// --queue-type classic is refused with the one-line shape error.
func TestApplyKeepsAnExistingQuorumLadderAndRefusesClassic(t *testing.T) {
	t.Parallel()
	env, _ := brokerEnv(t)
	out := mustRun(t, env, "apply", "--ladder", "qk", "--radix", "2", "--levels", "4")
	if !strings.Contains(out, "quorum queues") {
		t.Fatalf("a new ladder without --queue-type is not quorum:\n%s", out)
	}
	before := mustRun(t, env, "discover", "--json")
	if !strings.Contains(before, `"queue_type": "quorum"`) && !strings.Contains(before, `"queue_type":"quorum"`) {
		t.Fatalf("discover does not see a quorum ladder:\n%s", before)
	}
	if out := mustRun(t, env, "apply", "--ladder", "qk"); !strings.Contains(out, "quorum queues") {
		t.Fatalf("re-apply without --queue-type changed the type:\n%s", out)
	}
	code, out, errs := run(t, env, "plan", "--ladder", "qk")
	if code != ExitOK || !strings.Contains(out, "quorum queues") {
		t.Fatalf("plan of the existing ladder: exit %d\n%s%s", code, out, errs)
	}
	code, _, errs = run(t, env, "apply", "--ladder", "qk", "--queue-type", "classic")
	if code != ExitError || !strings.Contains(errs, "already exists in vhost") || !strings.Contains(errs, "4 levels of 1s, radix 2, quorum") ||
		!strings.Contains(errs, "radix 2, classic") || !strings.Contains(errs, "nothing was declared") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("apply --queue-type classic: exit %d: %s", code, errs)
	}
	if after := mustRun(t, env, "discover", "--json"); after != before {
		t.Fatalf("a refused apply changed the broker:\nbefore %s\nafter %s", before, after)
	}
}

func TestPublishRefusesUnroutableAndUnknownLadders(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	mustRun(t, env, "apply", "--ladder", "u", "--levels", "4", "--radix", "2")
	code, _, errs := run(t, env, "publish", "--ladder", "u", "--delay", "1s", "--to", "nobody")
	if code != ExitError || !strings.Contains(errs, "nothing published") || !strings.Contains(errs, "u.unroutable") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, _, errs = run(t, env, "publish", "--ladder", "ghost", "--delay", "1s")
	if code != ExitError || !strings.Contains(errs, `no ladder "ghost"`) {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// Asked for by layout, a ladder of another layout under the name is not it.
	code, _, errs = run(t, env, "publish", "--ladder", "u", "--layout", "suffix", "--delay", "1s")
	if code != ExitError || !strings.Contains(errs, `no suffix ladder "u"`) {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, _, errs = run(t, env, "publish", "--ladder", "u", "--delay", "16s")
	if code != ExitUsage || !strings.Contains(errs, "exceeds") {
		t.Fatalf("over max: exit %d: %s", code, errs)
	}
	// Nothing of the refused publishes is anywhere.
	c := dial(t, cfg)
	for _, q := range append(queueNames(t, env, "u"), "u.done", "u.unroutable") {
		if got := drain(t, c, q, 1, 300*time.Millisecond); len(got) != 0 {
			t.Fatalf("%s holds a message after refused publishes", q)
		}
	}
}

func queueNames(t *testing.T, env map[string]string, ladder string) []string {
	t.Helper()
	var st struct {
		Ladders []struct {
			Rungs []struct{ Queue string }
		}
	}
	if err := json.Unmarshal([]byte(mustRun(t, env, "status", "--ladder", ladder, "--json")), &st); err != nil {
		t.Fatal(err)
	}
	var qs []string
	for _, r := range st.Ladders[0].Rungs {
		qs = append(qs, r.Queue)
	}
	return qs
}

// An operator who deployed the seed's Terraform module points rungs at it:
// recognised, traced, published into and purged.
func TestSuffixLadderFromTheSeed(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	mustRun(t, env, "apply", "--ladder", "example", "--layout", "suffix", "--max-delay", "15s", "--unit", "100ms")
	out := mustRun(t, env, "discover")
	if !strings.Contains(out, "example") || !strings.Contains(out, "suffix") {
		t.Fatalf("discover:\n%s", out)
	}
	out = mustRun(t, env, "trace", "1.3s", "--ladder", "example")
	if !strings.Contains(out, "key      0.0.0.0.1.1.0.1") || !strings.Contains(out, "example.delay.8") || !strings.Contains(out, "checked:") {
		t.Fatalf("trace:\n%s", out)
	}
	mustRun(t, env, "publish", "--ladder", "example", "--delay", "700ms", "--count", "4")
	c := dial(t, cfg)
	if got := drain(t, c, "example.done", 4, 10*time.Second); len(got) != 4 {
		t.Fatalf("%d of 4 reached example.done", len(got))
	}
	// 12.8s: all of it in one rung, long enough for a loaded machine to
	// purge it there (1.5s left 0.8s in its first rung, too short once).
	mustRun(t, env, "publish", "--ladder", "example", "--delay", "12.8s", "--count", "2")
	if out := mustRun(t, env, "purge", "example.delay.128", "--yes"); !strings.Contains(out, "purged 2") {
		t.Fatalf("purge:\n%s", out)
	}
}

// NServiceBus' infrastructure is recognised and published into.
func TestNServiceBusLadder(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	if _, err := c.Apply(context.Background(), topology.Plan{Queues: []topology.Queue{{Name: "sales", Durable: true}}}); err != nil {
		t.Fatal(err)
	}
	mustRun(t, env, "apply", "--layout", "nsb", "--target", "sales")
	out := mustRun(t, env, "discover")
	if !strings.Contains(out, "nsb.v2") || !strings.Contains(out, "sales") {
		t.Fatalf("discover:\n%s", out)
	}
	out = mustRun(t, env, "publish", "--ladder", "nsb.v2", "--delay", "1s", "--to", "sales")
	if !strings.Contains(out, "nsb.v2.delay-level-00") {
		t.Fatalf("publish:\n%s", out)
	}
	if got := drain(t, c, "sales", 1, 15*time.Second); len(got) != 1 {
		t.Fatal("the delayed message did not reach sales")
	}
}

// Without the management API apply cannot check what exists; it says so
// before declaring, in one line that names no password.
func TestApplyWithoutManagementWarns(t *testing.T) {
	t.Parallel()
	env, _ := brokerEnv(t)
	env["RUNGS_MGMT_URL"] = "http://guest:s3cret@127.0.0.1:1"
	code, out, errs := run(t, env, "apply", "--ladder", "w", "--radix", "2", "--levels", "3")
	if !strings.Contains(errs, "cannot check for conflicting objects or a ladder of another shape") || strings.Contains(errs+out, "s3cret") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if code != ExitOK || !strings.Contains(out, `applied direct ladder "w"`) {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
}

// Without the management API publish cannot read the ladder's shape. It
// refuses, in one line and sending nothing, unless the flags give the
// shape; with them its keys route as the ladder's bindings expect.
func TestPublishWithoutManagementNeedsTheShape(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	shape := []string{"--ladder", "ws", "--layout", "prefix", "--unit", "100ms", "--levels", "5", "--radix", "2"}
	mustRun(t, env, append([]string{"apply", "--queue-type", "classic"}, shape...)...)
	env["RUNGS_MGMT_URL"] = "http://guest:s3cret@127.0.0.1:1"
	a := watch(t, c, "ws.done", "ws.unroutable")

	code, out, errs := run(t, env, "publish", "--ladder", "ws", "--delay", "1s", "--id-prefix", "guess-")
	line := strings.TrimRight(errs, "\n")
	if code == ExitOK || strings.Contains(line, "\n") || !strings.Contains(line, "nothing published: the management API did not answer") ||
		!strings.Contains(line, "give --layout, --unit, --levels and --radix") || strings.Contains(out+errs, "s3cret") {
		t.Fatalf("publish without the management API or the shape: exit %d\n%s%s", code, out, errs)
	}
	// A management API that answers but refuses the user is not "did not
	// answer": the line says what it said and what to change.
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":"not_authorised","reason":"Not management user"}`)
	}))
	defer refusing.Close()
	refused := maps.Clone(env)
	refused["RUNGS_MGMT_URL"] = refusing.URL
	code, out, errs = run(t, refused, "publish", "--ladder", "ws", "--delay", "1s", "--id-prefix", "guess-")
	if line := strings.TrimRight(errs, "\n"); code == ExitOK || strings.Contains(line, "\n") || !strings.Contains(line, "the management API refused the user") ||
		!strings.Contains(line, "Not management user") || !strings.Contains(line, "management (or monitoring) tag") {
		t.Fatalf("publish with a management API that refuses the user: exit %d\n%s%s", code, out, errs)
	}
	p := published{prefix: "shaped-", delay: time.Second, at: time.Now()}
	code, out, errs = run(t, env, append([]string{"publish", "--delay", "1s", "--count", "2", "--id-prefix", "shaped-"}, shape...)...)
	if code != ExitOK || !strings.Contains(errs, "route not checked") || strings.Contains(out+errs, "s3cret") {
		t.Fatalf("publish with the shape given: exit %d\n%s%s", code, out, errs)
	}
	checkOnTime(t, a.wait(t, "ws.done", 2, time.Minute), notLate, p)
	time.Sleep(300 * time.Millisecond)
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.got["ws.unroutable"]); n != 0 {
		t.Errorf("%d message(s) in ws.unroutable", n)
	}
}

// On the real broker: a new quorum ladder is direct from RabbitMQ 3.13 and
// prefix before it (with a note saying why); a classic one is direct on both.
func TestNewLadderLayoutFollowsBrokerVersion(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	v := releaseOf(t, cfg)
	want := "direct"
	if v.LosesBCCOnDeadLetterRetry() {
		want = "prefix"
	}
	code, out, errs := run(t, env, "apply", "--ladder", "q", "--max-delay", "1m")
	if code != ExitOK || !strings.Contains(out, "applied "+want+` ladder "q"`) {
		t.Fatalf("RabbitMQ %s, quorum: exit %d, want a %s ladder\n%s%s", v, code, want, out, errs)
	}
	if note := strings.Contains(errs, "is prefix, not direct"); note != (want == "prefix") {
		t.Errorf("RabbitMQ %s: the note is there: %v, want %v\n%s", v, note, want == "prefix", errs)
	}
	code, out, errs = run(t, env, "apply", "--ladder", "c", "--max-delay", "1m", "--queue-type", "classic")
	if code != ExitOK || !strings.Contains(out, `applied direct ladder "c"`) || errs != "" {
		t.Fatalf("RabbitMQ %s, classic: exit %d\n%s%s", v, code, out, errs)
	}
	// Applied again without flags, each keeps the layout it has.
	for name, layout := range map[string]string{"q": want, "c": "direct"} {
		if out := mustRun(t, env, "apply", "--ladder", name); !strings.Contains(out, "applied "+layout+" ladder") {
			t.Errorf("re-apply %s:\n%s", name, out)
		}
	}
}

// A quorum ladder declared by an earlier rungs has the at-least-once
// strategy on its done and unroutable queues, which this one leaves off
// (RabbitMQ 4.0 logs a warning for it every few seconds). On the real
// broker: such a ladder shows no drift, re-applies cleanly (the broker
// refuses a re-declare that drops an argument) and keeps the argument; a
// new ladder's terminal queues do not get it.
func TestLadderOfAnEarlierRungsReappliesCleanly(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	l, err := topology.Ladder{Name: "old", Vhost: cfg.Vhost, Unit: 100 * time.Millisecond, Levels: 3, QueueType: topology.Quorum}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	plan := l.Plan()
	legacy := map[string]bool{"old.done": true, "old.unroutable": true}
	for i, q := range plan.Queues {
		if legacy[q.Name] {
			args := topology.Args{"x-dead-letter-strategy": "at-least-once"}
			for k, v := range q.Args {
				args[k] = v
			}
			plan.Queues[i].Args = args
		}
	}
	c := dial(t, cfg)
	if _, err := c.Apply(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, env, "plan", "--ladder", "old"); !strings.Contains(out, "drift: none") {
		t.Fatalf("plan of an earlier rungs' ladder:\n%s", out)
	}
	if out := mustRun(t, env, "apply", "--ladder", "old"); !strings.Contains(out, "drift: none") {
		t.Fatalf("re-apply:\n%s", out)
	}
	mustRun(t, env, "apply", "--ladder", "new", "--layout", l.Layout, "--unit", "100ms", "--levels", "3")
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := m.Snapshot(context.Background(), cfg.Vhost)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"old.done": true, "old.unroutable": true, "new.done": false, "new.unroutable": false, "new.rung.00.1": true} {
		q, ok := snap.Queue(name)
		if _, has := q.Args["x-dead-letter-strategy"]; !ok || has != want {
			t.Errorf("%s: found %v, strategy %v, want %v", name, ok, q.Args["x-dead-letter-strategy"], want)
		}
	}
}

// vhostSnapshot reads cfg's vhost whole through the management API.
func vhostSnapshot(t *testing.T, cfg broker.Config) topology.Snapshot {
	t.Helper()
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	snap, err := m.Snapshot(ctx, cfg.Vhost)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}
