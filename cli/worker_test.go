package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/retry"
)

func TestWorkerDescribePolicy(t *testing.T) {
	p := retry.Policy{Initial: 2 * time.Second, Max: time.Minute, Multiplier: 3, Jitter: 0.5, MaxAttempts: 4}
	if got := describePolicy(p); got != "backoff 2s ×3 up to 1m +50% jitter, 4 attempts" {
		t.Errorf("describePolicy() = %q", got)
	}
	p = retry.Policy{Steps: []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute}, MaxAttempts: 4}
	if got := describePolicy(p); got != "steps 5s, 30s, 2m, 4 attempts" {
		t.Errorf("describePolicy() = %q", got)
	}
}

// The demo worker's flags are refused before any broker is met: one line,
// the usage exit code.
func TestWorkerFlags(t *testing.T) {
	env := map[string]string{"RUNGS_URL": "amqp://guest:guest@127.0.0.1:1/", "RUNGS_MGMT_URL": "http://127.0.0.1:1"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"worker"}, "runs only the demo worker (--demo)"},
		{[]string{"worker", "--demo", "--fail", "2"}, "--fail must be between 0 and 1, got 2"},
		{[]string{"worker", "--demo", "--steps", "5s,soon"}, "--steps: "},
		{[]string{"worker", "--demo", "--attempts", "0"}, "MaxAttempts is 0"},
		{[]string{"worker", "--demo", "--feed", "lots"}, "--feed: "},
	} {
		code, _, stderr := run(t, env, c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", c.args, code, stderr, ExitUsage, c.want)
		}
	}
}
