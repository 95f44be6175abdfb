package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/testutil"
	"github.com/rungs-dev/rungs/topology"
)

// TestConsoleDeadLetters drives peek and replay in the console: messages
// travel down a ladder into a worker queue nobody consumes, expire there
// into a parking queue, and the operator peeks at them (the timeline of
// their hops), traces one on the ladder, and replays them to another queue
// while the count is watched.
func TestConsoleDeadLetters(t *testing.T) {
	t.Parallel()
	cfg := brokertest.NewVhost(t)
	bin := rungsBinary(t)
	env := []string{"RUNGS_URL=" + cfg.URL, "RUNGS_MGMT_URL=" + cfg.MgmtURL, "RUNGS_VHOST=" + cfg.Vhost}
	cli := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("rungs %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// work holds a message 200ms, then dead-letters it into parked.
	if _, err := conn.Apply(ctx, topology.Plan{Queues: []topology.Queue{
		{Name: "work", Durable: true, Args: topology.Args{"x-message-ttl": int64(200), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "parked"}},
		{Name: "parked", Durable: true},
		{Name: "sink", Durable: true},
	}}); err != nil {
		t.Fatal(err)
	}
	cli("apply", "--ladder", "dl", "--unit", "100ms", "--levels", "4", "--radix", "2", "--target", "work")
	// Published as rungs publish does; rungs publish itself refuses, because
	// the broker's bindings (rightly) take the messages on past work.
	l, err := topology.Ladder{Name: "dl", Vhost: cfg.Vhost, Unit: 100 * time.Millisecond, Levels: 4, Radix: 2, Targets: []string{"work"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := l.Trace(500*time.Millisecond, "work")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []broker.Message
	for i := range 3 {
		msgs = append(msgs, broker.Message{Exchange: tr.Exchange, RoutingKey: tr.Key, BCC: tr.BCC, Body: []byte(`{"order":42}`),
			ContentType: "application/json", MessageID: fmt.Sprintf("order-%d", i+1), Persistent: true, Timestamp: time.Now()})
	}
	if res, err := conn.Publish(ctx, msgs); err != nil || res.Confirmed != 3 {
		t.Fatalf("publish: %+v, %v", res, err)
	}
	depth := func(queue string) int {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := conn.Peek(ctx, queue, 1)
		if err != nil {
			t.Fatal(err)
		}
		return res.Ready
	}
	testutil.Eventually(t, 20*time.Second, "3 messages in parked", func() error {
		if n := depth("parked"); n < 3 {
			return fmt.Errorf("parked holds %d", n)
		}
		return nil
	})

	m := newTerm(t, 120, 40, env, fmt.Sprintf("%s --ladder dl --refresh 1s; echo rungs-exit=$?; sleep 60", bin))
	m.waitFor("the ladder view", text("ladders › dl"), 20*time.Second)
	m.waitFor("the parking queue with its messages", regexp.MustCompile(`parked\s+—\s+3\s`), 20*time.Second)

	// Peek: the list, the x-death timeline down the ladder, where it is now.
	m.keys("G")
	m.keys("v")
	s := m.waitFor("the peek view", text("ladders › dl › peek parked"), 10*time.Second)
	for _, want := range []*regexp.Regexp{
		text("3 of 3 ready, from the head"),
		text("peeking left them in the queue, in order, marked redelivered"),
		regexp.MustCompile(`●\s+\+\S+\s+dl\.rung\.02\s+rung 2 \(400ms\)\s+expired ×1`),
		regexp.MustCompile(`○\s+\+\S+\s+work\s+target\s+expired ×1`),
		regexp.MustCompile(`◆\s+now\s+parked`),
		text(`"order": 42`),
	} {
		if !want.MatchString(s) {
			t.Errorf("the peek view lacks %s:\n%s", want, s)
		}
	}

	// Trace the first message: its key's hops on the ladder, the queues it
	// has left ticked off; esc returns to the peek.
	m.keys("t")
	s = m.waitFor("the traced message", text("msg   #1"), 5*time.Second)
	if !strings.Contains(s, "✓ L02") || !strings.Contains(s, "now parked") || !strings.Contains(s, "trace 500ms → work") {
		t.Errorf("the trace does not show the message's path:\n%s", s)
	}
	m.keys("Escape")
	time.Sleep(300 * time.Millisecond)
	m.waitFor("the peek again", text("ladders › dl › peek parked"), 5*time.Second)

	// Replay them to sink: the form, the confirmation naming source, count
	// and destination, then the outcome.
	m.keys("R")
	m.waitFor("the replay form", text("Replay from parked"), 5*time.Second)
	m.keys("Space", "Space", "Tab")
	m.typeText("sink")
	m.keys("Enter")
	s = m.waitFor("the confirmation", text("Replay from parked?"), 5*time.Second)
	if !regexp.MustCompile(`Replay about 3 messages from parked to\s+queue sink`).MatchString(s) {
		t.Errorf("the confirmation does not name source, count and destination:\n%s", s)
	}
	m.keys("y")
	m.waitFor("the outcome", regexp.MustCompile(`replayed 3 message\(s\) from parked to queue sink`), 20*time.Second)
	m.keys("Enter")
	m.waitFor("the peek marked stale", text("3 replayed away since this peek"), 5*time.Second)
	m.keys("Escape")
	time.Sleep(300 * time.Millisecond)
	m.waitFor("the parking queue emptied", regexp.MustCompile(`parked\s+—\s+0\s`), 20*time.Second)
	if n := depth("sink"); n != 3 {
		t.Errorf("sink holds %d messages, want 3", n)
	}
	if n := depth("parked"); n != 0 {
		t.Errorf("parked still holds %d messages", n)
	}

	m.keys("q")
	m.waitFor("a clean exit and the shell back", text("rungs-exit=0"), 10*time.Second)
}
