package model

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/bridge"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/topology"
)

// drive runs cmd and feeds what it answers back through Update, and the
// commands those return, until done says the console shows what the test
// waits for. The refresh loop's and the views' ticks are dropped, so only
// the I/O the keys asked for runs. The bound only fails a test that would
// otherwise hang; it judges no speed.
func drive(t *testing.T, a App, cmd tea.Cmd, done func(App) bool) App {
	t.Helper()
	msgs := make(chan tea.Msg, 64)
	stop := make(chan struct{})
	defer close(stop)
	var launch func(tea.Cmd)
	launch = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			msg := c()
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					launch(c)
				}
				return
			}
			if msg == nil {
				return
			}
			select {
			case msgs <- msg:
			case <-stop:
			}
		}()
	}
	launch(cmd)
	bound := time.After(2 * time.Minute)
	for !done(a) {
		select {
		case msg := <-msgs:
			switch msg.(type) {
			case pollMsg, sideTickMsg, clockMsg:
				continue
			}
			m, c := a.Update(msg)
			a = m.(App)
			launch(c)
		case <-bound:
			t.Fatalf("the console did not get there; it shows:\n%s", plainView(t, a))
		}
	}
	return a
}

// pressUntil sends a key and drives what it asks until done.
func pressUntil(t *testing.T, a App, k string, done func(App) bool) App {
	t.Helper()
	m, cmd := a.Update(press(k))
	return drive(t, m.(App), cmd, done)
}

