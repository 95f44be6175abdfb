package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/topology"
)

// sizes are the terminal sizes every view is checked at: the smallest that
// must be fully usable, and a common wide one.
var sizes = []struct{ w, h int }{{80, 24}, {120, 40}}

func found(t *testing.T, snap topology.Snapshot, name string) topology.Found {
	t.Helper()
	f, ok := fixture.Found(snap, name)
	if !ok {
		t.Fatalf("no ladder %q in fixture", name)
	}
	return f
}

// checkFrame asserts the invariants every rendered view must keep: exactly
// h lines, none wider than w.
func checkFrame(t *testing.T, view string, w, h int) {
	t.Helper()
	ls := strings.Split(view, "\n")
	if len(ls) != h {
		t.Errorf("view has %d lines, want %d", len(ls), h)
	}
	for i, l := range ls {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("line %d is %d cells wide, want at most %d: %q", i+1, lw, w, ansi.Strip(l))
		}
	}
}

func TestLadderViewGolden(t *testing.T) {
	busy := fixture.Busy()
	watch := health.Watch{Interval: 5 * time.Second, Still: func(q string) time.Duration {
		if q == "billing.delay.64" {
			return time.Hour
		}
		return 0
	}}
	tr, err := fixture.Orders().Trace(90*time.Second, "orders.work")
	if err != nil {
		t.Fatal(err)
	}
	_, overErr := fixture.Orders().Trace(200*24*time.Hour, "")
	cases := map[string]func() LadderState{
		"orders": func() LadderState {
			f := found(t, busy, "orders")
			return LadderState{Found: f, Rows: health.LadderRows(f, busy, watch), Selected: 3}
		},
		"orders-trace": func() LadderState {
			f := found(t, busy, "orders")
			return LadderState{Found: f, Rows: health.ApplyTrace(health.LadderRows(f, busy, watch), &tr), Selected: 0, Trace: &TraceState{Input: "90s orders.work", Trace: &tr}}
		},
		"orders-trace-error": func() LadderState {
			f := found(t, busy, "orders")
			return LadderState{Found: f, Rows: health.LadderRows(f, busy, watch), Trace: &TraceState{Input: "200d", Err: overErr}}
		},
		"orders-drift": func() LadderState {
			f := found(t, busy, "orders")
			return LadderState{Found: f, Rows: health.LadderRows(f, busy, watch), ShowDrift: true}
		},
		"orders-filter": func() LadderState {
			f := found(t, busy, "orders")
			return LadderState{Found: f, Rows: health.FilterRows(health.LadderRows(f, busy, watch), "work"), Filter: "work"}
		},
		"nsb-scrolled": func() LadderState {
			f := found(t, busy, "nsb.v2")
			rows := health.LadderRows(f, busy, watch)
			return LadderState{Found: f, Rows: rows, Selected: 20, Offset: 8}
		},
		"retry4": func() LadderState {
			f := found(t, busy, "retry4")
			return LadderState{Found: f, Rows: health.LadderRows(f, busy, watch), Selected: 1}
		},
		"retry4-folded": func() LadderState {
			f := found(t, busy, "retry4")
			rows, folded := health.FoldIdleRungs(health.LadderRows(f, busy, watch), "")
			return LadderState{Found: f, Rows: rows, Folded: folded}
		},
		"retry4-cost": func() LadderState {
			f := found(t, busy, "retry4")
			return LadderState{Found: f, Rows: health.LadderRows(f, busy, watch), ShowCost: true, Costs: f.Ladder.RadixCosts()}
		},
		"billing-cost": func() LadderState {
			f := found(t, busy, "billing")
			return LadderState{Found: f, Rows: health.LadderRows(f, busy, watch), ShowCost: true, Costs: f.Ladder.RadixCosts()}
		},
		"orders-forecast": func() LadderState {
			f := found(t, busy, "orders")
			return LadderState{Found: f, Rows: health.LadderRows(f, busy, watch), ShowForecast: true}
		},
		"billing-forecast": func() LadderState {
			f := found(t, busy, "billing")
			return LadderState{Found: f, Rows: health.LadderRows(f, busy, watch), ShowForecast: true}
		},
		"stalled": func() LadderState {
			// A quorum ladder after a node restart: three rungs' expired
			// messages wait to be dead-lettered, folded idle rungs around
			// them, the cursor on the first stalled rung.
			snap := fixture.Stalled()
			f := found(t, snap, "jobs")
			w := health.Watch{Interval: 5 * time.Second, Still: fixture.StalledWaits, Waited: fixture.StalledWaits}
			rows, folded := health.FoldIdleRungs(health.LadderRows(f, snap, w), "")
			sel := 0
			for i, r := range rows {
				if r.Stalled {
					sel = i
					break
				}
			}
			return LadderState{Found: f, Rows: rows, Folded: folded, Selected: sel}
		},
		"lost-route": func() LadderState {
			// A Celery ladder whose emails queue was deleted with 200
			// tasks in flight: the rung holding them is held by the lost
			// route, named with its destination, never stalled.
			snap := fixture.CeleryLost()
			f := found(t, snap, "celery")
			lr := report(f, snap, health.Watch{Interval: 5 * time.Second, Waited: fixture.LostWaits})
			rows, folded := health.FoldIdleRungs(lr.Rows, "")
			sel := 0
			for i, r := range rows {
				if r.Queue == "celery_delayed_2" {
					sel = i
				}
			}
			return LadderState{Found: f, Rows: rows, Folded: folded, Selected: sel, Totals: lr.Totals, Remedies: health.LostRemedies(lr.Rows)}
		},
		"lost-target": func() LadderState {
			// rungs' own ladder whose target jobs.q was deleted: the
			// unroutable queue names it from its messages' keys.
			snap := fixture.WorkLost()
			f := found(t, snap, "w")
			lr := report(f, snap, health.Watch{Interval: 5 * time.Second, Unrouted: fixture.WorkUnrouted()})
			sel := 0
			for i, r := range lr.Rows {
				if r.Kind == health.UnroutableRow {
					sel = i
				}
			}
			return LadderState{Found: f, Rows: lr.Rows, Selected: sel, Totals: lr.Totals, Remedies: health.LostRemedies(lr.Rows)}
		},
		"cluster-member-down": func() LadderState {
			// A three-node cluster with a node stopped: every queue lost a
			// member, the cursor on a rung holding messages shows where it
			// runs.
			snap := fixture.Clustered()
			f := found(t, snap, "jobs")
			lr := report(f, snap, health.Watch{Interval: 5 * time.Second})
			rows, folded := health.FoldIdleRungs(lr.Rows, "jobs.rung.03.1")
			sel := 0
			for i, r := range rows {
				if r.Queue == "jobs.rung.03.1" {
					sel = i
				}
			}
			return LadderState{Found: f, Rows: rows, Folded: folded, Selected: sel, Totals: lr.Totals, Placement: lr.Placement}
		},
		"delayed-retry": func() LadderState {
			// RabbitMQ 4.3's delayed retry holds messages in two rungs
			// (one holds nothing else and stays unfolded) and in the
			// worker's queue; the cursor on the first rung holding some.
			snap := fixture.DelayedRetry()
			f := found(t, snap, "tasks")
			rows, folded := health.FoldIdleRungs(health.LadderRows(f, snap, watch), "")
			sel := 0
			for i, r := range rows {
				if r.Stats.Delayed > 0 {
					sel = i
					break
				}
			}
			return LadderState{Found: f, Rows: rows, Folded: folded, Selected: sel}
		},
		"healthy": func() LadderState {
			snap := fixture.Healthy()
			f := found(t, snap, "orders")
			return LadderState{Found: f, Rows: health.LadderRows(f, snap, watch)}
		},
	}
	for name, mk := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d", name, sz.w, sz.h), func(t *testing.T) {
				s := judged(mk())
				body := sz.h - HeaderHeight - 1
				view := LadderView(s, NewStyles(true), sz.w, body)
				checkFrame(t, view, sz.w, body)
				golden.RequireEqual(t, ansi.Strip(view))
			})
		}
	}
}

