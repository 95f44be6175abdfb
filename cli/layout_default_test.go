package cli

import (
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/topology"
)

// On the real broker: a quorum ladder that exists keeps its layout when
// applied again without --layout, whichever layout this version gives a new
// one (a script re-run after upgrading rungs or the broker must not flip a
// ladder's exchanges under its producers).
func TestExistingQuorumLadderKeepsItsLayout(t *testing.T) {
	t.Parallel()
	env, _ := brokerEnv(t)
	for _, layout := range []string{"prefix", "direct"} {
		name := "keep-" + layout
		mustRun(t, env, "apply", "--ladder", name, "--layout", layout, "--max-delay", "1m")
		for _, args := range [][]string{{"apply", "--ladder", name}, {"apply", "--ladder", name, "--max-delay", "1m"}, {"plan", "--ladder", name}} {
			code, out, errs := run(t, env, args...)
			if code != ExitOK || !strings.Contains(out, layout+` ladder "`+name+`"`) || strings.Contains(errs, "rungs: note:") {
				t.Errorf("rungs %s: exit %d, want the %s ladder and no note\n%s%s", strings.Join(args, " "), code, layout, out, errs)
			}
		}
	}
}

// RabbitMQ 3.13.0 to 3.13.2 drop BCC keys at every dead-lettering, so a new
// ladder there is prefix whatever its queue type, with a note saying why.
// The fake management API plays a 3.13.1 broker (none runs here).
func TestNewLadderOn3131IsPrefix(t *testing.T) {
	existing, _ := topology.Ladder{Name: "jobs", Layout: "prefix", Levels: 2, Radix: 4}.Normalize()
	srv := fakeManagement(t, existing, "3.13.1", "rabbit@b", "enabled")
	vars := map[string]string{"RUNGS_URL": "amqp://guest:guest@127.0.0.1:1/", "RUNGS_MGMT_URL": srv.URL}
	for _, qt := range []string{"quorum", "classic"} {
		code, out, errs := run(t, vars, "plan", "--ladder", "other", "--max-delay", "10s", "--queue-type", qt, "--timeout", "2s")
		if code == ExitUsage || !strings.Contains(out, `prefix ladder "other"`) || !strings.Contains(errs, "a new "+qt+" ladder is prefix, not direct: RabbitMQ 3.13.1 drops BCC routing keys") {
			t.Errorf("%s: exit %d, want a prefix ladder and the note\n%s%s", qt, code, out, errs)
		}
	}
}
