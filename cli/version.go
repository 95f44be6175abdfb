package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/ops"
)

func (e *env) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print rungs' version, commit and build date",
		Long: `version prints the module version (the release, or the pseudo-version of a
build from a checkout), the git commit and commit date the binary was built
from, whether the checkout had uncommitted changes, and the Go version.`,
		Example: `  rungs version
  rungs version --json`,
		Args: cobra.NoArgs,
		// version needs no broker: a bad config must not hide it.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(*cobra.Command, []string) error {
			b := ops.ReadBuildInfo(Version, debug.ReadBuildInfo)
			return e.view().emit(b, fmt.Sprint(b))
		},
	}
}
