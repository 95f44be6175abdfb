package health

import (
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

func TestStuck(t *testing.T) {
	const ttl, every = time.Minute, 5 * time.Second
	cases := map[string]struct {
		stats topology.QueueStats
		still time.Duration
		want  string // substring; "" means not stuck
	}{
		"empty":                   {topology.QueueStats{}, time.Hour, ""},
		"young head":              {topology.QueueStats{Ready: 3, HeadAge: ttl}, 0, ""},
		"head within slack":       {topology.QueueStats{Ready: 3, HeadAge: ttl + 2*every}, 0, ""},
		"head past ttl and slack": {topology.QueueStats{Ready: 3, HeadAge: ttl + 2*every + time.Second}, 0, "oldest message is 1m11s old"},
		"still within slack":      {topology.QueueStats{Ready: 3}, ttl + 2*every, ""},
		"still past ttl":          {topology.QueueStats{Ready: 3}, 2 * ttl, "depth 3 unchanged for 2m"},
		"unacked only":            {topology.QueueStats{Unacked: 2}, 2 * ttl, "depth 2 unchanged"},
		"no ttl (not a rung)":     {topology.QueueStats{Ready: 3, HeadAge: time.Hour}, time.Hour, ""},
		"delayed only":            {topology.QueueStats{Delayed: 3}, 2 * ttl, ""},
		"delayed and ready":       {topology.QueueStats{Ready: 1, Delayed: 3}, 2 * ttl, "depth 4 unchanged"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rungTTL := ttl
			if name == "no ttl (not a rung)" {
				rungTTL = 0
			}
			got := Stuck(tc.stats, rungTTL, rungTTL, tc.still, every)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("Stuck = %q, want %q", got, tc.want)
			}
		})
	}
	if Stuck(topology.QueueStats{Ready: 1}, time.Second, 0, 11*time.Second, 0) != "" {
		t.Error("a zero interval should mean the 5s default, giving 10s of slack")
	}
	// A message keeps its publish timestamp through dead-lettering: in the
	// 4s rung of a ladder whose rungs above hold up to 60s, an age of 30s
	// is normal, 80s is not.
	if got := Stuck(topology.QueueStats{Ready: 1, HeadAge: 30 * time.Second}, 4*time.Second, 60*time.Second, 0, every); got != "" {
		t.Errorf("a message that came down from higher rungs is not stuck: %q", got)
	}
	if got := Stuck(topology.QueueStats{Ready: 1, HeadAge: 80 * time.Second}, 4*time.Second, 60*time.Second, 0, every); got == "" {
		t.Error("a message older than the ladder can hold it here is stuck")
	}
}

func TestMaxAge(t *testing.T) {
	ages := MaxAge(fixture.Orders())
	if ages[9] != 512*time.Second || ages[0] != 1023*time.Second {
		t.Errorf("binary: level 9 %s (want 8m32s), level 0 %s (want 17m3s)", ages[9], ages[0])
	}
	ages = MaxAge(fixture.Retry4())
	// Radix 4, 100ms: the top level's longest rung is 3·4⁴·100ms = 76.8s.
	if ages[4] != 76800*time.Millisecond || ages[0] != fixture.Retry4().MaxDelay() {
		t.Errorf("radix 4: level 4 %s, level 0 %s (want the max delay %s)", ages[4], ages[0], fixture.Retry4().MaxDelay())
	}
}

func TestLadderRowsMissingAndDeadLetters(t *testing.T) {
	snap := fixture.Healthy()
	var qs []topology.Queue
	for _, q := range snap.Queues {
		if q.Name != "orders.rung.04" {
			qs = append(qs, q)
		}
	}
	snap.Queues = qs
	f := topology.Discover(snap)[0]
	rows := LadderRows(f, snap, Watch{})
	kinds := map[string]RowKind{}
	for _, r := range rows {
		kinds[r.Queue] = r.Kind
		if r.Queue == "orders.rung.04" && (!r.Missing || r.Severity != Problem) {
			t.Errorf("a deleted rung must show as missing: %+v", r)
		}
	}
	for q, k := range map[string]RowKind{
		"orders.rung.09": RungRow, "orders.done": TargetRow, "orders.work": TargetRow,
		"orders.unroutable": UnroutableRow, "orders.work.parked": DeadLetterRow,
	} {
		if kinds[q] != k {
			t.Errorf("%s is %v, want %v", q, kinds[q], k)
		}
	}
	if rows[0].Queue != "orders.rung.09" {
		t.Errorf("rows start with %s, want the highest rung", rows[0].Queue)
	}
}

