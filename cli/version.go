package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// buildInfo is what a binary knows about how it was built.
type buildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	Modified  bool   `json:"modified"`
	GoVersion string `json:"go"`
}

// readBuildInfo works out the version from, in order: -ldflags
// -X ...cli.Version (release archives), the main module's version (go
// install ...@vX sets it; a build in a checkout gets a pseudo-version),
// else "dev". Commit, date and modified come from the VCS stamp a build
// in a git checkout carries; go install from the proxy has none, and the
// module version then names the release.
func readBuildInfo(read func() (*debug.BuildInfo, bool)) buildInfo {
	b := buildInfo{Version: Version}
	bi, ok := read()
	if !ok {
		return b
	}
	b.GoVersion = bi.GoVersion
	if b.Version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		b.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.Date = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the human form: one line per fact.
func (b buildInfo) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "rungs %s\n", b.Version)
	if b.Commit != "" {
		mod := ""
		if b.Modified {
			mod = " (modified)"
		}
		fmt.Fprintf(&s, "commit %s%s\n", b.Commit, mod)
	}
	if b.Date != "" {
		fmt.Fprintf(&s, "built  %s\n", b.Date)
	}
	if b.GoVersion != "" {
		fmt.Fprintf(&s, "go     %s\n", b.GoVersion)
	}
	return s.String()
}

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
			b := readBuildInfo(debug.ReadBuildInfo)
			if e.opts.json {
				return writeJSON(e.Out, b)
			}
			_, err := fmt.Fprint(e.Out, b)
			return err
		},
	}
}
