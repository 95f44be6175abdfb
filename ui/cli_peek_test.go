package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// These pin the CLI's text and JSON for peek, trace, replay's dry run and
// the demo worker, drawn here since they left cli.

func TestWritePeek(t *testing.T) {
	cases := map[string]struct {
		res  broker.PeekResult
		g    ops.PeekGate
		want []string
		not  []string
	}{
		"empty, unchecked": {
			res:  broker.PeekResult{Queue: "q", Ready: 0},
			want: []string{"q: 0 of 0 ready message(s), from the head\n"},
			not:  []string{"peeking left", "queue)"},
		},
		"one, checked": {
			res:  broker.PeekResult{Queue: "q", Ready: 3, Messages: []broker.PeekedMessage{{Delivery: broker.Delivery{MessageID: "m1", Body: []byte("hi")}}}},
			g:    ops.PeekGate{Checked: true, Risk: broker.PeekRisk{Type: topology.Classic}},
			want: []string{"q: 1 of 3 ready message(s), from the head (classic queue)\npeeking left them in the queue, in order, marked redelivered\n\n", "m1"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			WritePeek(&b, tc.res, make([]topology.Story, len(tc.res.Messages)), tc.g, 0)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("missing %q in\n%s", w, b.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(b.String(), w) {
					t.Errorf("unexpected %q in\n%s", w, b.String())
				}
			}
		})
	}
}

func TestPeekNoticeText(t *testing.T) {
	cases := map[string]struct {
		g    ops.PeekGate
		want string
	}{
		"nothing to say": {ops.PeekGate{Checked: true}, ""},
		"unchecked":      {ops.PeekGate{Note: "type not checked"}, "rungs: warning: type not checked\n"},
		"checked":        {ops.PeekGate{Checked: true, Note: "counts rise"}, "rungs: note: counts rise\n"},
	}
	for name, tc := range cases {
		if got := PeekNoticeText(tc.g); got != tc.want {
			t.Errorf("%s: PeekNoticeText() = %q, want %q", name, got, tc.want)
		}
	}
}

func TestPeekJSON(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	res := broker.PeekResult{Queue: "q", Ready: 2, Messages: []broker.PeekedMessage{
		{Position: 0, DeliveryCount: -1, Properties: broker.Properties{Priority: 3},
			Delivery: broker.Delivery{MessageID: "a", Body: []byte("text"), Persistent: true, ContentType: "text/plain", Timestamp: ts, Headers: map[string]any{"k": "v"}}},
		{Position: 1, Delivery: broker.Delivery{Body: []byte{0xff, 0x00}}, DeliveryCount: 2},
	}}
	stories := []topology.Story{
		{Retries: []topology.Attempt{{N: 1, Reason: "boom", At: ts, Delay: time.Second}}, Hops: []topology.DeathHop{{Death: topology.Death{Queue: "r"}, Role: topology.RoleRung}}},
		{Path: &topology.Trace{Delay: 2 * time.Second, Target: "t", Hops: []topology.Hop{{Level: 1, Queue: "r1", TTL: time.Second, End: time.Second}}}},
	}
	cases := map[string]struct {
		g    ops.PeekGate
		want []string
	}{
		"unchecked": {ops.PeekGate{}, []string{`"effects":["` + peekStays + `"]`, `"body":"text"`, `"delivery_count":null`,
			`"priority":3`, `"timestamp":"2026-01-02T03:04:05Z"`, `"content_type":"text/plain"`, `"at":"2026-01-02T03:04:05Z"`,
			`"level":0`, `"routing_keys":[]`, `"body_base64":"/wA="`, `"body":null`, `"delivery_count":2`,
			`"path":{"delay_ms":2000,"bcc":null,"hops":[{"level":1,"digit":0,"queue":"r1","ttl_ms":1000,"start_ms":0,"end_ms":1000}],"target":"t"}`}},
		"checked": {ops.PeekGate{Checked: true, Risk: broker.PeekRisk{Type: topology.Quorum, Effects: []string{"counted"}}},
			[]string{`"queue_type":"quorum"`, `"effects":["counted"]`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(PeekJSON(res, stories, tc.g))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("missing %s in\n%s", w, b)
				}
			}
		})
	}
}

