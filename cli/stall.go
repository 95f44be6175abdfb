package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/topology"
)

// stallSampleEvery is how often a one-shot command re-reads the queue
// statistics while it waits for the stall rule: twice a statistics
// interval, so that no emission is missed.
const stallSampleEvery = health.DefaultInterval / 2

// watchStalls gives a one-shot command (status, discover, doctor) the
// history the stall rule needs. When no rung of the ladders found holds
// expired messages waiting to be dead-lettered, it returns at once. When
// some do, it re-reads the vhost's queue statistics (one request each time)
// until health.StallWindow has passed for every such rung, and returns the
// snapshot with the latest statistics and a Watch that knows how long each
// waiting count went without falling. A healthy rung's count falls (or
// empties) within that window; a stalled rung's never does.
func (e *env) watchStalls(ctx context.Context, m *broker.Management, snap topology.Snapshot, found []topology.Found) (topology.Snapshot, health.Watch, error) {
	every := health.DefaultInterval
	w := health.Watch{Interval: every}
	ttl := map[string]time.Duration{}
	for _, f := range found {
		if f.Ladder.Vhost != snap.Vhost && f.Ladder.Vhost != "" {
			continue
		}
		for _, r := range f.Ladder.Rungs() {
			ttl[r.Queue] = r.TTL
		}
	}
	var window time.Duration
	waiting := 0
	for _, q := range snap.Queues {
		if t, rung := ttl[q.Name]; rung && q.Stats.Expired > 0 {
			window = max(window, health.StallWindow(t, every))
			waiting++
		}
	}
	if waiting == 0 {
		return snap, w, nil
	}
	start := time.Now()
	waits := health.Waits{}.Observe(snap.Queues, start)
	if !e.opts.json {
		fmt.Fprintf(e.Err, "%s with expired messages waiting to be dead-lettered: watching for %s whether they drain…\n",
			topology.Counted(waiting, "rung", "rungs"), topology.FormatSpan(window))
	}
	last := start
	for last.Sub(start) < window {
		select {
		case <-ctx.Done():
			return snap, w, ctx.Err()
		case <-time.After(stallSampleEvery):
		}
		cctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
		qs, err := m.Stats(cctx, snap.Vhost)
		cancel()
		if err != nil {
			return snap, w, err
		}
		last = time.Now()
		waits = waits.Observe(qs, last)
		snap.Queues = qs
	}
	w.Waited = func(q string) time.Duration { return waits.Waited(q, last) }
	return snap, w, nil
}

// unstallHint is the command that cures the named stalled rungs.
func unstallHint(l topology.Ladder, queues []string) string {
	cmd := "rungs unstall --ladder " + l.Name
	if l.Vhost != "" && l.Vhost != "/" {
		cmd += " --vhost " + l.Vhost
	}
	return fmt.Sprintf("%s (restarts the dead-letter worker of %s; nothing is purged)", cmd, strings.Join(queues, ", "))
}
