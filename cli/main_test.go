package cli

import (
	"testing"

	"github.com/rungs-dev/rungs/internal/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m, 4) }
