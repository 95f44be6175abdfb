package cli

import (
	"strings"
	"testing"
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
