package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

var schedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func schedLadder() topology.Ladder {
	return topology.Ladder{Name: "jobs", Vhost: "v", Layout: "suffix", Unit: time.Second, QueueType: topology.Classic, Levels: 3, Radix: 2}
}

func TestWriteScheduled(t *testing.T) {
	msg := ops.ScheduledMessage{Rung: "jobs.r1", Dest: "orders", MessageID: "m-1", Earliest: schedNow.Add(90 * time.Second), Latest: schedNow.Add(90 * time.Second), Exact: true, Basis: topology.DueRungs, Preview: "hello\n  world"}
	window := ops.ScheduledMessage{Rung: "jobs.r2", TaskID: "task-7", MessageID: "m-2", Earliest: schedNow.Add(time.Hour), Latest: schedNow.Add(time.Hour + 5*time.Minute), Basis: topology.DueNone, Preview: strings.Repeat("x", 40)}
	for _, tc := range []struct {
		name   string
		res    ops.ScanResult
		action string
		want   []string // lines that must be there, in order
		not    []string
	}{
		{name: "a listing with nothing matched ends after its counts",
			res:  ops.ScanResult{Ladder: schedLadder(), Seen: 3},
			want: []string{"suffix ladder jobs (1s unit, classic): 3 in flight, 0 match ", "due  next minute 0 · next hour 0 · next day 0 · later 0   (estimate from depths: 0 · 0 · 0 · 0)", "read in 0s; a rung was held at most 0s"},
			not:  []string{"DUE (UTC)", "recounted", "left out", "warning"}},
		{name: "a dry run names its action; recounted and foreign say so",
			res: ops.ScanResult{Ladder: schedLadder(), Seen: 5, Matched: 2, Recounted: 1, Foreign: 2}, action: "cancel",
			want: []string{"dry run: would cancel 2 message(s) of jobs (", "1 message(s) moved down the ladder while it was read and were counted once, in the rung they left", "2 message(s) carry a routing key of no path of jobs and were left out"}},
		{name: "the rows: exact and window dues, task id over message id, dashes, the body clipped to one line",
			res: ops.ScanResult{Ladder: schedLadder(), Seen: 9, Matched: 3, Messages: []ops.ScheduledMessage{msg, window}},
			want: []string{"the 2 earliest due:", "DUE (UTC)", "2026-03-01 12:01:30", "1m30s", "rungs", "jobs.r1", "orders", "m-1", "- ", "hello world",
				"2026-03-01 13:00:00 … 13:05:00", "task-7", strings.Repeat("x", 29) + "…"},
			not: []string{"m-2"}},
		{name: "all matches listed: no earliest-due line",
			res: ops.ScanResult{Ladder: schedLadder(), Seen: 1, Matched: 1, Messages: []ops.ScheduledMessage{msg}},
			not: []string{"earliest due"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			WriteScheduled(&b, ops.ScanPlan{}, tc.res, tc.action, schedNow)
			got := b.String()
			at := 0
			for _, w := range tc.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("missing %q after offset %d in\n%s", w, at, got)
				}
				at += i + len(w)
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("has %q:\n%s", n, got)
				}
			}
			for _, l := range strings.Split(got, "\n") {
				if strings.TrimRight(l, " ") != l {
					t.Errorf("trailing blanks in %q", l)
				}
			}
		})
	}
}

