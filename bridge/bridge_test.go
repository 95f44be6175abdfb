package bridge_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/bridge"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// child is a bridge process the test started.
type child struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	last bridge.Progress
	done chan struct{}
}

func startChild(t *testing.T, s childSetup) *child {
	t.Helper()
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(js))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var p bridge.Progress
			if json.Unmarshal(sc.Bytes(), &p) == nil {
				c.mu.Lock()
				c.last = p
				c.mu.Unlock()
			}
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-c.done })
	return c
}

func (c *child) progress() bridge.Progress {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// kill9 kills the child as the kernel would, mid-batch: nothing of it
// runs after.
func (c *child) kill9(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.done
}

// arrival is one message as a destination received it.
type arrival struct {
	queue, key    string
	at            time.Time
	sentMS, delay int64
	dup           bool
}

// TestBridgeKilledMidRun is the correctness run: 10,000 plugin-style
// messages, x-delay 5 s to 30 s, by two routing keys to two queues bound
// by key, plus one without x-delay and one with x-delay "abc"; the bridge,
// a process of its own, is killed -9 while it schedules and again while
// it delivers, and restarted each time. Every message arrives, by its key,
// none before its publish time plus its delay; duplicates are counted and
// each carries the mark; the bad one is parked with its reason.
func TestBridgeKilledMidRun(t *testing.T) {
	env := brokertest.Require(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cfg, v, conn := testVhost(t, ctx, env)
	setup := childSetup{Config: cfg, Exchange: "orders.delayed", Ladder: "delays", Version: v.String(), Levels: 2}
	o, err := testLadderOptions(cfg.Vhost, setup.Exchange, setup.Ladder, setup.Levels, v)
	if err != nil {
		t.Fatal(err)
	}
	declared(t, ctx, conn, o)
	keys := []string{"eu", "us"}
	declareDests(t, ctx, conn, o.Names.Exit, map[string]string{"eu": "dest.eu", "us": "dest.us"})

	var mu sync.Mutex
	got := map[string][]arrival{}
	for _, k := range keys {
		in, err := conn.Consume(ctx, "dest."+k, 2000)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for d := range in {
				a := arrival{queue: "dest." + k, key: d.RoutingKey, at: d.Received}
				a.sentMS, _ = topology.NormalizeArg(d.Headers["sent-ms"]).(int64)
				a.delay, _ = topology.NormalizeArg(d.Headers["x-delay"]).(int64)
				a.dup, _ = d.Headers[topology.HeaderPossibleDuplicate].(bool)
				mu.Lock()
				got[d.MessageID] = append(got[d.MessageID], a)
				mu.Unlock()
				_ = d.Ack()
			}
		}()
	}

	start := time.Now()
	phase := func(what string) { t.Logf("%5.1fs %s", time.Since(start).Seconds(), what) }
	first := startChild(t, setup)
	const n = 10000
	rng := rand.New(rand.NewPCG(33, 10000))
	published := make(chan error, 1)
	go func() {
		var batch []broker.Message
		send := func() error {
			_, err := conn.Publish(ctx, batch)
			batch = batch[:0]
			return err
		}
		for i := 0; i < n; i++ {
			h := map[string]any{"x-delay": int64(5000 + rng.IntN(25001)), "sent-ms": time.Now().UnixMilli()}
			batch = append(batch, broker.Message{Exchange: setup.Exchange, RoutingKey: keys[i%2], MessageID: fmt.Sprintf("m%d", i),
				Headers: h, Body: []byte("job"), Persistent: true, Timestamp: time.Now()})
			if len(batch) == 250 {
				if err := send(); err != nil {
					published <- err
					return
				}
			}
		}
		now := time.Now().UnixMilli()
		batch = append(batch,
			broker.Message{Exchange: setup.Exchange, RoutingKey: "eu", MessageID: "now", Headers: map[string]any{"sent-ms": now}, Body: []byte("now")},
			broker.Message{Exchange: setup.Exchange, RoutingKey: "us", MessageID: "bad", Headers: map[string]any{"x-delay": "abc", "sent-ms": now}, Body: []byte("bad")})
		published <- send()
	}()

	// Killed while it schedules: some intake messages copied into the
	// ladder but not yet acked.
	testutil.Eventually(t, time.Minute, "the first bridge to schedule 3,000 messages", func() error {
		if p := first.progress(); p.Scheduled < 3000 {
			return fmt.Errorf("scheduled %d", p.Scheduled)
		}
		return nil
	})
	first.kill9(t)
	phase(fmt.Sprintf("killed the first bridge: %+v", first.progress()))
	second := startChild(t, setup)
	if err := <-published; err != nil {
		t.Fatalf("publish: %v", err)
	}
	phase("published")
	// Killed while it delivers: due messages published to the exit
	// exchange but not yet acked.
	testutil.Eventually(t, time.Minute, "the second bridge to deliver 1,000 due messages", func() error {
		if p := second.progress(); p.Exited < 1000 {
			return fmt.Errorf("exited %d", p.Exited)
		}
		return nil
	})
	second.kill9(t)
	phase(fmt.Sprintf("killed the second bridge: %+v", second.progress()))
	third := startChild(t, setup)

	testutil.Poll{Within: 2 * time.Minute, Every: time.Second}.Eventually(t, "every message delivered", func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(got) < n+1 {
			return fmt.Errorf("%d of %d messages delivered; the third bridge: %+v", len(got), n+1, third.progress())
		}
		return nil
	})
	phase("all delivered")
	mu.Lock()
	defer mu.Unlock()
	dups, marked, early := 0, 0, 0
	var worstEarly time.Duration
	for id, as := range got {
		if id == "bad" {
			t.Fatal("the message with x-delay \"abc\" was delivered")
		}
		dups += len(as) - 1
		m := 0
		for _, a := range as {
			if a.dup {
				m++
			}
			if want := "dest." + a.key; a.queue != want {
				t.Errorf("%s with key %s arrived in %s", id, a.key, a.queue)
			}
			due := time.UnixMilli(a.sentMS + a.delay)
			if a.at.Before(due) {
				early++
				worstEarly = max(worstEarly, due.Sub(a.at))
			}
		}
		marked += m
		if m < len(as)-1 {
			t.Errorf("%s arrived %d times, only %d copies marked %s", id, len(as), m, topology.HeaderPossibleDuplicate)
		}
	}
	if early > 0 {
		t.Errorf("%d messages arrived early, the earliest by %v", early, worstEarly)
	}
	t.Logf("RabbitMQ %s: %d messages delivered, %d duplicates (%d copies marked) after two kill -9", v, len(got), dups, marked)

	phase("checked every arrival")
	bad, ok, err := conn.Get(ctx, o.Names.Parked, true)
	if err != nil || !ok {
		t.Fatalf("parked queue: ok %v, %v", ok, err)
	}
	reason, _ := bad.Headers[topology.HeaderReason].(string)
	if bad.MessageID != "bad" || !strings.HasPrefix(reason, topology.ReasonNotANumber) || bad.Headers[topology.HeaderBridgeKey] != "us" {
		t.Errorf("parked %s with reason %q and key %v", bad.MessageID, reason, bad.Headers[topology.HeaderBridgeKey])
	}
	if err := third.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-third.done
	phase("stopped the third bridge (SIGTERM)")
}