func TestLadderListGolden(t *testing.T) {
	busy := fixture.Busy()
	items := health.LadderItems(topology.Discover(busy), busy, health.Watch{Interval: 5 * time.Second})
	cases := map[string]ListState{
		"busy":     {Items: items, Totals: health.Sum(items), Total: len(items), Selected: 1, Vhost: "/"},
		"filtered": {Items: health.FilterLadders(items, "zzz"), Total: len(items), Filter: "zzz", Vhost: "/"},
		"empty":    {Vhost: "/"},
	}
	for name, s := range cases {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s/%dx%d", name, sz.w, sz.h), func(t *testing.T) {
				body := sz.h - HeaderHeight - 1
				view := LadderList(s, NewStyles(false), sz.w, body)
				checkFrame(t, view, sz.w, body)
				golden.RequireEqual(t, ansi.Strip(view))
			})
		}
	}
}

func TestLadderTextGolden(t *testing.T) {
	busy := fixture.Busy()
	for _, w := range []int{80, 120} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			f := found(t, busy, "orders")
			lr := report(f, busy, health.Watch{})
			rows, folded := health.StatusRows(lr, false)
			out := LadderText(lr, rows, folded, w)
			if strings.Contains(out, "\x1b") {
				t.Error("LadderText wrote escape sequences")
			}
			for i, l := range strings.Split(out, "\n") {
				if ansi.StringWidth(l) > w {
					t.Errorf("line %d wider than %d: %q", i+1, w, l)
				}
			}
			golden.RequireEqual(t, out)
		})
	}
}

