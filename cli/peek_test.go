package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

func TestRenderBody(t *testing.T) {
	cases := map[string]struct {
		body        string
		contentType string
		max         int
		kind        string
		first       string
		lines       int
	}{
		"empty":           {body: "", kind: "empty"},
		"json by type":    {body: `{"a":1,"b":[2]}`, contentType: "application/json", kind: "JSON", first: "{", lines: 6},
		"json by shape":   {body: ` [1, 2] `, kind: "JSON", first: "[", lines: 4},
		"not quite json":  {body: `{"a":`, contentType: "application/json", kind: "text", first: `{"a":`, lines: 1},
		"text":            {body: "héllo\nworld", kind: "text", first: "héllo", lines: 2},
		"text cut":        {body: strings.Repeat("x", 100), max: 10, kind: "text, first 10 shown", first: strings.Repeat("x", 10), lines: 1},
		"text cut a rune": {body: "ééééé", max: 3, kind: "text, first 3 shown", first: "é", lines: 1},
		"binary":          {body: "\x00\x01\x02binary", kind: "binary, hex", first: "00000000  00 01 02 62 69 6e 61 72  79                       |...binary|", lines: 1},
		"control chars":   {body: "a\x07b", kind: "binary, hex", lines: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kind, lines := renderBody([]byte(tc.body), tc.contentType, tc.max)
			if kind != tc.kind || len(lines) != tc.lines || tc.first != "" && lines[0] != tc.first {
				t.Errorf("renderBody() = %q, %q; want %q, %d lines starting %q", kind, lines, tc.kind, tc.lines, tc.first)
			}
		})
	}
}

func TestDeathLinesAndHistory(t *testing.T) {
	l, _ := topology.Ladder{Name: "jobs", Levels: 4, Unit: time.Second, Targets: []string{"work"}}.Normalize()
	at := time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC)
	deaths := []topology.Death{
		{Queue: "work", Reason: "rejected", Count: 1, Time: at.Add(5 * time.Second), Exchange: "jobs.rung.00.expired", RoutingKeys: []string{"0.1.0.1.work"}},
		{Queue: "jobs.rung.02", Reason: "expired", Count: 1, Time: at, Exchange: "jobs.ingest", RoutingKeys: []string{"0.1.0.1.work"}},
	}
	got := deathLines(topology.Timeline(deaths, []topology.Ladder{l}))
	want := []string{
		"+0s  jobs.rung.02  rung 2 (4s)  expired ×1   13:00:00  from jobs.ingest key 0.1.0.1.work",
		"+5s  work          target       rejected ×1  13:00:05  from jobs.rung.00.expired key 0.1.0.1.work",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("deathLines() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	h := historyLines([]topology.Attempt{
		{N: 1, At: at, Reason: "boom", Delay: 2 * time.Second},
		{N: 2, At: at.Add(3 * time.Second), Reason: "boom again", Parked: true},
	})
	if len(h) != 2 || !strings.Contains(h[0], "retried after 2s") || !strings.Contains(h[1], "parked") {
		t.Errorf("historyLines() = %q", h)
	}
	hs := headerLines(map[string]any{"b": int64(2), "a": "x", topology.HeaderDeath: []any{}, "t": at, "m": map[string]any{"k": []any{int64(1)}}})
	if strings.Join(hs, "|") != `a=x|b=2|m={"k":[1]}|t=2026-11-22T13:00:00Z` {
		t.Errorf("headerLines() = %q", hs)
	}
}

func TestParseRate(t *testing.T) {
	good := map[string]float64{"200": 200, "200/s": 200, "6000/m": 100, "36/h": 0.01, "0.5": 0.5}
	for in, want := range good {
		if got, err := parseRate(in); err != nil || got != want {
			t.Errorf("parseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-5", "fast", "10/d", "/s"} {
		if _, err := parseRate(bad); err == nil {
			t.Errorf("parseRate(%q) accepted", bad)
		}
	}
}

func TestDeadLetterCommandsRefuseBadInput(t *testing.T) {
	cases := map[string][]string{
		"peek without queue":     {"peek"},
		"peek count zero":        {"peek", "q", "-n", "0"},
		"peek count too big":     {"peek", "q", "-n", "5000"},
		"replay without from":    {"replay", "--to-queue", "x"},
		"replay without target":  {"replay", "--from", "q"},
		"replay two targets":     {"replay", "--from", "q", "--to-queue", "x", "--to-origin"},
		"replay ladder no delay": {"replay", "--from", "q", "--to-ladder", "jobs"},
		"replay delay alone":     {"replay", "--from", "q", "--to-queue", "x", "--delay", "5s"},
		"replay into itself":     {"replay", "--from", "q", "--to-queue", "q"},
		"replay park itself":     {"replay", "--from", "q", "--to-origin", "--park", "q"},
		"replay bad rate":        {"replay", "--from", "q", "--to-origin", "--rate", "fast"},
		"replay bad where":       {"replay", "--from", "q", "--to-origin", "--where", "tenant"},
		"replay bad delay":       {"replay", "--from", "q", "--to-ladder", "jobs", "--delay", "15"},
		"worker without demo":    {"worker"},
		"worker bad fail":        {"worker", "--demo", "--fail", "2"},
		"worker bad steps":       {"worker", "--demo", "--steps", "5s,soon"},
		"worker bad policy":      {"worker", "--demo", "--attempts", "0"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errs := run(t, offline, args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitUsage, out, errs)
			}
			if n := strings.Count(strings.TrimRight(errs, "\n"), "\n"); n != 0 || !strings.HasPrefix(errs, "rungs: ") {
				t.Errorf("want one line starting with 'rungs: ', got %q", errs)
			}
		})
	}
	for _, args := range [][]string{{"replay", "--from", "q", "--to-origin", "--yes"}, {"worker", "--demo"}} {
		code, _, errs := run(t, offline, append(args, "--read-only")...)
		if code == ExitOK || !strings.Contains(errs, "read-only") || strings.Contains(errs, "connection refused") {
			t.Errorf("%v --read-only: exit %d, %q", args, code, errs)
		}
	}
}