func TestTraceText(t *testing.T) {
	l := topology.Ladder{Name: "jobs", Unit: time.Second}
	tr := topology.Trace{Ladder: l, Requested: 1500 * time.Millisecond, Delay: 2 * time.Second, Key: "k", Exchange: "x", Target: "t",
		Hops: []topology.Hop{{Queue: "jobs.rung.01", TTL: 2 * time.Second, End: 2 * time.Second}}}
	cases := map[string]struct {
		tr   topology.Trace
		c    ops.RouteCheck
		want []string
	}{
		"rounded, unchecked": {tr, ops.RouteCheck{Unchecked: "not checked"}, []string{"delay    2s (1.5s rounded up to the 1s unit)\n", "not checked\n", "1    jobs.rung.01  2s   0s      2s\n→    t                  2s\n"}},
		"broken":             {tr, ops.RouteCheck{Err: errors.New("no binding")}, []string{"BROKEN on the broker: no binding\n"}},
		"checked, with BCC": {func() topology.Trace { t := tr; t.BCC = []string{"a", "b"}; t.Requested = t.Delay; return t }(), ops.RouteCheck{Checked: true},
			[]string{"delay    2s\n", "BCC      a  b   (header BCC", "checked: the broker's bindings route it exactly this way\n"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			WriteTrace(&b, "LADDER", tc.tr, tc.c)
			if !strings.HasPrefix(b.String(), "LADDER\n") {
				t.Errorf("no description first:\n%s", b.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("missing %q in\n%s", w, b.String())
				}
			}
		})
	}
}

func TestTraceJSON(t *testing.T) {
	tr := topology.Trace{Ladder: topology.Ladder{Name: "jobs"}, Delay: time.Second}
	if got := TraceJSON(tr, ops.RouteCheck{}, "L"); got["broken"] != nil || got["ladder"] != "L" || len(got["hops"].([]JSONHop)) != 0 {
		t.Errorf("TraceJSON() = %v", got)
	}
	if got := TraceJSON(tr, ops.RouteCheck{Err: errors.New("x")}, nil); got["broken"] != "x" {
		t.Errorf("broken = %v", got["broken"])
	}
}

func TestDryRunText(t *testing.T) {
	dry := ops.ReplayDryRun{Ready: 5, Verdicts: []ops.ReplayVerdict{
		{Position: 0, MessageID: "a", Moves: true, Exchange: "x", RoutingKey: "k", Reaches: []string{"q1", "q2"}},
		{Position: 1, Moves: true, Exchange: "x", RoutingKey: "k"},
		{Position: 2, MessageID: "c", Stays: "filtered out by --where"},
	}}
	got := DryRunText("src", dry)
	want := "dry run: the first 3 of 5 ready message(s) of src; nothing was moved\n" +
		"  #1  a  → \"x\" key \"k\" (reaches q1, q2)\n" +
		"  #2  -  → \"x\" key \"k\"\n" +
		"  #3  c  stays: filtered out by --where\n"
	if got != want {
		t.Errorf("DryRunText() =\n%s\nwant\n%s", got, want)
	}
	if j := DryRunJSON("src", dry); j["previewed"] != 3 || j["dry_run"] != true {
		t.Errorf("DryRunJSON() = %v", j)
	}
}

func TestWarningsText(t *testing.T) {
	if got := WarningsText(nil); got != "" {
		t.Errorf("no warnings: %q", got)
	}
	if got := WarningsText([]string{"a", "b"}); got != "rungs: warning: a\nrungs: warning: b\n" {
		t.Errorf("WarningsText() = %q", got)
	}
	if got := WarningText(""); got != "" {
		t.Errorf("no warning: %q", got)
	}
	if got := WarningText("a"); got != "rungs: warning: a\n" {
		t.Errorf("WarningText() = %q", got)
	}
}

func TestPolicyText(t *testing.T) {
	cases := map[string]struct {
		p    RetryPolicy
		want string
	}{
		"backoff, jitter": {RetryPolicy{Initial: 2 * time.Second, Max: time.Minute, Multiplier: 3, Jitter: 0.5, MaxAttempts: 4}, "backoff 2s ×3 up to 1m +50% jitter, 4 attempts"},
		"default factor":  {RetryPolicy{Initial: time.Second, Max: time.Minute, DefaultMultiply: 2, MaxAttempts: 5}, "backoff 1s ×2 up to 1m, 5 attempts"},
		"steps":           {RetryPolicy{Steps: []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute}, MaxAttempts: 4}, "steps 5s, 30s, 2m, 4 attempts"},
	}
	for name, tc := range cases {
		if got := PolicyText(tc.p); got != tc.want {
			t.Errorf("%s: PolicyText() = %q, want %q", name, got, tc.want)
		}
	}
}

