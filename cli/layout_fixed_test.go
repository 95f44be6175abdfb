package cli

import (
	"regexp"
	"strings"
	"testing"
)

// notFound is how a command says it found no ladder.
var notFound = regexp.MustCompile(`no (\w+ )?ladder "`)

// A layout whose library fixes the ladder's name (NServiceBus v2 and v1,
// Celery) names its ladder without --ladder, for every command that takes
// --layout: each finds the ladder apply declared, as status does.
func TestFixedNameLayoutsNeedNoLadder(t *testing.T) {
	for _, layout := range []string{"nsb", "nsb1", "celery"} {
		t.Run(layout, func(t *testing.T) {
			env, _ := brokerEnv(t)
			mustRun(t, env, "apply", "--layout", layout, "--target", "sales")
			for _, args := range [][]string{
				{"plan"},
				{"trace", "5s", "--to", "sales"},
				{"publish", "--delay", "5m", "--to", "sales"},
				{"status"},
				{"status", "--json"},
				// On 4.0 these quorum rungs keep the default delivery limit,
				// so reading them takes --force (docs/scheduled.md).
				{"scheduled", "--force"},
				{"scheduled", "cancel", "--all", "--dry-run", "--force"},
				{"export"},
				{"doctor"},
				{"unstall"},
				{"purge", "--yes"},
				{"teardown", "--yes"},
			} {
				args = append(args, "--layout", layout)
				code, out, errs := run(t, env, args...)
				cmd := "rungs " + strings.Join(args, " ")
				if m := notFound.FindString(out + errs); m != "" {
					t.Errorf("%s: exit %d, found no ladder without --ladder: %s", cmd, code, strings.TrimSpace(errs))
					continue
				}
				// unstall refuses a ladder of classic rungs (nsb1's): it
				// found the ladder and says why it does nothing.
				if code != ExitOK && !strings.Contains(errs, "classic rungs") {
					t.Errorf("%s: exit %d\n%s%s", cmd, code, out, errs)
				}
			}
		})
	}
}