// status leaves the idle rungs of a ladder above radix 2 out, and says so.
func TestLadderTextFoldsIdleRungs(t *testing.T) {
	busy := fixture.Busy()
	f := found(t, busy, "retry4")
	text := func(all bool) string {
		lr := report(f, busy, health.Watch{})
		rows, n := health.StatusRows(lr, all)
		return LadderText(lr, rows, n, 100)
	}
	folded, all := text(false), text(true)
	if !strings.Contains(folded, "idle rungs not listed: --all lists every rung") || strings.Contains(all, "not listed") {
		t.Fatalf("folded:\n%s\nall:\n%s", folded, all)
	}
	if strings.Count(all, "retry4.rung.") <= strings.Count(folded, "retry4.rung.") {
		t.Fatalf("--all lists no more rungs than the folded text")
	}
	golden.RequireEqual(t, folded)
}

// status on a stalled quorum ladder: the EXPIRED column, the stalled rungs
// kept however idle they look, and each one named with the remedy.
func TestLadderTextStalled(t *testing.T) {
	snap := fixture.Stalled()
	f := found(t, snap, "jobs")
	w := health.Watch{Interval: 5 * time.Second, Waited: fixture.StalledWaits}
	lr := report(f, snap, w)
	rows, folded := health.StatusRows(lr, false)
	out := LadderText(lr, rows, folded, 80)
	for _, want := range []string{"✗ 3 stalled", "EXPIRED", "jobs.rung.03.1: stalled: 536 expired", "run rungs"} {
		if !strings.Contains(out, want) {
			t.Errorf("status text lacks %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
}

// status on a Celery ladder whose emails queue is gone: the held rung is
// named with the destination and count, the remedy restores the route, and
// nothing says stalled, #12625 or unstall.
func TestLadderTextLostRoute(t *testing.T) {
	snap := fixture.CeleryLost()
	lr := report(found(t, snap, "celery"), snap, health.Watch{Interval: 5 * time.Second, Waited: fixture.LostWaits})
	rows, folded := health.StatusRows(lr, false)
	out := LadderText(lr, rows, folded, 120)
	for _, want := range []string{"✗ lost route to emails", "celery_delayed_2: lost route: 200 expired held (queue emails is gone): at least 32 for emails, 168 may wait behind", "remedy: restore emails:", "routing_key='#.emails'", "rungs reroute --ladder celery"} {
		if !strings.Contains(out, want) {
			t.Errorf("status text lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"stalled", "12625", "unstall"} {
		if strings.Contains(out, bad) {
			t.Errorf("status text says %q of a lost route:\n%s", bad, out)
		}
	}
	golden.RequireEqual(t, out)
}

// A lost route nothing names (the delivery exchange binds no
// destination) is said as "every destination", in the summary too, with
// the binding that restores one, its name a placeholder.
func TestLadderTextLostUnnamed(t *testing.T) {
	snap := fixture.CeleryLost()
	var bs []topology.Binding
	for _, b := range snap.Bindings {
		if b.Source != "celery_delayed_delivery" {
			bs = append(bs, b)
		}
	}
	snap.Bindings = bs
	lr := report(found(t, snap, "celery"), snap, health.Watch{Interval: 5 * time.Second, Waited: fixture.LostWaits})
	rows, folded := health.StatusRows(lr, false)
	out := strings.Join(strings.Fields(LadderText(lr, rows, folded, 120)), " ")
	for _, want := range []string{"✗ lost route to every destination LVL", "lost route: 200 expired held for every destination (celery_delayed_delivery binds no destination)",
		"declare binding source=celery_delayed_delivery destination=<queue> routing_key='#.<queue>'"} {
		if !strings.Contains(out, want) {
			t.Errorf("status text lacks %q:\n%s", want, out)
		}
	}
}

// status on rungs' own ladder whose target is gone: the unroutable queue
// names it, and replay is offered only once the route is restored.
func TestLadderTextLostTarget(t *testing.T) {
	snap := fixture.WorkLost()
	lr := report(found(t, snap, "w"), snap, health.Watch{Interval: 5 * time.Second, Unrouted: fixture.WorkUnrouted()})
	out := LadderText(lr, lr.Rows, 0, 120)
	for _, want := range []string{"w.unroutable: 5 of 5 unroutable messages meant for jobs.q (queue jobs.q is gone)", "rungs apply --ladder w --target jobs.q", "rungs replay --from w.unroutable --to-origin sends them on"} {
		if !strings.Contains(out, want) {
			t.Errorf("status text lacks %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
}

// status on a three-node cluster with a node stopped: the leaders' spread,
// the members lost counted once in the summary and named on each queue.
func TestLadderTextCluster(t *testing.T) {
	snap := fixture.Clustered()
	lr := report(found(t, snap, "jobs"), snap, health.Watch{Interval: 5 * time.Second})
	rows, folded := health.StatusRows(lr, false)
	out := LadderText(lr, rows, folded, 80)
	for _, want := range []string{"leaders: rabbit@a ", "rabbit@c 0", "⚠ 92 lost a member", "88 idle rungs", "92 queues lost their member on rabbit@c"} {
		if !strings.Contains(out, want) {
			t.Errorf("status text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "warnings") || strings.Contains(out, "jobs.rung.03.1: ") {
		t.Errorf("lost members counted as warnings, or said per queue:\n%s", out)
	}
	golden.RequireEqual(t, out)
}

// status on a ladder under RabbitMQ 4.3's delayed retry: the DELAYED
// column, the rung holding only delayed messages kept, and the rungs and
// the worker's queue named with what holds them.
func TestLadderTextDelayedRetry(t *testing.T) {
	snap := fixture.DelayedRetry()
	lr := report(found(t, snap, "tasks"), snap, health.Watch{Interval: 5 * time.Second})
	if lr.Totals.Delayed != 5 || lr.Totals.InFlight != 310+57+3+2 {
		t.Errorf("totals %+v: want 5 delayed of 372 in flight (the worker's 9 are not in flight)", lr.Totals)
	}
	rows, folded := health.StatusRows(lr, false)
	out := LadderText(lr, rows, folded, 80)
	for _, want := range []string{"DELAYED", "5 delayed", "tasks.rung.01.3: 2 messages held by delayed retry beyond the rung's TTL", "tasks.work: 9 returned messages held back by delayed retry"} {
		if !strings.Contains(out, want) {
			t.Errorf("status text lacks %q:\n%s", want, out)
		}
	}
	golden.RequireEqual(t, out)
}

// report judges one ladder as the observer would.
func report(f topology.Found, snap topology.Snapshot, w health.Watch) health.LadderReport {
	return health.NewReport([]topology.Found{f}, snap, w).Ladders[0]
}

// judged gives a state the totals and forecast of the rows it shows, as
// the model does from the observer's report.
func judged(s LadderState) LadderState {
	if s.Totals.Ladders > 0 {
		return s // the report's, over rows some of which are folded
	}
	s.Totals = health.Total(s.Found, s.Rows)
	s.Forecast = health.Forecast(s.Found.Ladder, s.Rows, 0)
	return s
}

// TestLadderListStuckIsNotStalled: the list counts a ladder's stalled
// rungs under STALLED and only its otherwise stuck rungs under STUCK, as
// status, doctor and the exporter do. (It used to add the stalled ones
// to STUCK.)
func TestLadderListStuckIsNotStalled(t *testing.T) {
	snap := fixture.Stalled()
	items := health.LadderItems(topology.Discover(snap), snap, health.Watch{Interval: 5 * time.Second, Waited: fixture.StalledWaits})
	view := ansi.Strip(LadderList(ListState{Items: items, Totals: health.Sum(items), Total: len(items), Vhost: "/"}, NewStyles(false), 120, 20))
	var header, jobs []string
	for _, l := range strings.Split(view, "\n") {
		switch f := strings.Fields(l); {
		case len(f) > 0 && f[0] == "LADDER":
			header = f
		case len(f) > 1 && strings.Trim(f[0], "▸") == "" && f[1] == "jobs", len(f) > 0 && f[0] == "jobs":
			jobs = f
		}
	}
	if len(header) < 4 || len(jobs) < 4 {
		t.Fatalf("no header or jobs line:\n%s", view)
	}
	col := func(name string) string {
		for i := range header {
			if header[len(header)-1-i] == name {
				return jobs[len(jobs)-1-i]
			}
		}
		t.Fatalf("no %s column in %v", name, header)
		return ""
	}
	if col("STUCK") != "0" || col("STALLED") != "3" {
		t.Errorf("jobs: STUCK %s, STALLED %s\n%s", col("STUCK"), col("STALLED"), view)
	}
	if !strings.Contains(view, "3 stalled rungs") || strings.Contains(view, "stuck rung") {
		t.Errorf("totals line:\n%s", view)
	}
}