func TestJobLine(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.Local)
	boom := errors.New("boom")
	cases := map[string]struct {
		j    Job
		want string
	}{
		"ok, no id":    {Job{At: at, Attempt: 1}, "03:04:05.006  job  attempt 1  ok"},
		"retried":      {Job{At: at, ID: "j", Attempt: 2, Err: boom, Delay: 5 * time.Second, Key: "k"}, "03:04:05.006  j  attempt 2  failed: boom; retry in 5s (key k)"},
		"parked":       {Job{At: at, ID: "j", Attempt: 3, Err: boom, Parked: true, Queue: "p"}, "03:04:05.006  j  attempt 3  failed: boom; parked in p"},
		"retry failed": {Job{At: at, ID: "j", Attempt: 1, Err: boom, RetryErr: errors.New("closed")}, "03:04:05.006  j  attempt 1  failed: boom; could not retry it (closed), handed it back"},
	}
	for name, tc := range cases {
		if got := JobLine(tc.j); got != tc.want {
			t.Errorf("%s: JobLine() = %q, want %q", name, got, tc.want)
		}
	}
}

func TestJobJSON(t *testing.T) {
	ok := JobJSON(Job{Attempt: 1})
	if ok["job"] != "job" || ok["ok"] != true || ok["error"] != nil || ok["retry_error"] != nil {
		t.Errorf("ok job: %v", ok)
	}
	failed := JobJSON(Job{ID: "j", Err: errors.New("boom"), RetryErr: errors.New("closed"), Action: "retried", Delay: time.Second})
	if failed["ok"] != false || failed["error"] != "boom" || failed["action"] != "retried" || failed["delay_ms"] != int64(1000) || failed["retry_error"] != "closed" {
		t.Errorf("failed job: %v", failed)
	}
}

func TestReplayReportOut(t *testing.T) {
	res := broker.MoveProgress{Moved: 3, Elapsed: time.Second}
	text := ReplayReportText(res, "src", "to q", "parked")
	if !strings.HasPrefix(text, "replayed 3 message(s) from src to q in 1s") || !strings.HasSuffix(text, "\n") || !strings.Contains(text, "parked in parked") {
		t.Errorf("ReplayReportText() =\n%s", text)
	}
	j := ReplayReportJSON(res, "src", "to q")
	if r, ok := j["reasons"].(map[string]int); !ok || r == nil || j["source"] != "src" || j["destination"] != "to q" {
		t.Errorf("ReplayReportJSON() = %v", j)
	}
	res.Reasons = map[string]int{"no route": 1}
	if r := ReplayReportJSON(res, "src", "")["reasons"].(map[string]int); r["no route"] != 1 {
		t.Errorf("reasons = %v", r)
	}
}

func TestPublishText(t *testing.T) {
	tr := topology.Trace{Exchange: "x", Key: "k", Target: "q", Delay: 90 * time.Second, Hops: []topology.Hop{{}, {}}}
	cases := map[string]struct {
		r    broker.PublishResult
		want string
	}{
		"confirmed": {broker.PublishResult{Confirmed: 2}, "published 2 of 2 to x with key k: 2 confirmed, 0 returned, 0 nacked, 0 failed (1.5s)\nthey reach q in 1m30s, after 2 rungs\n"},
		"none":      {broker.PublishResult{Returned: 2}, "published 0 of 2 to x with key k: 0 confirmed, 2 returned, 0 nacked, 0 failed (1.5s)\n"},
	}
	for name, tc := range cases {
		if got := PublishText(tr, tc.r, 2, 1500*time.Millisecond); got != tc.want {
			t.Errorf("%s: PublishText() = %q, want %q", name, got, tc.want)
		}
	}
	if j := PublishJSON(tr, broker.PublishResult{Confirmed: 2}, 2, time.Second); j["delay_ms"] != int64(90000) || j["arrives_in"] != "1m30s" || j["confirmed"] != 2 {
		t.Errorf("PublishJSON() = %v", j)
	}
}
