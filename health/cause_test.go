package health

import (
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

func row(t *testing.T, lr LadderReport, queue string) Row {
	t.Helper()
	for _, r := range lr.Rows {
		if r.Queue == queue {
			return r
		}
	}
	t.Fatalf("no row %s", queue)
	return Row{}
}

func ladderReport(t *testing.T, snap topology.Snapshot, name string, w Watch) LadderReport {
	t.Helper()
	f, ok := fixture.Found(snap, name)
	if !ok {
		t.Fatalf("no ladder %s", name)
	}
	return NewReport([]topology.Found{f}, snap, w).Ladders[0]
}

// A Celery ladder whose emails queue was deleted: the rung holding 200
// expired is held by a lost route, named with its destination; never
// stalled, never unstall, never the broker's bug. Past the dead-letter
// worker's prefetch only 32 are known to be for emails: the rest wait
// behind them, whatever their destination, so no split is invented.
func TestLostRouteIsNotAStall(t *testing.T) {
	snap := fixture.CeleryLost()
	lr := ladderReport(t, snap, "celery", Watch{Waited: fixture.LostWaits, Interval: 5 * time.Second})
	r := row(t, lr, "celery_delayed_2")
	if r.Stalled || !r.Stuck || r.Why.Cause != CauseLostRoute {
		t.Fatalf("stalled %v stuck %v cause %q: want a lost route", r.Stalled, r.Stuck, r.Why.Cause)
	}
	for _, s := range []string{r.Status, r.Why.Evidence, r.Why.Remedy} {
		if strings.Contains(s, "unstall") || strings.Contains(s, "12625") {
			t.Errorf("a lost route names the stall's cure or bug: %q", s)
		}
	}
	if !strings.Contains(r.Status, "200 expired held (queue emails is gone): at least 32 for emails, 168 may wait behind them for any destination") {
		t.Errorf("status = %q", r.Status)
	}
	if !strings.Contains(r.Why.Remedy, "routing_key='#.emails'") {
		t.Errorf("remedy = %q", r.Why.Remedy)
	}
	if lr.Totals.Stalled != 0 || lr.Totals.LostRoute != 1 || lr.Totals.Attention() != 1 {
		t.Errorf("totals %+v", lr.Totals)
	}
	if len(lr.Lost) != 1 || lr.Lost[0].Dest != "emails" || lr.Lost[0].Held != -1 || r.Why.Held != 200 {
		t.Errorf("lost = %+v", lr.Lost)
	}
}

// The same held rung with every route resolving is the broker's stall.
func TestStallOnlyWhereTheRouteResolves(t *testing.T) {
	snap := fixture.Stalled()
	lr := ladderReport(t, snap, "jobs", Watch{Waited: fixture.StalledWaits, Interval: 5 * time.Second})
	r := row(t, lr, "jobs.rung.03.1")
	if !r.Stalled || r.Why.Cause != CauseBrokerStall || r.Why.Remedy != StallRemedy {
		t.Fatalf("row %+v", r.Why)
	}
	if !strings.Contains(r.Why.Evidence, "every route of the ladder resolves") || len(lr.Lost) != 0 {
		t.Errorf("evidence %q lost %v", r.Why.Evidence, lr.Lost)
	}
}

// rungs' own ladder whose target was deleted: the unroutable queue names
// it and the count meant for it, and no replay while the route is lost.
func TestLostTargetNamedFromUnroutable(t *testing.T) {
	snap := fixture.WorkLost()
	lr := ladderReport(t, snap, "w", Watch{Unrouted: fixture.WorkUnrouted()})
	r := row(t, lr, "w.unroutable")
	if r.Why.Cause != CauseLostRoute || !strings.Contains(r.Status, "5 of 5 unroutable messages meant for jobs.q (queue jobs.q is gone)") {
		t.Fatalf("status %q cause %q", r.Status, r.Why.Cause)
	}
	if !strings.HasPrefix(r.Why.Remedy, "restore jobs.q: rungs apply --ladder w --target jobs.q") {
		t.Errorf("remedy %q", r.Why.Remedy)
	}
	if len(lr.Lost) != 1 || lr.Lost[0].Held != 5 {
		t.Errorf("lost %+v", lr.Lost)
	}
	// Unread, the queue says what it always said.
	lr = ladderReport(t, snap, "w", Watch{})
	if r := row(t, lr, "w.unroutable"); r.Why.Cause != "" || !strings.Contains(r.Status, "no binding routed") {
		t.Errorf("unread: %q %q", r.Why.Cause, r.Status)
	}
}

// An unroutable queue's messages are counted once: as Unroutable (and,
// with its lost target named, as a lost route), never again as a warning,
// read or not.
func TestUnroutableRowIsNoSecondWarning(t *testing.T) {
	snap := fixture.WorkLost()
	for name, w := range map[string]Watch{
		"unread": {Interval: 5 * time.Second},
		"read":   {Interval: 5 * time.Second, Unrouted: fixture.WorkUnrouted()},
	} {
		lr := ladderReport(t, snap, "w", w)
		r := row(t, lr, "w.unroutable")
		if !r.StatusIsUnrouted() || lr.Totals.Unroutable != 5 || lr.Totals.Problems != 0 {
			t.Errorf("%s: %s (%s), totals %+v: want 5 unroutable and no warning", name, r.Tag, r.Status, lr.Totals)
		}
	}
}
