package ops

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// BuildInfo is what a binary knows about how it was built.
type BuildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	Modified  bool   `json:"modified"`
	GoVersion string `json:"go"`
}

// ReadBuildInfo works out the version from, in order: version, the one
// set with -ldflags -X ...cli.Version (release archives), the main module's version (go
// install ...@vX sets it; a build in a checkout gets a pseudo-version),
// else "dev". Commit, date and modified come from the VCS stamp a build
// in a git checkout carries; go install from the proxy has none, and the
// module version then names the release.
func ReadBuildInfo(version string, read func() (*debug.BuildInfo, bool)) BuildInfo {
	b := BuildInfo{Version: version}
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
func (b BuildInfo) String() string {
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