func TestApplyTraceLeavesInputAlone(t *testing.T) {
	snap := fixture.Healthy()
	f := topology.Discover(snap)[0]
	rows := LadderRows(f, snap, Watch{})
	tr, err := f.Ladder.Trace(5*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	traced := ApplyTrace(rows, &tr)
	hops := 0
	for i := range traced {
		if traced[i].Hop != nil {
			hops++
		}
		if rows[i].Hop != nil {
			t.Fatal("ApplyTrace changed its input")
		}
	}
	if hops != 2 {
		t.Errorf("5s crosses %d rungs, want 2 (4s and 1s)", hops)
	}
}

func TestFoldIdleRungsKeepsWhatMatters(t *testing.T) {
	busy := fixture.Busy()
	f, ok := fixture.Found(busy, "retry4")
	if !ok {
		t.Fatal("no retry4 ladder in the fixture")
	}
	rows := LadderRows(f, busy, Watch{})
	kept, folded := FoldIdleRungs(rows, "")
	if folded == 0 || len(kept)+folded != len(rows) {
		t.Fatalf("folded %d of %d rows, kept %d", folded, len(rows), len(kept))
	}
	for _, r := range kept {
		if r.Kind == RungRow && idle(r) {
			t.Errorf("idle rung %s was kept", r.Queue)
		}
	}
	for _, r := range rows {
		if r.Kind != RungRow {
			continue
		}
		if !idle(r) && !containsQueue(kept, r.Queue) {
			t.Errorf("busy rung %s was folded", r.Queue)
		}
	}
	// The cursor's rung stays even when idle, and so does a traced hop.
	var idleRung string
	for _, r := range rows {
		if r.Kind == RungRow && idle(r) {
			idleRung = r.Queue
			break
		}
	}
	if kept, _ := FoldIdleRungs(rows, idleRung); !containsQueue(kept, idleRung) {
		t.Errorf("kept rung %s was folded", idleRung)
	}
	tr, err := f.Ladder.Trace(f.Ladder.MaxDelay(), "")
	if err != nil {
		t.Fatal(err)
	}
	traced, _ := FoldIdleRungs(ApplyTrace(rows, &tr), "")
	for _, h := range tr.Hops {
		if !containsQueue(traced, h.Queue) {
			t.Errorf("traced hop %s was folded", h.Queue)
		}
	}
}

func containsQueue(rows []Row, q string) bool {
	for _, r := range rows {
		if r.Queue == q {
			return true
		}
	}
	return false
}

// A quorum rung under RabbitMQ 4.3's delayed retry: its held messages are
// in flight, warned about on a rung and noted on a target, and a rung
// holding nothing else is never folded away.
func TestDelayedRetryRows(t *testing.T) {
	snap := fixture.DelayedRetry()
	r := NewReport(topology.Discover(snap), snap, Watch{Interval: 5 * time.Second, Still: func(q string) time.Duration {
		if q == "tasks.rung.01.3" {
			return time.Hour // held far beyond its 12s TTL
		}
		return 0
	}})
	lr := r.Ladders[0]
	if lr.Totals.Delayed != 5 || r.Totals.Delayed != 5 || lr.Totals.Problems != 2 || lr.Totals.Attention() != 0 {
		t.Errorf("totals %+v", lr.Totals)
	}
	byQueue := map[string]Row{}
	for _, row := range lr.Rows {
		byQueue[row.Queue] = row
	}
	if row := byQueue["tasks.rung.01.3"]; row.Severity != Warning || row.Stuck || row.Tag != "2 delayed" {
		t.Errorf("a rung holding only delayed messages: %+v", row)
	}
	if row := byQueue["tasks.work"]; row.Severity != Notice || !strings.Contains(row.Status, "9 returned messages held back by delayed retry") {
		t.Errorf("the worker's queue: %+v", row)
	}
	kept, _ := FoldIdleRungs(lr.Rows, "")
	for _, q := range []string{"tasks.rung.02.1", "tasks.rung.01.3"} {
		found := false
		for _, row := range kept {
			found = found || row.Queue == q
		}
		if !found {
			t.Errorf("folding hid %s, which holds delayed messages", q)
		}
	}
	// Folding keeps a rung for its messages, not only for its warning.
	quiet := byQueue["tasks.rung.01.3"]
	quiet.Severity, quiet.Status, quiet.Tag = Fine, "", ""
	if idle(quiet) {
		t.Error("a rung holding delayed messages reads as idle")
	}
}
