package ops

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rungs-dev/rungs/broker"
)

// TestScheduledRefused: what Scheduled refuses, worded for rungs
// scheduled's flags, and which of it is bad input.
func TestScheduledRefused(t *testing.T) {
	ask := ScheduledAsk{Vhost: "v", Ladder: LadderQuery{Name: "jobs"}}
	other := errors.New("connection refused")
	readOnly := fmt.Errorf("scheduled cancel: %w", broker.ErrReadOnly)
	for _, tc := range []struct {
		name  string
		err   error
		want  string
		input bool
	}{
		{"none", nil, "", false},
		{"other", other, "connection refused", false},
		{"field with a flag", fieldErr("due-before", "not a time"), "--due-before: not a time", true},
		{"field without a flag", fieldErr("colour", "blue"), "colour: blue", true},
		{"gate, read-only", &ScanRefusal{Gate: PeekGate{Verdict: PeekReadOnly, Why: "a quorum rung"}}, "scheduled: " + broker.ErrReadOnly.Error() + ": a quorum rung", false},
		{"gate", &ScanRefusal{Gate: PeekGate{Why: "a quorum rung"}}, "refusing to read ladder jobs: a quorum rung; add --force to read it anyway", true},
		{"ambiguous", &AmbiguousLadderError{Name: "jobs", Layouts: []string{"prefix", "suffix"}}, (&AmbiguousLadderError{Name: "jobs", Layouts: []string{"prefix", "suffix"}}).Error() + ": add --layout", true},
		{"no ladder", fmt.Errorf("find: %w", ErrNoScheduledLadder), `no ladder "jobs" in vhost v; nothing was read or changed`, true},
		{"read-only", readOnly, readOnly.Error(), false},
		{"input", badInput("--all and a filter"), "--all and a filter", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ask.Refused(tc.err)
			if tc.want == "" {
				if got != nil {
					t.Fatalf("got %v, want nil", got)
				}
				return
			}
			if got == nil || got.Error() != tc.want || IsInputError(got) != tc.input {
				t.Errorf("got %v (input %v), want %q (input %v)", got, IsInputError(got), tc.want, tc.input)
			}
		})
	}
}

// TestBridgeRefused: a refused field is bad input naming its flag.
func TestBridgeRefused(t *testing.T) {
	other := errors.New("connection refused")
	for _, tc := range []struct {
		err   error
		want  string
		input bool
	}{
		{fieldErr("every", "must be positive"), "--every must be positive", true},
		{other, "connection refused", false},
	} {
		got := BridgeRefused(tc.err)
		if got.Error() != tc.want || IsInputError(got) != tc.input {
			t.Errorf("BridgeRefused(%v) = %v (input %v), want %q (input %v)", tc.err, got, IsInputError(got), tc.want, tc.input)
		}
	}
	if BridgeRefused(nil) != nil {
		t.Error("BridgeRefused(nil) is not nil")
	}
}
