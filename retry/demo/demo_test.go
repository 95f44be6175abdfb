package demo

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/retry"
	"github.com/rungs-dev/rungs/topology"
)

func TestPolicy(t *testing.T) {
	in := Input{Attempts: 4, Jitter: 0.5, Multiplier: 3, Initial: "2s", MaxBackoff: "1m"}
	p, err := in.Policy()
	if err != nil || p.Initial != 2*time.Second || p.Max != time.Minute || p.Multiplier != 3 || p.MaxAttempts != 4 || p.Steps != nil {
		t.Fatalf("Policy() = %+v, %v", p, err)
	}
	in.Steps, in.Jitter, in.Initial = "5s,30s,2m", 0, "ignored with steps"
	p, err = in.Policy()
	if err != nil || len(p.Steps) != 3 || p.Steps[2] != 2*time.Minute {
		t.Fatalf("Policy() with steps = %+v, %v", p, err)
	}
	for _, bad := range []Input{
		{Attempts: 0, Initial: "1s", MaxBackoff: "1m"},
		{Attempts: 3, Initial: "1s", MaxBackoff: "1m", Jitter: 2},
		{Attempts: 3, Initial: "soon", MaxBackoff: "1m"},
		{Attempts: 3, Initial: "1s", MaxBackoff: "later"},
		{Attempts: 3, Initial: "1m", MaxBackoff: "1s"},
		{Attempts: 3, Steps: "5s,soon"},
	} {
		if _, err := bad.Policy(); !errors.Is(err, ErrInput) {
			t.Errorf("Policy() of %+v: %v, want bad input", bad, err)
		}
	}
}

// The input's refusals are one line naming the flag, and bad input.
func TestWorkerRefuses(t *testing.T) {
	ok := Input{Attempts: 3, Initial: "1s", MaxBackoff: "1m", Work: "100ms", Fail: 0.3, Prefetch: 4}
	for _, tc := range []struct {
		name string
		edit func(*Input)
		want string
	}{
		{"work", func(in *Input) { in.Work = "soon" }, "--work: "},
		{"feed", func(in *Input) { in.Feed = "lots" }, "--feed: "},
		{"fail above 1", func(in *Input) { in.Fail = 1.5 }, "--fail must be between 0 and 1, got 1.5"},
		{"fail below 0", func(in *Input) { in.Fail = -0.1 }, "--fail must be between 0 and 1"},
		{"prefetch", func(in *Input) { in.Prefetch = 0 }, "--prefetch must be at least 1"},
		{"jobs", func(in *Input) { in.Jobs = -1 }, "--jobs cannot be negative"},
		{"policy", func(in *Input) { in.Attempts = 0 }, "MaxAttempts is 0"},
	} {
		in := ok
		tc.edit(&in)
		_, err := in.Worker()
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want bad input with %q", tc.name, err, tc.want)
		}
	}
	in := ok
	in.Feed, in.Seed, in.Jobs = "2/s", 7, 20
	w, err := in.Worker()
	if err != nil {
		t.Fatal(err)
	}
	if w.Feed != 2 || w.Work != 100*time.Millisecond || w.Seed != 7 || w.Jobs != 20 || w.Prefetch != 4 || w.Policy.MaxAttempts != 3 {
		t.Errorf("%+v", w)
	}
	// One seed, one sequence: a run can be repeated.
	again, _ := in.Worker()
	if a, b := w.Rand(), again.Rand(); a != b {
		t.Errorf("seed 7 drew %v then %v", a, b)
	}
	in.Seed = 0
	if w, _ := in.Worker(); w.Seed == 0 {
		t.Error("no seed given: the drawn seed is not said")
	}
}

func TestQueueOf(t *testing.T) {
	for _, tc := range []struct {
		l     topology.Ladder
		queue string
		want  string
	}{
		{topology.Ladder{Name: "demo", Targets: []string{"demo.a", "demo.b"}}, "mine", "mine"},
		{topology.Ladder{Name: "demo", Targets: []string{"demo.a", "demo.b"}}, "", "demo.a"},
		{topology.Ladder{Name: "demo"}, "", "demo.work"},
	} {
		if got := QueueOf(tc.l, tc.queue); got != tc.want {
			t.Errorf("QueueOf(%v, %q) = %q, want %q", tc.l.Targets, tc.queue, got, tc.want)
		}
	}
}

func TestStats(t *testing.T) {
	var s Stats
	for _, ev := range []retry.Event{
		{},
		{Err: errors.New("x"), Outcome: retry.Outcome{Action: retry.Retried}},
		{Err: errors.New("x"), Outcome: retry.Outcome{Action: retry.Parked}},
		{Err: errors.New("x"), RetryErr: errors.New("closed")},
		{Delivery: broker.Delivery{MessageID: "b"}},
	} {
		s.Count(ev)
	}
	if s != (Stats{OK: 2, Retried: 1, Parked: 1, FailedRetry: 1}) || s.Finished() != 3 {
		t.Errorf("%+v, finished %d", s, s.Finished())
	}
}

// TestRefused: which errors of a worker's start are refused input.
func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{inputError{errors.New("--fail must be 0 to 1")}, true},
		{fmt.Errorf("retry: %w", topology.ErrDelayTooLong), true},
		{fmt.Errorf("retry: %w", topology.ErrBadDest), true},
		{fmt.Errorf("retry: %w", topology.ErrNoDest), true},
		{errors.New("connection refused"), false},
	} {
		if got := Refused(tc.err); got != tc.want {
			t.Errorf("Refused(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