// The console shows a running bridge and 4.3's delayed retry, read from
// the real broker as status reads them. A bridge (rungs bridge, run here
// in the test) parks a message whose x-delay is "abc" and schedules one
// for a minute: B shows its intake, the bridge consuming it and the one
// parked, and v peeks the parked message with its reason. A quorum queue
// under a delayed-retry policy whose consumer rejected a message: on 4.3
// D shows the one held and its settings; 3.10 and 4.0 refuse the policy,
// and D says the release has no delayed retry.
func TestConsoleShowsBridgeAndDelayedRetry(t *testing.T) {
	env := brokertest.Require(t)
	cfg := env.NewVhost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	m, v := brokertest.Management(t, cfg)
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	// A bridge on exchange orders.delayed, running.
	names := topology.NamesOfBridge("orders.delayed", "")
	l, err := topology.Ladder{Name: "delays", Vhost: cfg.Vhost, Levels: 4, Targets: []string{names.Due}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	b, err := bridge.New(conn, bridge.Options{Names: names, ExitType: "direct", Ladder: l, LadderPlan: l.Plan().ForRelease(v), Version: v})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Declare(ctx); err != nil {
		t.Fatal(err)
	}
	runCtx, stopBridge := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- b.Run(runCtx) }()
	defer func() {
		stopBridge()
		if err := <-ran; err != nil && ctx.Err() == nil {
			t.Errorf("the bridge: %v", err)
		}
	}()
	if _, err := conn.Publish(ctx, []broker.Message{
		{Exchange: names.Exchange, RoutingKey: "eu", MessageID: "bad", Body: []byte("x"), Headers: map[string]any{"x-delay": "abc"}},
		{Exchange: names.Exchange, RoutingKey: "eu", MessageID: "later", Body: []byte("x"), Headers: map[string]any{"x-delay": int64(60000)}},
	}); err != nil {
		t.Fatal(err)
	}
	brokertest.AwaitStats(t, cfg, names.Parked, func(s topology.QueueStats) bool { return s.Ready == 1 })
	brokertest.AwaitStats(t, cfg, names.Intake, func(s topology.QueueStats) bool { return s.Ready+s.Unacked == 0 && s.Consumers >= 1 })

	// A quorum queue under delayed retry by policy, its consumer rejecting.
	hold := brokertest.DelayedRetryHold.Milliseconds()
	code := brokertest.PutPolicy(t, cfg, "slow-retry", fmt.Sprintf(`{"pattern":"^payments$","apply-to":"quorum_queues","definition":{"delayed-retry-type":"all","delayed-retry-min":%d,"delayed-retry-max":%d}}`, hold, 2*hold))
	if v.QuorumDelayedRetryPolicy() != (code == 201) {
		t.Fatalf("%v: a policy with delayed-retry keys answered %d", v, code)
	}
	ch := brokertest.RawChannel(t, cfg)
	if _, err := ch.QueueDeclare("payments", true, false, false, false, amqp.Table{"x-queue-type": "quorum"}); err != nil {
		t.Fatal(err)
	}
	brokertest.PublishTo(t, cfg, "payments", 1)
	brokertest.Reject(t, cfg, "payments")
	brokertest.AwaitStats(t, cfg, "payments", func(s topology.QueueStats) bool { return s.Delayed == 1 || s.Ready == 1 })

	a := New(Options{Backends: Backends{Inspector: m, Publisher: conn, Purger: conn, Peeker: conn, Mover: conn, Limits: m,
		Vhost: cfg.Vhost, BrokerLabel: "test"}, Refresh: time.Second})
	a = update(t, a, tea.WindowSizeMsg{Width: 120, Height: 40})
	a = answerReads(t, a)

	// B: the bridges.
	a = pressUntil(t, a, "B", func(a App) bool { return isOpen[bridgeView](a) && dialogOf[bridgeView](t, a).state.Read })
	bv := dialogOf[bridgeView](t, a)
	if bv.state.Err != "" || len(bv.state.Bridges) != 1 {
		t.Fatalf("the bridge view read %d bridges: %s", len(bv.state.Bridges), bv.state.Err)
	}
	got := bv.state.Bridges[0]
	if got.Exchange != names.Exchange || got.Intake.Stats.Consumers < 1 || got.Parked.Stats.Ready != 1 {
		t.Errorf("the bridge view shows %s with %d consuming and %d parked, want %s, 1, 1", got.Exchange, got.Intake.Stats.Consumers, got.Parked.Stats.Ready, names.Exchange)
	}
	screen := strings.Join(strings.Fields(plainView(t, a)), " ")
	for _, want := range []string{"Bridges · vhost " + cfg.Vhost, "1 parked in " + names.Parked, "v peek parked"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the bridge view lacks %q:\n%s", want, plainView(t, a))
		}
	}
	// v: the parked message, with its reason.
	a = pressUntil(t, a, "v", func(a App) bool {
		return a.screen == screenPeek && a.busy == "" || a.result.Text != "" && a.dialog == nil && a.screen != screenPeek
	})
	if a.screen != screenPeek || a.peek.Queue() != names.Parked {
		t.Fatalf("v: screen %v, peek %q, result %+v", a.screen, a.peek.Queue(), a.result)
	}
	if s := plainView(t, a); !strings.Contains(s, topology.ReasonNotANumber) {
		t.Errorf("the peek of %s does not show the reason %q:\n%s", names.Parked, topology.ReasonNotANumber, s)
	}
	a = keys(t, a, "esc")

	// D: the delayed retry.
	a = pressUntil(t, a, "D", func(a App) bool {
		return isOpen[retryView](a) && (dialogOf[retryView](t, a).state.Read || dialogOf[retryView](t, a).state.Unsupported)
	})
	rv := dialogOf[retryView](t, a)
	screen = strings.Join(strings.Fields(plainView(t, a)), " ")
	if !v.QuorumDelayedRetry() {
		if !rv.state.Unsupported || !strings.Contains(screen, "not on this release ("+v.String()+")") {
			t.Errorf("%v: the delayed-retry view:\n%s", v, plainView(t, a))
		}
		return
	}
	if rv.state.Err != "" || rv.state.Hold.Delayed != 1 {
		t.Fatalf("%v: the delayed-retry view holds %d: %s", v, rv.state.Hold.Delayed, rv.state.Err)
	}
	for _, want := range []string{"1 held by delayed retry in 1 queue", "payments", "policy slow-retry", "10m–20m"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the delayed-retry view lacks %q:\n%s", want, plainView(t, a))
		}
	}
}
