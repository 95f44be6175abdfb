package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// delayInventory is a vhost with the delays of five libraries and a plugin
// exchange, beside the busy fixture's ladders.
func delayInventory() topology.Inventory {
	q := func(name string, ms int64, dlx, dlrk string, extra topology.Args, ready int64, age time.Duration) topology.Queue {
		a := topology.Args{"x-dead-letter-exchange": dlx, "x-dead-letter-routing-key": dlrk}
		if ms > 0 {
			a["x-message-ttl"] = ms
		}
		for k, v := range extra {
			a[k] = v
		}
		return topology.Queue{Name: name, Durable: true, Args: a, Stats: topology.QueueStats{Ready: ready, HeadAge: age}}
	}
	snap := topology.Snapshot{
		Vhost:     "/",
		Exchanges: []topology.Exchange{{Name: "slow", Type: topology.PluginExchangeType, Args: topology.Args{"x-delayed-type": "direct"}}},
		Queues: []topology.Queue{
			q("delay_messages__5000_delay", 5000, "messages", "", topology.Args{"x-expires": int64(15000)}, 12, 3*time.Second),
			q("delay_messages__60000_delay", 60000, "messages", "", topology.Args{"x-expires": int64(70000)}, 1200, 41*time.Second),
			q("default.delay.10000", 10000, "", "default", topology.Args{"x-expires": int64(20000)}, 7, 0),
			q("delay.2000.machinery_exchange.tasks", 2000, "machinery_exchange", "tasks", topology.Args{"x-expires": int64(4000)}, 0, 0),
			q("orders__retry.1", 0, "orders__retry_dlx", "", nil, 3, 0),
			q("orders__retry.2", 0, "orders__retry_dlx", "", nil, 0, 0),
			q("wait.30s", 30000, "work", "work", nil, 250000, 0),
		},
	}
	return topology.TakeInventory(snap, nil).WithDelayed(map[string]int64{"slow": 42})
}

func TestDelayStripGolden(t *testing.T) {
	busy := fixture.Busy()
	items := health.LadderItems(topology.Discover(busy), busy, health.Watch{Interval: 5 * time.Second})
	s := ListState{Items: items, Totals: health.Sum(items), Total: len(items), Selected: 1, Vhost: "/"}
	inv := delayInventory()
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			body := sz.h - HeaderHeight - 1
			strip := DelayStripHeight(inv, body)
			if strip == 0 {
				t.Fatal("no room for the delays")
			}
			view := LadderList(s, NewStyles(false), sz.w, body-strip) + "\n" + DelayStrip(inv, NewStyles(false), sz.w, strip)
			checkFrame(t, view, sz.w, body)
			golden.RequireEqual(t, ansi.Strip(view))
		})
	}
	if DelayStripHeight(topology.Inventory{}, 40) != 0 || DelayStrip(topology.Inventory{}, NewStyles(false), 80, 5) != "" {
		t.Error("an empty inventory takes room")
	}
}
