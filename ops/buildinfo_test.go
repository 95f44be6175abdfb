package ops

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestReadBuildInfo(t *testing.T) {
	info := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/rungs-dev/rungs", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123abcd"},
			{Key: "vcs.time", Value: "2026-11-24T06:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	b := ReadBuildInfo("dev", func() (*debug.BuildInfo, bool) { return info, true })
	want := BuildInfo{Version: "v1.2.3", Commit: "0123abcd", Date: "2026-11-24T06:00:00Z", Modified: true, GoVersion: "go1.26.8"}
	if b != want {
		t.Errorf("got %+v, want %+v", b, want)
	}
	if s := b.String(); !strings.Contains(s, "rungs v1.2.3\n") || !strings.Contains(s, "commit 0123abcd (modified)\n") {
		t.Errorf("String() = %q", s)
	}
	// go run and go test say (devel): the version stays dev.
	info.Main.Version = "(devel)"
	if b := ReadBuildInfo("dev", func() (*debug.BuildInfo, bool) { return info, true }); b.Version != "dev" {
		t.Errorf("(devel) gave version %q", b.Version)
	}
	if b := ReadBuildInfo("dev", func() (*debug.BuildInfo, bool) { return nil, false }); b.Version != "dev" || b.Commit != "" {
		t.Errorf("no build info gave %+v", b)
	}
}