func TestCLISchedHelpers(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{orHyphen(""), "-"},
		{orHyphen("a"), "a"},
		{clipped(" a\n\tb ", 30), "a b"},
		{clipped("abcdef", 4), "abc…"},
		{clipped("abcd", 4), "abcd"},
		{HashBar(0, 4, 4), "[----]"},
		{HashBar(2, 4, 4), "[##--]"},
		{HashBar(5, 4, 4), "[####]"},
		{HashBar(3, 0, 4), "[####]"},
		{scheduledDue(ops.ScheduledMessage{Earliest: schedNow, Exact: true}), "2026-03-01 12:00:00"},
		{scheduledDue(ops.ScheduledMessage{Earliest: schedNow, Latest: schedNow.Add(time.Minute)}), "2026-03-01 12:00:00 … 12:01:00"},
		{previewWhere(ops.MigrateMessagePreview{Park: "p"}), "→ park: p"},
		{previewWhere(ops.MigrateMessagePreview{TargetDelayMS: 2000, Exchange: "x", RoutingKey: "k", Target: "q"}), "→ 2s via x key k → q"},
		{ScanProgressText(ops.ScanProgress{Done: true}), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestProgressTexts(t *testing.T) {
	scan := ScanProgressText(ops.ScanProgress{Seen: 1, Total: 2, Matched: 1, Index: 0, Rungs: 3})
	if !strings.HasPrefix(scan, "\r\033[Kscanning [############------------]") || !strings.HasSuffix(scan, "1/2 read, 1 matched, rung 1 of 3") {
		t.Errorf("scan line %q", scan)
	}
	act := ActionProgressText(ops.ActFire, ops.ActionProgress{Rung: "jobs.r1", Index: 1, Rungs: 2,
		Result: ops.ActionResult{Acted: 1, Left: 2}, Move: broker.MoveProgress{Moved: 1, Parked: 1, Dropped: 1, Skipped: 3}})
	if want := "\r\033[Kfire: rung 2 of 2 (jobs.r1): 4 done, 5 left in place"; act != want {
		t.Errorf("action line %q, want %q", act, want)
	}
	mp := ops.MigratePlan{Ready: 4, Rungs: make([]ops.MigrateRung, 2)}
	for _, tc := range []struct {
		width int
		want  string
	}{
		{200, "\rmigrate [############------------] 2/4  rung 1/2 jobs.r1  moved 1 · parked 1 · "},
		{11, "\rmigrate [#"},
	} {
		got := MigrateProgressText(mp, 0, "jobs.r1", ops.MigrateResult{Moved: 1}, broker.MoveProgress{Parked: 1}, tc.width)
		if !strings.HasPrefix(got, tc.want) || utf8.RuneCountInString(got) != len("\r")+tc.width-1 {
			t.Errorf("width %d: %q, want %q padded to %d", tc.width, got, tc.want, tc.width-1)
		}
	}
}

func TestWriteAction(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    ops.ActionPlan
		res  ops.ActionResult
		want string
	}{
		{"a cancel parks and says how to undo it; its own reason is not a stay",
			ops.ActionPlan{ActionRequest: ops.ActionRequest{Action: ops.ActCancel, Park: "jobs.scheduled.cancelled"}},
			ops.ActionResult{Acted: 2, Left: 1, Reasons: map[string]int{ops.CancelReason: 2}},
			"2 message(s) parked in jobs.scheduled.cancelled; 1 left in place (held at most 0s); 0s\nundo: rungs replay --from jobs.scheduled.cancelled --to-origin\n"},
		{"a cancel that took nothing has nothing to undo",
			ops.ActionPlan{ActionRequest: ops.ActionRequest{Action: ops.ActCancel, Park: "p"}}, ops.ActionResult{},
			"0 message(s) parked in p; 0 left in place (held at most 0s); 0s\n"},
		{"a fire with duplicates and a stay",
			ops.ActionPlan{ActionRequest: ops.ActionRequest{Action: ops.ActFire}},
			ops.ActionResult{Acted: 1, Unknown: 1, Reasons: map[string]int{"no route": 3}, Held: 1500 * time.Millisecond},
			"1 message(s) fired; 0 left in place (held at most 1.5s); 0s\n1 possible duplicate(s): copies confirmed whose original may have stayed (they carry x-rungs-replay-id)\n  3 stayed: no route\n"},
		{"discard and reschedule name their verb",
			ops.ActionPlan{ActionRequest: ops.ActionRequest{Action: ops.ActDiscard}}, ops.ActionResult{Acted: 1},
			"1 message(s) discarded; 0 left in place (held at most 0s); 0s\n"},
		{"reschedule",
			ops.ActionPlan{ActionRequest: ops.ActionRequest{Action: ops.ActReschedule}}, ops.ActionResult{Acted: 1},
			"1 message(s) rescheduled; 0 left in place (held at most 0s); 0s\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			WriteAction(&b, tc.p, tc.res)
			if b.String() != tc.want {
				t.Errorf("got\n%q\nwant\n%q", b.String(), tc.want)
			}
		})
	}
}

func migratePlan(group bool) ops.MigratePlan {
	from, to := schedLadder(), schedLadder()
	to.Name, to.Layout = "jobs2", "prefix"
	mp := ops.MigratePlan{Migration: topology.Migration{From: from, To: to}, Park: "jobs.migrate.parked"}
	if group {
		mp.Group = &topology.DelayGroup{App: "celery", Name: "retries"}
	}
	return mp
}

