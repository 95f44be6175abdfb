package cli

import (
	"strings"
	"testing"
)

// The root --help describes rungs as it is: the direct layout, radix 16 and
// BCC by default, and the jobs users come for.
func TestRootHelpDescribesToday(t *testing.T) {
	code, out, _ := run(t, offline, "--help")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"direct", "radix 16", "BCC", "scheduled", "replay", "migrate", "rungs scheduled", "rungs replay", "rungs migrate"} {
		if !strings.Contains(out, want) {
			t.Errorf("rungs --help does not say %q", want)
		}
	}
	if strings.Contains(out, "binary in the routing key") {
		t.Error("rungs --help describes the old binary routing-key ladder as the default")
	}
}
