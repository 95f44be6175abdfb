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

// More than ops.MaxUnpaced messages need a rate, and the refusal and the
// help say which: a pace, or max for as fast as confirms allow.
func TestPublishCountNeedsRateSaysHow(t *testing.T) {
	code, out, errs := run(t, offline, "publish", "--delay", "1s", "--count", "100000")
	if code != ExitUsage || !strings.Contains(errs, "--rate max") || !strings.Contains(errs, "as fast as confirms allow") || out != "" {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	// With --rate max it gets as far as the broker, which is not there.
	if code, _, errs := run(t, offline, "publish", "--delay", "1s", "--count", "100000", "--rate", "max"); code != ExitError {
		t.Errorf("--rate max: exit %d, stderr %q", code, errs)
	}
	_, help, _ := run(t, offline, "publish", "--help")
	if !strings.Contains(help, "--rate max") {
		t.Errorf("publish --help does not say --rate max:\n%s", help)
	}
}