func TestWriteMigrate(t *testing.T) {
	res := ops.MigrateResult{Moved: 3, Parked: 1, Elapsed: 2 * time.Second, Stopped: broker.StopEmpty,
		Rungs: []ops.RungResult{{Queue: "jobs.r2", Moved: 3, Left: 0, Stopped: broker.StopEmpty}, {Queue: "jobs.r1", Parked: 1, Left: -1, Stopped: "limit"}}}
	var b strings.Builder
	WriteMigrate(&b, migratePlan(false), res)
	want := `migrated 3 message(s) from suffix "jobs" into prefix "jobs2" in 2s (2/s); stopped: ` + broker.StopEmpty + `
  rung     moved  parked  stayed  left
  jobs.r2  3      0       0       0
  jobs.r1  0      1       0       ?  stopped: limit
  total    3      1       0
  1 parked in jobs.migrate.parked, the reason in x-rungs-reason
`
	if b.String() != want {
		t.Errorf("ladder: got\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	res.Parked, res.Unknown, res.Reconnects = 0, 1, 1
	res.Rungs = []ops.RungResult{{Queue: "q.5s", Moved: 3, Left: 0, Stopped: "limit", OthersHolding: 1}}
	WriteMigrate(&b, migratePlan(true), res)
	got := b.String()
	for _, w := range []string{"from the delay queues of celery/retries into prefix \"jobs2\" in 2s; stopped:", "  queue", "q.5s", "1 possibly duplicated (in flight when the connection dropped 1 time)", "  warning: q.5s read empty"} {
		if !strings.Contains(got, w) {
			t.Errorf("group: missing %q in\n%s", w, got)
		}
	}
	if strings.Contains(got, "stopped: limit") || strings.Contains(got, "parked in") {
		t.Errorf("group: a delay queue's stop or an empty park is shown:\n%s", got)
	}
}

func TestWriteMigratePreview(t *testing.T) {
	out := []ops.MigrateRungPreview{
		{Queue: "jobs.r4", TTLMS: 4000, Ready: 2, Skipped: "quorum rung: add --force"},
		{Queue: "jobs.r2", TTLMS: 2000},
		{Queue: "jobs.r1", TTLMS: 1000, Ready: 2,
			Messages:  []ops.MigrateMessagePreview{{Position: 0, MessageID: "a", Park: "p"}, {Position: 1, TargetDelayMS: 1000, Exchange: "x", RoutingKey: "k", Target: "q"}},
			Estimates: []topology.Estimate{{}, {Rung: topology.Rung{Queue: "jobs.r1"}, Total: 3 * time.Second, Spent: 1500*time.Millisecond + 7, Basis: topology.BasisDeath}}},
	}
	var b strings.Builder
	mp := migratePlan(false)
	WriteMigratePreview(&b, mp, out)
	want := "dry run: nothing was moved\n  from " + mp.Migration.From.Describe() + "\n  into " + mp.Migration.To.Describe() + `
jobs.r4 (4s): 2 ready; not previewed: quorum rung: add --force
jobs.r1 (1s): 2 ready, the first 2:
  #1  a  ?                          → park: p
  #2  -  3s, ≥1.5s spent (x-death)  → 1s via x key k → q
`
	if b.String() != want {
		t.Errorf("ladder: got\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	out = []ops.MigrateRungPreview{
		{Queue: "q.10s", TTLMS: 10000, Skipped: "held"},
		{Queue: "q.5s", TTLMS: 5000, Messages: []ops.MigrateMessagePreview{{MessageID: "z", RemainingMS: 3000, DelayMS: 5000, Basis: "x-death", Park: "p"}}},
	}
	WriteMigratePreview(&b, migratePlan(true), out)
	want = "dry run: nothing was moved\n  from the delay queues of celery/retries\n  into " + mp.Migration.To.Describe() + `
q.10s (10s): 0 ready; not previewed: held
q.5s (5s): 0 ready, the first 1:
  #1  z  3s left of 5s (x-death)  → park: p
`
	if b.String() != want {
		t.Errorf("delays: got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWriteContexts(t *testing.T) {
	var b strings.Builder
	if err := WriteContexts(&b, ops.ContextList{Path: "/c.json"}); err != nil || b.String() != "no contexts in /c.json\n" {
		t.Errorf("empty: %q, %v", b.String(), err)
	}
	b.Reset()
	l := ops.ContextList{Contexts: []ops.ContextSummary{
		{Name: "prod", Current: true, URL: "amqp://u:xxxxx@h/", Vhost: "v", ReadOnly: true, Credentials: "url"},
		{Name: "dev", URL: "amqp://h/", Credentials: "none"},
	}}
	_ = WriteContexts(&b, l)
	want := `   context  url                vhost    read-only  password
*  prod     amqp://u:xxxxx@h/  v        yes        url
   dev      amqp://h/          (url's)             none
`
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCLISchedJSON(t *testing.T) {
	ladder := func(l topology.Ladder) any { return l.Name }
	msg := ops.ScheduledMessage{Rung: "r", Delay: 2 * time.Second, Earliest: schedNow.Add(time.Second), Latest: schedNow.Add(time.Second), Exact: true, Basis: topology.DueRungs}
	res := ops.ScanResult{Ladder: schedLadder(), Messages: []ops.ScheduledMessage{msg}, Bases: map[topology.DueBasis]int{topology.DueRungs: 1}, Held: time.Second}
	list := ScheduledJSON(ops.ScanPlan{}, res, "", schedNow)
	if _, ok := list["dry_run"]; ok {
		t.Error("a listing says dry_run")
	}
	if got, want := jsonOf(t, list["messages"]), `[{"rung":"r","position":0,"dest":"","delay_ms":2000,"routing_key":"","message_id":"","correlation_id":"","due":"2026-03-01T12:00:01Z","due_latest":"2026-03-01T12:00:01Z","exact":true,"left_ms":1000,"basis":"rungs","preview":"","body_bytes":0}]`; got != want {
		t.Errorf("messages %s\nwant %s", got, want)
	}
	if got := jsonOf(t, list["horizons"]); got != `{"minute":0,"hour":0,"day":0,"later":0}` {
		t.Errorf("horizons %s", got)
	}
	if list["held_ms"] != int64(1000) || jsonOf(t, list["bases"]) != `{"rungs":1}` {
		t.Errorf("held %v bases %v", list["held_ms"], list["bases"])
	}
	dry := ScheduledJSON(ops.ScanPlan{}, ops.ScanResult{}, "fire", schedNow)
	if dry["dry_run"] != true || dry["action"] != "fire" || jsonOf(t, dry["messages"]) != "[]" {
		t.Errorf("dry run %v", dry)
	}

	act := ActionJSON(ops.ActionPlan{ActionRequest: ops.ActionRequest{Action: ops.ActFire}}, ops.ActionResult{})
	if jsonOf(t, act["reasons"]) != "{}" || act["action"] != "fire" {
		t.Errorf("action %v", act)
	}

	mr := ops.MigrateResult{Rungs: []ops.RungResult{{Queue: "q", Left: -1}}}
	lad := MigrateJSON(migratePlan(false), mr, ladder)
	if lad["from"] != "jobs" || lad["to"] != "jobs2" || jsonOf(t, lad["held_elsewhere"]) != "[]" {
		t.Errorf("ladder migrate %v", lad)
	}
	if _, ok := lad["from_delays"]; ok {
		t.Error("a ladder's migration has from_delays")
	}
	if got := jsonOf(t, lad["rungs"]); got != `[{"queue":"q","moved":0,"parked":0,"stayed":0,"unknown":0,"left":-1,"stopped":""}]` {
		t.Errorf("rungs %s", got)
	}
	mr.Rungs[0].OthersHolding = 2
	grp := MigrateJSON(migratePlan(true), mr, ladder)
	if grp["from_delays"] != "celery/retries" || len(grp["held_elsewhere"].([]string)) != 1 {
		t.Errorf("group migrate %v", grp)
	}
	if _, ok := grp["from"]; ok {
		t.Error("a migration of delays has from")
	}

	if p := MigratePreviewJSON(migratePlan(false), nil, ladder); p["from"] != "jobs" || p["dry_run"] != true {
		t.Errorf("ladder preview %v", p)
	} else if _, ok := p["rungs"]; !ok {
		t.Error("ladder preview without rungs")
	}
	if p := MigratePreviewJSON(migratePlan(true), nil, ladder); p["from_delays"] != "celery/retries" {
		t.Errorf("delays preview %v", p)
	} else if _, ok := p["queues"]; !ok {
		t.Error("delays preview without queues")
	}

	c := ContextsJSON(ops.ContextList{Path: "/c", Contexts: []ops.ContextSummary{}})
	if jsonOf(t, c) != `{"config":"/c","contexts":[]}` {
		t.Errorf("contexts %s", jsonOf(t, c))
	}
}
