package ui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

func planLadder(t *testing.T, layout string, radix int) topology.Ladder {
	t.Helper()
	l, err := topology.Ladder{Name: "jobs", Vhost: "/", Layout: layout, Unit: time.Second, Levels: 2, Radix: radix}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestPlanText(t *testing.T) {
	prefix, suffix := planLadder(t, "prefix", 2), planLadder(t, "suffix", 2)
	tests := []struct {
		name    string
		l       topology.Ladder
		objects bool
		has     []string
		hasNot  []string
	}{
		{"prefix shows the radix choice", prefix, false, []string{prefix.Describe() + "\n", "  radix  levels", "← this ladder", "hops on average, 2 at most\n"}, []string{"  exchange  "}},
		{"suffix has no radix choice", suffix, false, []string{suffix.Describe() + "\n"}, []string{"radix  levels"}},
		{"objects", prefix, true, []string{"  exchange  ", "  queue  ", "  binding  ", "→ "}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlanText(tt.l, tt.l.Plan(), tt.objects)
			for _, s := range tt.has {
				if !strings.Contains(got, s) {
					t.Errorf("no %q in\n%s", s, got)
				}
			}
			for _, s := range tt.hasNot {
				if strings.Contains(got, s) {
					t.Errorf("%q in\n%s", s, got)
				}
			}
			if strings.HasPrefix(got, "  ") || !strings.HasSuffix(got, "\n") || strings.Contains(got, " \n") {
				t.Errorf("layout:\n%q", got)
			}
		})
	}
}

func TestPlanDriftText(t *testing.T) {
	d := topology.Drift{Kind: "missing", Object: "queue", Name: "jobs.rung.00"}
	tests := []struct {
		name      string
		c         ops.DriftCheck
		out, errs string
	}{
		{"unchecked", ops.DriftCheck{Err: errors.New("refused")}, "", "rungs: could not read the broker, drift not checked: refused\n"},
		{"match", ops.DriftCheck{Checked: true}, "drift: none, the broker matches the plan\n", ""},
		{"drift", ops.DriftCheck{Checked: true, Drift: []topology.Drift{d}}, "drift: 1 difference(s)\n  " + d.String() + "\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs := PlanDriftText(tt.c)
			if out != tt.out || errs != tt.errs {
				t.Fatalf("got %q %q, want %q %q", out, errs, tt.out, tt.errs)
			}
		})
	}
}

func TestAppliedText(t *testing.T) {
	l := planLadder(t, "suffix", 2)
	got := AppliedText(l, broker.ApplyResult{Exchanges: 1, Queues: 2, Bindings: 3})
	want := "applied " + l.Describe() + "\n  1 exchange, 2 queues, 3 bindings declared\n"
	if got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestPlanObjectsJSON(t *testing.T) {
	x, q, b := PlanObjectsJSON(topology.Plan{})
	if x != nil || q != nil || b != nil {
		t.Fatal("an empty plan's objects are null")
	}
	l := planLadder(t, "prefix", 2)
	x, q, b = PlanObjectsJSON(l.Plan())
	if len(x) == 0 || len(q) == 0 || len(b) == 0 {
		t.Fatalf("objects %d %d %d", len(x), len(q), len(b))
	}
	for _, e := range x {
		if e.Args == nil {
			t.Fatalf("exchange %s has null arguments", e.Name)
		}
	}
	if ArgsJSON(nil) == nil || len(ArgsJSON(topology.Args{"x": 1})) != 1 {
		t.Fatal("ArgsJSON")
	}
}

func TestUnstallTexts(t *testing.T) {
	applied := []struct {
		a    ops.Applied
		want string
	}{
		{ops.Applied{Queue: "q", Remedy: topology.RemedyLeaderMove, From: "a", To: "b"}, "q: moved its leader from a to b (a is a follower again)\n"},
		{ops.Applied{Queue: "q", Remedy: topology.RemedyPolicy, Policy: "p"}, "q: declared policy p\n"},
		{ops.Applied{Queue: "q", Remedy: topology.RemedyRaRestart, Member: "m"}, "q: restarted Ra member m\n"},
	}
	for _, tt := range applied {
		if got := UnstallAppliedText(tt.a); got != tt.want {
			t.Errorf("UnstallAppliedText(%v) = %q, want %q", tt.a.Remedy, got, tt.want)
		}
	}
	d := ops.Drained{StalledRung: ops.StalledRung{Queue: topology.Queue{Name: "q"}, Before: 1200}, Now: topology.Queue{Stats: topology.QueueStats{Expired: 3}}}
	if got, want := UnstallDrainingText(d), "q: draining, 3 waiting to be dead-lettered (was 1200)\n"; got != want {
		t.Errorf("UnstallDrainingText = %q, want %q", got, want)
	}
	still := &ops.StillStalledError{Stuck: []ops.StalledRung{{Queue: topology.Queue{Name: "q"}}}, Remedy: topology.RemedyPolicy, Hint: []string{"h1", "h2"}}
	if got, want := UnstallHintText(still), "the policy did not get q moving; on the node, run:\n  h1\n  h2\nor run unstall again with --rabbitmqctl PREFIX\n"; got != want {
		t.Errorf("UnstallHintText = %q, want %q", got, want)
	}
}

func TestParkedText(t *testing.T) {
	if got := ParkedText(ops.RerouteRequest{}); got != "" {
		t.Fatalf("nothing parked: %q", got)
	}
	req := ops.RerouteRequest{Parked: []string{"a", "b"}, Park: topology.Plan{Queues: []topology.Queue{{Name: "a.parked"}, {Name: "b.parked"}}}}
	want := "a: parked in a.parked (replay them from there once a is back)\nb: parked in b.parked (replay them from there once b is back)\n"
	if got := ParkedText(req); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestDiscoveredText(t *testing.T) {
	if got := DiscoveredText(nil, "/prod"); got != "no ladders in /prod\n" {
		t.Fatalf("none: %q", got)
	}
	binary := planLadder(t, "suffix", 2)
	hex := planLadder(t, "prefix", 16)
	hex.Targets = []string{"a", "b"}
	got := DiscoveredText([]health.LadderReport{
		{Found: topology.Found{Ladder: binary}, Totals: health.Totals{InFlight: 5, Unroutable: 1, Stalled: 2, Drift: 3}},
		{Found: topology.Found{Ladder: hex}},
	}, "/")
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "vhost  ladder  layout") {
		t.Fatalf("table:\n%s", got)
	}
	if f := strings.Fields(lines[1]); f[4] != "2" || f[7] != "5" || f[8] != "1" || f[9] != "2" || f[10] != "3" {
		t.Errorf("binary row: %q", lines[1])
	}
	if f := strings.Fields(lines[2]); f[4] != fmt.Sprintf("%d×r16", hex.Levels) || f[len(f)-1] != "a,b" {
		t.Errorf("radix 16 row: %q", lines[2])
	}
}
