package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// fillQueue publishes n persistent messages with unique ids to a queue.
func fillQueue(t *testing.T, c *broker.Conn, queue, prefix string, n int, headers func(i int) map[string]any) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	ids := make([]string, 0, n)
	for start := 0; start < n; start += 5000 {
		var msgs []broker.Message
		for i := start; i < min(n, start+5000); i++ {
			id := fmt.Sprintf("%s-%05d", prefix, i)
			ids = append(ids, id)
			m := broker.Message{RoutingKey: queue, MessageID: id, Body: []byte(id), Persistent: true}
			if headers != nil {
				m.Headers = headers(i)
			}
			msgs = append(msgs, m)
		}
		if res, err := c.Publish(ctx, msgs); err != nil || res.Confirmed != len(msgs) {
			t.Fatalf("fill %s: %+v, %v", queue, res, err)
		}
	}
	return ids
}

// queueDepth reads a queue's ready count with a passive declaration.
func queueDepth(t *testing.T, c *broker.Conn, queue string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.Peek(ctx, queue, 1)
	if err != nil {
		t.Fatal(err)
	}
	return res.Ready
}

// takeAll consumes every message of a queue (the count is read first; run
// it once nothing else publishes) and returns their message ids in order.
func takeAll(t *testing.T, cfg broker.Config, c *broker.Conn, queue string) []string {
	t.Helper()
	n := queueDepth(t, c, queue)
	if n == 0 {
		return nil
	}
	ch := brokertest.RawChannel(t, cfg)
	if err := ch.Qos(2000, 0, false); err != nil {
		t.Fatal(err)
	}
	in, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, n)
	timeout := time.After(60 * time.Second)
	for len(out) < n {
		select {
		case d := <-in:
			if err := d.Ack(false); err != nil {
				t.Fatal(err)
			}
			out = append(out, d.MessageId)
		case <-timeout:
			t.Fatalf("took %d of %d from %s", len(out), n, queue)
		}
	}
	_ = ch.Close()
	return out
}

