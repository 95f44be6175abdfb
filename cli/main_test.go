package cli

import (
	"os"
	"testing"

	"github.com/rungs-dev/rungs/internal/testutil"
)

// TestMain runs the parallel tests four at a time (testutil.DefaultParallel
// says why), a number the shared broker carries without slowing any test's
// management requests past their timeouts.
func TestMain(m *testing.M) {
	testutil.DefaultParallel(4)
	os.Exit(m.Run())
}
