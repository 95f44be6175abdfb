package model

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// rungs' own ladder whose target was deleted with messages in flight for
// it: they land in w.unroutable, and the console, like status, reads
// their keys and names the lost target with the count held for it, never
// a stall or unstall. The read is the request in flight, once: a later
// reading of the same depths reads no keys again, and the target stays
// named.
func TestConsoleNamesTheLostTarget(t *testing.T) {
	env := brokertest.Require(t)
	cfg := env.NewVhost(t)
	ctx := context.Background()
	m, err := broker.NewManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := broker.Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	l, err := topology.Ladder{Name: "w", Vhost: cfg.Vhost, Layout: "prefix", Unit: time.Second, Levels: 2, Radix: 2,
		QueueType: topology.Classic, Targets: []string{"jobs.q"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	ch := brokertest.RawChannel(t, cfg)
	if _, err := ch.QueueDeclare("jobs.q", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Apply(ctx, l.Plan()); err != nil {
		t.Fatal(err)
	}
	msg, err := ops.PublishRequest{Ladder: l, Delay: 2 * time.Second, Dest: "jobs.q", Count: 5, Message: ops.Delayed{Body: []byte("x")}}.Plan(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Publish(ctx, msg.Messages(1, 5, time.Now())); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDelete("jobs.q", false, false, false); err != nil {
		t.Fatal(err)
	}
	brokertest.AwaitStats(t, cfg, "w.unroutable", func(s topology.QueueStats) bool { return s.Ready == 5 })

	a := New(Options{Backends: Backends{Inspector: m, Publisher: conn, Purger: conn, Conn: conn, Peeker: conn, Mover: conn, Limits: m,
		Vhost: cfg.Vhost, BrokerLabel: "test"}, Refresh: time.Minute, Ladder: "w"})
	a = update(t, a, tea.WindowSizeMsg{Width: 80, Height: 24})
	a = drive(t, a, a.Init(), func(a App) bool {
		return a.screen == screenLadder && a.loop.pending == nil && a.loop.obs.Unrouted() != nil
	})
	if a.loop.err != nil {
		t.Fatalf("%s: %v", a.loop.err.op, a.loop.err.err)
	}
	a = keys(t, a, "G")
	screen := plainView(t, a)
	flat := strings.Join(strings.Fields(screen), " ")
	for _, want := range []string{"lost route to jobs.q", "5 unroutable", "5 of 5 unroutable messages meant for jobs.q (queue jobs.q is gone)"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the ladder view lacks %q:\n%s", want, screen)
		}
	}
	for _, bad := range []string{"stalled", "unstall", "#12625"} {
		if strings.Contains(flat, bad) {
			t.Errorf("the ladder view says %q of a lost route:\n%s", bad, screen)
		}
	}
	t.Logf("the ladder view:\n%s", screen)

	// A refresh of the same depths reads no keys again; the target stays
	// named.
	seq := a.loop.seq
	next, cmd := a.Update(pollMsg{gen: a.loop.gen})
	a = drive(t, next.(App), cmd, func(a App) bool { return a.loop.seq > seq && a.loop.pending == nil })
	if a.loop.seq != seq+1 || a.loop.err != nil {
		t.Errorf("a refresh of the same depths made %d requests (error %v), want one reading", a.loop.seq-seq, a.loop.err)
	}
	if flat := strings.Join(strings.Fields(plainView(t, a)), " "); !strings.Contains(flat, "lost route to jobs.q") {
		t.Errorf("after a refresh, the ladder view no longer names jobs.q:\n%s", plainView(t, a))
	}
}
