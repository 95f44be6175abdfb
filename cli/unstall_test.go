package cli

import (
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/broker/brokertest"
)

// TestUnstallBadInput: every bad input gets one line naming the problem,
// a non-zero exit, and changes nothing (no policy is left on the vhost).
// The stalled case itself needs a node restart: e2e's
// TestFaultStalledQuorumLadder.
func TestUnstallBadInput(t *testing.T) {
	env, cfg := brokerEnv(t)
	mustRun(t, env, "apply", "--ladder", "jobs", "--unit", "1s", "--levels", "3", "--radix", "2", "--queue-type", "quorum")
	mustRun(t, env, "apply", "--ladder", "plain", "--unit", "1s", "--levels", "3", "--radix", "2")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"unstall", "--ladder", "jobs", "jobs.rung.09", "--yes"}, "jobs.rung.09 is not a rung of ladder jobs"},
		{[]string{"unstall", "--ladder", "jobs", "plain.rung.01", "--yes"}, "not a rung of ladder jobs"},
		{[]string{"unstall", "--ladder", "nope", "--yes"}, `no ladder "nope"`},
		{[]string{"unstall", "--ladder", "plain", "--yes"}, "classic rungs"},
		{[]string{"unstall", "--ladder", "jobs", "--yes", "--read-only"}, "read-only"},
		{[]string{"unstall", "--ladder", "jobs", "jobs.rung.01", "--yes"}, "no expired messages waiting"},
	} {
		code, out, errs := run(t, env, tc.args...)
		line := strings.TrimRight(errs, "\n")
		if code == ExitOK || out != "" || strings.Contains(line, "\n") || !strings.Contains(line, tc.want) {
			t.Errorf("rungs %s: exit %d, want one line naming %q\nstdout: %s\nstderr: %s", strings.Join(tc.args, " "), code, tc.want, out, errs)
		}
	}
	// Nothing stalled: unstall looks and says so.
	if out := mustRun(t, env, "unstall", "--ladder", "jobs", "--yes"); !strings.Contains(out, "no stalled rung in ladder jobs") {
		t.Errorf("unstall on a healthy ladder: %q", out)
	}
	if ps := brokertest.Policies(t, cfg); len(ps) > 0 {
		t.Errorf("bad input left policies: %v", ps)
	}
}