func declareQueues(t *testing.T, c *broker.Conn, names ...string) {
	t.Helper()
	var p topology.Plan
	for _, n := range names {
		p.Queues = append(p.Queues, topology.Queue{Name: n, Durable: true})
	}
	if _, err := c.Apply(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

func TestReplayToQueueWithFilterAndDryRun(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	declareQueues(t, c, "dlq", "work")
	all := fillQueue(t, c, "dlq", "r", 30, func(i int) map[string]any { return map[string]any{"tenant": []string{"acme", "other"}[i%3/2]} })

	out := mustRun(t, env, "replay", "--from", "dlq", "--to-queue", "work", "--where", "tenant=acme", "--dry-run", "--limit", "3")
	if !strings.Contains(out, "dry run: the first 3 of 30") || !strings.Contains(out, `→ the default exchange key "work" (reaches work)`) {
		t.Errorf("dry run:\n%s", out)
	}
	if n := queueDepth(t, c, "work"); n != 0 {
		t.Fatalf("a dry run moved %d messages", n)
	}
	code, _, errs := run(t, env, "replay", "--from", "dlq", "--to-queue", "work")
	if code != ExitUsage || !strings.Contains(errs, "--yes") {
		t.Fatalf("replay without --yes: exit %d %s", code, errs)
	}
	var res struct {
		Moved, Skipped, Kept int
		Stopped              string
	}
	if err := json.Unmarshal([]byte(mustRun(t, env, "replay", "--from", "dlq", "--to-queue", "work", "--where", "tenant=acme", "--yes", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Moved != 20 || res.Skipped != 10 || res.Stopped != broker.StopEmpty {
		t.Errorf("replay --where: %+v", res)
	}
	var moved, left []string
	for i, id := range all {
		if i%3/2 == 0 {
			moved = append(moved, id)
		} else {
			left = append(left, id)
		}
	}
	if got := takeAll(t, cfg, c, "work"); strings.Join(got, ",") != strings.Join(moved, ",") {
		t.Errorf("work holds %v, want %v", got, moved)
	}
	if got := takeAll(t, cfg, c, "dlq"); strings.Join(got, ",") != strings.Join(left, ",") {
		t.Errorf("dlq holds %v, want %v", got, left)
	}
}

func TestReplayParkedJobsBackToTheirWorker(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	mustRun(t, env, "apply", "--ladder", "w", "--unit", "100ms", "--levels", "5", "--radix", "2", "--target", "w.work")
	// Every attempt fails: three jobs, two attempts each, then parked.
	out := mustRun(t, env, "worker", "--demo", "--ladder", "w", "--fail", "1", "--attempts", "2", "--steps", "200ms",
		"--jitter", "0", "--work", "0s", "--feed", "100/s", "--jobs", "3", "--seed", "7")
	if strings.Count(out, "retry in 200ms") != 3 || strings.Count(out, "parked in w.work.parked") != 3 {
		t.Fatalf("worker:\n%s", out)
	}
	// The parking queue has the ladder's type, quorum by default: on
	// RabbitMQ 4 its default delivery limit makes peek ask for --force.
	peek := mustRun(t, env, "peek", "w.work.parked", "--force")
	for _, want := range []string{"3 of 3 ready", "x-rungs-reason=simulated failure (--fail 1)", "x-rungs-queue=w.work", "attempt 1", "retried after 200ms", "attempt 2", "parked"} {
		if !strings.Contains(peek, want) {
			t.Errorf("peek of the parking queue lacks %q:\n%s", want, peek)
		}
	}
	out = mustRun(t, env, "replay", "--from", "w.work.parked", "--to-origin", "--yes")
	if !strings.Contains(out, "replayed 3 message(s)") {
		t.Fatalf("replay:\n%s", out)
	}
	if got := takeAll(t, cfg, c, "w.work"); len(got) != 3 {
		t.Errorf("%d of 3 parked jobs are back in w.work", len(got))
	}
}

// settle waits until the broker has dealt with a dead client: its consumer
// is gone from the source (the broker requeues what it held in the same
// step) and the queues' depths have stopped changing.
func settle(t *testing.T, cfg broker.Config, source string, queues ...string) {
	t.Helper()
	ch := brokertest.RawChannel(t, cfg)
	defer ch.Close()
	depths := func() (total, consumers int) {
		for _, q := range append([]string{source}, queues...) {
			st, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			total += st.Messages
			if q == source {
				consumers = st.Consumers
			}
		}
		return total, consumers
	}
	last, consumers := depths()
	t.Logf("right after the kill: %d messages, %d consumers on %s", last, consumers, source)
	// Settled: no consumer, and the depth unchanged for half a second.
	changed := time.Now()
	_ = testutil.Poll{Within: 30 * time.Second, Every: 100 * time.Millisecond}.Until(t, func() error {
		var n int
		if n, consumers = depths(); n != last {
			last, changed = n, time.Now()
		}
		if consumers > 0 || time.Since(changed) < 500*time.Millisecond {
			return fmt.Errorf("%d messages, %d consumers", n, consumers)
		}
		return nil
	})
	t.Logf("settled: %d messages, %d consumers", last, consumers)
}

// buildRungs compiles the rungs binary once per test binary.
var buildRungs = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "rungs-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "rungs")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// TestReplaySurvivesKill9 kills the replaying process in the middle of
// 50,000 messages: every message must be on the source or the target.
func TestReplaySurvivesKill9(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	declareQueues(t, c, "dlq", "target")
	replayKill9(t, env, cfg, c, 50000, "target", "--to-queue", "target")
}

// The same into a direct ladder: every copy carries the BCC keys of its
// delay, so it reaches the ladder's done queue, and none is lost or early.
func TestReplayIntoADirectLadderSurvivesKill9(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	mustRun(t, env, "apply", "--ladder", "d", "--layout", "direct", "--unit", "10ms", "--max-delay", "1m", "--queue-type", "classic")
	declareQueues(t, c, "dlq")
	replayKill9(t, env, cfg, c, 20000, "d.done", "--to-ladder", "d", "--delay", "50ms")
	if n := queueDepth(t, c, "d.unroutable"); n != 0 {
		t.Errorf("%d copies in d.unroutable", n)
	}
}

// replayKill9 fills dlq with n persistent messages, replays them with the
// given destination flags and kills the replay with SIGKILL once a third
// reached target: every message must then be on dlq or at target.
func replayKill9(t *testing.T, env map[string]string, cfg broker.Config, c *broker.Conn, n int, target string, to ...string) {
	t.Helper()
	bin, err := buildRungs()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	want := fillQueue(t, c, "dlq", "k", n, nil)
	t.Logf("published %d persistent messages in %s", n, time.Since(start))

	// Paced to take at least 4 s, so that the kill lands mid-run however
	// fast the machine is.
	cmd := exec.Command(bin, append([]string{"replay", "--from", "dlq", "--yes", "--rate", strconv.Itoa(n/4) + "/s"}, to...)...)
	cmd.Env = append(os.Environ(), "RUNGS_URL="+env["RUNGS_URL"], "RUNGS_MGMT_URL="+env["RUNGS_MGMT_URL"], "RUNGS_VHOST="+env["RUNGS_VHOST"])
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	killed := false
	for !killed {
		select {
		case err := <-exited:
			t.Fatalf("replay finished before it could be killed (%v): %s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		// Depths from a passive declare, at once: a peek holds the
		// queue's head and took long enough on a quiet machine for the
		// whole replay to end between two looks. The source is watched as
		// well as the target: through a ladder the target lags the
		// replay, and on a loaded broker the replay ended before a third
		// had come out of the ladder.
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		arrived, err := c.Depth(dctx, target)
		left, serr := c.Depth(dctx, "dlq")
		cancel()
		if err = errors.Join(err, serr); err != nil {
			t.Fatal(err)
		}
		if arrived >= n/3 || n-left >= n/3 {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatalf("kill the replay once %d of %d left dlq and %d reached %s: %v (it ended first: %s)", n-left, n, arrived, target, err, stderr.String())
			}
			killed = true
		}
	}
	err = <-exited
	t.Logf("killed after %s: %v", time.Since(start), err)
	settle(t, cfg, "dlq", target)
	source, got := takeAll(t, cfg, c, "dlq"), takeAll(t, cfg, c, target)
	count := map[string]int{}
	for _, id := range append(append([]string(nil), source...), got...) {
		count[id]++
	}
	lost, dups := 0, 0
	for _, id := range want {
		switch count[id] {
		case 0:
			lost++
		case 1:
		default:
			dups += count[id] - 1
		}
		delete(count, id)
	}
	t.Logf("after kill -9: %d on the source, %d at %s, %d duplicates, %d lost", len(source), len(got), target, dups, lost)
	if lost > 0 || len(count) > 0 {
		t.Fatalf("%d messages lost, %d unknown ones appeared", lost, len(count))
	}
	if len(got) == 0 || len(source) == 0 {
		t.Errorf("the kill did not land mid-replay")
	}
}

// Drift fix (issue 19): --where compares header values, not how peek draws
// them. A client that sends a header as an AMQP byte array (as some
// libraries do for every string) must match the same text.
func TestReplayWhereMatchesHeaderValues(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	declareQueues(t, c, "dlq", "work")
	values := []any{[]byte("acme"), "acme", []byte("other"), int32(7)}
	fillQueue(t, c, "dlq", "w", len(values), func(i int) map[string]any { return map[string]any{"tenant": values[i], "n": values[3]} })
	var res struct{ Moved, Skipped int }
	if err := json.Unmarshal([]byte(mustRun(t, env, "replay", "--from", "dlq", "--to-queue", "work", "--where", "tenant=acme", "--where", "n=7", "--yes", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Moved != 2 || res.Skipped != 2 {
		t.Errorf("replay --where tenant=acme over byte-array and string headers: %+v, want 2 moved, 2 skipped", res)
	}
}

// A message published while a ladder's entry had no binding for its key
// lands in the ladder's unroutable queue through the alternate exchange,
// without x-death (a restarting node can do this to a whole batch). Once
// apply has put the binding back, replay --to-origin sends it into the
// ladder again by the exchange and key it came with: it waits its whole
// delay again, late, never early. A direct ladder needs its BCC keys
// rebuilt from that key.
func TestReplayUnroutableWithoutDeathBackIntoTheLadder(t *testing.T) {
	t.Parallel()
	for _, layout := range []string{"prefix", "direct"} {
		t.Run(layout, func(t *testing.T) {
			t.Parallel()
			env, cfg := brokerEnv(t)
			c := dial(t, cfg)
			ladder := []string{"apply", "--ladder", "u", "--layout", layout, "--unit", "100ms", "--max-delay", "30s", "--queue-type", "classic"}
			mustRun(t, env, ladder...)
			// What a producer of its own publishes, as trace --json says.
			var tr struct {
				Exchange   string
				RoutingKey string `json:"routing_key"`
				Headers    map[string][]string
			}
			if err := json.Unmarshal([]byte(mustRun(t, env, "trace", "1200ms", "--ladder", "u", "--json")), &tr); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ch := brokertest.RawChannel(t, cfg)
			cut := 0
			for _, b := range vhostSnapshot(t, cfg).Bindings {
				if b.Source == "u.ingest" && b.DestinationType == topology.ToQueue {
					if err := ch.QueueUnbind(b.Destination, b.RoutingKey, b.Source, amqp.Table(b.Args)); err != nil {
						t.Fatal(err)
					}
					cut++
				}
			}
			if cut == 0 {
				t.Fatal("u.ingest has no binding to a rung")
			}
			var msgs []broker.Message
			for i := range 3 {
				m := broker.Message{Exchange: tr.Exchange, RoutingKey: tr.RoutingKey, MessageID: fmt.Sprintf("lost-%d", i), Persistent: true}
				if bcc := tr.Headers["BCC"]; len(bcc) > 0 {
					m.Headers = map[string]any{"BCC": toAny(bcc)}
				}
				msgs = append(msgs, m)
			}
			if res, err := c.Publish(ctx, msgs); err != nil || res.Confirmed != 3 {
				t.Fatalf("publish: %+v, %v", res, err)
			}
			testutil.Eventually(t, 30*time.Second, "3 messages in u.unroutable", func() error {
				if n := queueDepth(t, c, "u.unroutable"); n != 3 {
					return fmt.Errorf("%d in u.unroutable", n)
				}
				return nil
			})
			peek := mustRun(t, env, "peek", "u.unroutable", "--json")
			if strings.Contains(peek, "x-death") {
				t.Fatalf("the unroutable messages were dead-lettered, not published unroutable:\n%s", peek)
			}
			// Without the binding, the replay has nowhere to go and says so.
			code, out, errs := run(t, env, "replay", "--from", "u.unroutable", "--to-origin", "--yes")
			if code == ExitOK || queueDepth(t, c, "u.unroutable") != 3 {
				t.Fatalf("replay into the broken ladder: exit %d, %d left\n%s%s", code, queueDepth(t, c, "u.unroutable"), out, errs)
			}
			mustRun(t, env, ladder...)
			a := watch(t, c, "u.done")
			p := published{prefix: "lost-", delay: 1200 * time.Millisecond, at: time.Now()}
			out = mustRun(t, env, "replay", "--from", "u.unroutable", "--to-origin", "--yes")
			if !strings.Contains(out, "replayed 3 message(s)") {
				t.Fatalf("replay:\n%s", out)
			}
			checkOnTime(t, a.wait(t, "u.done", 3, time.Minute), notLate, p)
			if n := queueDepth(t, c, "u.unroutable"); n != 0 {
				t.Errorf("%d messages still in u.unroutable", n)
			}
		})
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
