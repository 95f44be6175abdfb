package health

import (
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/topology"
)

// The storm judgement counts what RabbitMQ 4.3's delayed retry holds
// back: in the ladders' rungs and, once the vhost's queues were read, in
// every other quorum queue with delayed retry, each queue once (a rung
// under a delayed-retry policy is in both; the read's figure wins).
func TestStormCountsDelayedRetry(t *testing.T) {
	rung := func(q string, expired, delayed int64) Row {
		return Row{Kind: RungRow, Queue: q, Stats: topology.QueueStats{Expired: expired, Delayed: delayed}}
	}
	ladder := LadderReport{
		Rows:   []Row{rung("s.rung.01.1", 23442, 0), rung("s.rung.00.4", 0, 300), {Kind: TargetRow, Queue: "jobs", Stats: topology.QueueStats{Delayed: 99}}},
		Totals: Totals{Backlog: 23442, Backlogged: 1},
	}
	rep := Report{Ladders: []LadderReport{ladder}}

	s := rep.Storm()
	if s.Backlog != 23442 || s.Held != 399 || s.HeldIn != 2 || s.RetryRead {
		t.Errorf("unread retry: %+v, want the backlog and the ladder's 399 held (rung and target)", s)
	}

	rep = rep.WithRetry(NewRetryHold([]topology.RetryQueue{
		{Name: "s.rung.00.4", Delayed: 300, Reported: true},
		{Name: "jobs", Delayed: 1200, Reported: true},
		{Name: "mail", Delayed: 0, Reported: true},
		{Name: "unread", Delayed: 7, Reported: false},
	}, true))
	s = rep.Storm()
	if s.Held != 1500 || s.HeldIn != 2 || !s.RetryRead || s.Messages() != 24942 {
		t.Errorf("read retry: %+v, want 1500 held in 2 queues (the rung once, jobs as read), 24942 in all", s)
	}
	want := "Storm: 24942 messages wait: 23442 expired messages wait in 1 backlogged rung of 1 ladder; 1500 held back by delayed retry in 2 queues"
	if got := s.Text(); !strings.HasPrefix(got, want) {
		t.Errorf("text %q, want it to start %q", got, want)
	}

	// A storm only delayed retry holds, outside any ladder: no backlog,
	// and still counted, with no remedy.
	held := Report{}.WithRetry(NewRetryHold([]topology.RetryQueue{{Name: "jobs", Delayed: 1200, Reported: true}}, true)).Storm()
	if held.Held != 1200 || held.Backlog != 0 {
		t.Errorf("held only: %+v", held)
	}
	if got := held.Text(); !strings.Contains(got, "1200 held back by delayed retry in 1 queue") || !strings.Contains(got, "no remedy") {
		t.Errorf("held only: %q", got)
	}
	if got := (Report{}).Storm().Text(); got != "" {
		t.Errorf("no storm: %q, want none", got)
	}
}
