package ops

import (
	"context"
	"errors"
	"testing"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

func TestCheckPeekInput(t *testing.T) {
	cases := map[string]struct {
		n, maxBody int
		want       string
	}{
		"fine":          {10, 0, ""},
		"the most":      {broker.MaxPeek, 100, ""},
		"none":          {0, 0, "--count must be between 1 and 1000, got 0"},
		"too many":      {broker.MaxPeek + 1, 0, "--count must be between 1 and 1000, got 1001"},
		"negative body": {1, -1, "--max-body cannot be negative"},
	}
	for name, tc := range cases {
		err := CheckPeekInput(tc.n, tc.maxBody)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: CheckPeekInput() = %v", name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || !IsInputError(err)):
			t.Errorf("%s: CheckPeekInput() = %v, want input error %q", name, err, tc.want)
		}
	}
}

func TestPeekGateRefusal(t *testing.T) {
	cases := map[string]struct {
		g        PeekGate
		want     string
		input    bool
		readOnly bool
	}{
		"go ahead":            {g: PeekGate{Checked: true, Note: "counts rise"}},
		"read-only":           {g: PeekGate{Verdict: PeekReadOnly, Checked: true, Why: "it counts"}, want: "peek q: " + broker.ErrReadOnly.Error() + ": it counts", readOnly: true},
		"force, unchecked":    {g: PeekGate{Verdict: PeekNeedsForce, Why: "cannot tell whether q is a quorum queue"}, want: "cannot tell whether q is a quorum queue; add --force to peek anyway", input: true},
		"force, looked it up": {g: PeekGate{Verdict: PeekNeedsForce, Checked: true, Why: "it has a delivery limit"}, want: "refusing to peek q: it has a delivery limit; add --force to peek anyway", input: true},
	}
	for name, tc := range cases {
		err := tc.g.Refusal("q")
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: Refusal() = %v", name, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.want || IsInputError(err) != tc.input || errors.Is(err, broker.ErrReadOnly) != tc.readOnly {
			t.Errorf("%s: Refusal() = %v, want %q (input %v, read-only %v)", name, err, tc.want, tc.input, tc.readOnly)
		}
	}
}

func TestPeekLaddersWithoutLookup(t *testing.T) {
	have := []topology.Ladder{{Name: "jobs"}}
	if got := PeekLadders(context.Background(), nil, "/", broker.PeekResult{}, have); len(got) != 1 || got[0].Name != "jobs" {
		t.Errorf("PeekLadders() = %v", got)
	}
}
