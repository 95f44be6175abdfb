package cli

import (
	"testing"
	"time"
)

func TestWorkerPolicyFlags(t *testing.T) {
	wf := workerFlags{attempts: 4, jitter: 0.5, multiplier: 3, initial: "2s", maxBackoff: "1m"}
	p, err := wf.policy()
	if err != nil || p.Initial != 2*time.Second || p.Max != time.Minute || p.Multiplier != 3 || p.MaxAttempts != 4 {
		t.Fatalf("policy() = %+v, %v", p, err)
	}
	if got := describePolicy(p); got != "backoff 2s ×3 up to 1m +50% jitter, 4 attempts" {
		t.Errorf("describePolicy() = %q", got)
	}
	wf.stepsFlag, wf.jitter = "5s,30s,2m", 0
	p, err = wf.policy()
	if err != nil || len(p.Steps) != 3 || p.Steps[2] != 2*time.Minute {
		t.Fatalf("policy() with steps = %+v, %v", p, err)
	}
	if got := describePolicy(p); got != "steps 5s, 30s, 2m, 4 attempts" {
		t.Errorf("describePolicy() = %q", got)
	}
	for _, bad := range []workerFlags{
		{attempts: 0, initial: "1s", maxBackoff: "1m"},
		{attempts: 3, initial: "1s", maxBackoff: "1m", jitter: 2},
		{attempts: 3, initial: "soon", maxBackoff: "1m"},
		{attempts: 3, initial: "1m", maxBackoff: "1s"},
	} {
		if _, err := bad.policy(); err == nil {
			t.Errorf("policy() accepted %+v", bad)
		}
	}
}