// rawChannel is a plain amqp091 channel to a test vhost, for what a worker
// does that rungs does not (rejecting a message into a dead-letter queue).
func rawChannel(t *testing.T, cfg broker.Config) *amqp.Channel {
	t.Helper()
	conn, err := amqp.DialConfig(cfg.URL, amqp.Config{Vhost: cfg.Vhost})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// rejectAll rejects n messages of a queue without requeueing, as a failing
// worker does, waiting for them to arrive.
func rejectAll(t *testing.T, cfg broker.Config, queue string, n int) {
	t.Helper()
	ch := rawChannel(t, cfg)
	deadline := time.Now().Add(15 * time.Second)
	for n > 0 && time.Now().Before(deadline) {
		d, ok, err := ch.Get(queue, false)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err := d.Nack(false, false); err != nil {
			t.Fatal(err)
		}
		n--
	}
	if n > 0 {
		t.Fatalf("%d messages never reached %s", n, queue)
	}
}

func TestPeekDrawsTheHopsOfADeadLetter(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	c := dial(t, cfg)
	ctx := context.Background()
	// work dead-letters what its worker rejects into dlq.
	if _, err := c.Apply(ctx, topology.Plan{Queues: []topology.Queue{
		{Name: "work", Durable: true, Args: topology.Args{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "dlq"}},
		{Name: "dlq", Durable: true},
	}}); err != nil {
		t.Fatal(err)
	}
	mustRun(t, env, "apply", "--ladder", "p", "--unit", "100ms", "--levels", "4", "--target", "work")
	mustRun(t, env, "publish", "--ladder", "p", "--delay", "500ms", "--to", "work", "--count", "2", "--body", `{"order":42}`, "--header", "tenant=acme")
	rejectAll(t, cfg, "work", 2)

	out := mustRun(t, env, "peek", "dlq")
	for _, want := range []string{
		"dlq: 2 of 2 ready message(s), from the head (classic queue)",
		"tenant=acme", `"order": 42`, "x-rungs-delay-ms=500",
		"p.rung.02  rung 2 (400ms)  expired ×1", "p.rung.00  rung 0 (100ms)  expired ×1", "work  target  rejected ×1",
		"from p.ingest key 0.1.0.1.work",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("peek output lacks %q:\n%s", want, out)
		}
	}
	var js jsonPeek
	if err := json.Unmarshal([]byte(mustRun(t, env, "peek", "dlq", "-n", "1", "--json")), &js); err != nil {
		t.Fatal(err)
	}
	if js.Ready != 2 || js.Peeked != 1 || len(js.Messages) != 1 {
		t.Fatalf("peek --json: %+v", js)
	}
	m := js.Messages[0]
	if len(m.Deaths) != 3 || m.Deaths[0].Queue != "p.rung.02" || m.Deaths[0].Role != "rung" || *m.Deaths[0].Level != 2 ||
		m.Deaths[2].Queue != "work" || m.Deaths[2].Reason != "rejected" || !m.Redelivered || m.Body == nil || *m.Body != `{"order":42}` {
		t.Errorf("peek --json message: %+v", m)
	}
	// Peeking removed nothing, in read-only mode too.
	if out := mustRun(t, env, "peek", "dlq", "--read-only"); !strings.Contains(out, "2 of 2 ready") {
		t.Errorf("read-only peek:\n%s", out)
	}
}

func TestPeekRefusesQuorumRungsWithoutForce(t *testing.T) {
	t.Parallel()
	env, _ := brokerEnv(t)
	mustRun(t, env, "apply", "--ladder", "q", "--unit", "1s", "--levels", "3", "--queue-type", "quorum")
	mustRun(t, env, "publish", "--ladder", "q", "--delay", "6s", "--count", "2")
	code, out, errs := run(t, env, "peek", "q.rung.02")
	if code != ExitUsage || !strings.Contains(errs, "quorum ladder q") || !strings.Contains(errs, "--force") || out != "" {
		t.Fatalf("peek of a quorum rung: exit %d, %q", code, errs)
	}
	code, _, errs = run(t, env, "peek", "q.rung.02", "--force", "--read-only")
	if code == ExitOK || !strings.Contains(errs, "read-only") {
		t.Fatalf("read-only peek of a quorum rung: exit %d, %q", code, errs)
	}
	out = mustRun(t, env, "peek", "q.rung.02", "--force")
	if !strings.Contains(out, "2 of 2 ready") || !strings.Contains(out, "x-delivery-count 0 before this peek") {
		t.Errorf("forced peek:\n%s", out)
	}
}
