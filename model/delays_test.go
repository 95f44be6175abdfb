package model

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
	"github.com/rungs-dev/rungs/ui"
)

// TestListShowsDelaysOutsideLadders: the list takes the inventory against
// the ladders it lists, so a ladder's rungs are never shown as delays, and
// the delays take rows from the list without hiding the selection.
func TestListShowsDelaysOutsideLadders(t *testing.T) {
	busy := fixture.Busy()
	items := health.LadderItems(topology.Discover(busy), busy, health.Watch{Interval: 5 * time.Second})
	l := newLadderList("/", ui.NewStyles(false), defaultNavKeys())
	l.SetSize(80, 20)
	snap := busy
	snap.Queues = append(append([]topology.Queue(nil), busy.Queues...), topology.Queue{
		Name: "default.delay.5000", Durable: true,
		Args: topology.Args{"x-message-ttl": int64(5000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": "default"},
	})
	l.SetDelays(snap, nil)
	l.SetItems(items)
	view := ansi.Strip(l.View())
	if !strings.Contains(view, "laravel-queue-rabbitmq/default") {
		t.Fatalf("the delay group is not shown:\n%s", view)
	}
	if strings.Contains(view, "ttl-queues") {
		t.Fatalf("a ladder's queues are shown as delays:\n%s", view)
	}
	if n := len(strings.Split(view, "\n")); n != 20 {
		t.Fatalf("the list is %d lines, want 20", n)
	}
	// Small: two rows of ladders, the rest scrolled.
	l.SetSize(80, 6)
	for range items {
		l, _ = l.Update(press("j"))
	}
	if sel, ok := l.Selected(); !ok || !strings.Contains(ansi.Strip(l.View()), "▸ "+sel.Ladder.Name) {
		t.Fatalf("the selection %s scrolled out of sight:\n%s", sel.Ladder.Name, ansi.Strip(l.View()))
	}
}
