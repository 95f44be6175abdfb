package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rungs-dev/rungs/ops"
)

func TestVersionCommandNeedsNoBroker(t *testing.T) {
	env := map[string]string{"RUNGS_CONTEXT": "no-such-context"}
	code, out, errs := run(t, env, "version", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var b ops.BuildInfo
	if err := json.Unmarshal([]byte(out), &b); err != nil || b.Version == "" || b.GoVersion == "" {
		t.Errorf("json %q: %v", out, err)
	}
}

// TestVersionOfABuiltBinary builds rungs from a clone of this checkout's
// commit, as a user building from source does, and checks that version
// names the commit. (A clone, because the go command reads VCS information
// only where .git is a directory, not in a git worktree.)
func TestVersionOfABuiltBinary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	src := filepath.Join(t.TempDir(), "src")
	if out, err := exec.Command("git", "clone", "-q", "--shared", strings.TrimSpace(string(top)), src).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	rev, err := exec.Command("git", "-C", src, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "rungs")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = src
	// Some environments turn VCS stamping off in GOFLAGS; a release build
	// must have it on.
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("rungs version: %v", err)
	}
	s := string(out)
	if !strings.Contains(s, "commit "+strings.TrimSpace(string(rev))+"\n") || !strings.Contains(s, "built  20") {
		t.Errorf("rungs version printed:\n%s\nwant commit %s (unmodified) and a build date", s, rev)
	}
	if strings.HasPrefix(s, "rungs dev") || !strings.HasPrefix(s, "rungs v") {
		t.Errorf("a build from a checkout should carry a pseudo-version:\n%s", s)
	}
}

func TestManPages(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run(t, offline, "man", dir); code != ExitOK {
		t.Fatalf("man: exit %d %s", code, errs)
	}
	for _, page := range []string{"rungs.1", "rungs-exporter.1", "rungs-version.1", "rungs-status.1"} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil || !strings.Contains(string(b), ".SH NAME") {
			t.Errorf("%s: %v %.80q", page, err, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "rungs-man.1")); err == nil {
		t.Error("the hidden man command has a page")
	}
}
