package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBinaryHoldsWhatOperatorsUse: no package the rungs binary links reads
// /proc or sends SIGKILL. Finding a process and measuring it from outside
// (its fds, its memory, a kill -9) is the lab's work (internal/lab,
// cmd/rungs-lab), which the binary does not link; what rungs bench needs of
// the broker's process it asks the management API or the kernel's clocks.
func TestBinaryHoldsWhatOperatorsUse(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const module = "github.com/rungs-dev/rungs"
	linked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || (f[0] != module && !strings.HasPrefix(f[0], module+"/")) {
			continue
		}
		linked++
		if strings.Contains(f[0], "/internal/lab") || strings.HasPrefix(f[0], module+"/cmd/") {
			t.Errorf("rungs links %s, the lab", f[0])
		}
		for _, name := range strings.Fields(f[2]) {
			for _, use := range measuresFromOutside(t, filepath.Join(f[1], name)) {
				t.Errorf("%s/%s: %s (the lab's work, not the binary's)", f[0], name, use)
			}
		}
	}
	if linked < 5 {
		t.Fatalf("go list found %d rungs packages in the binary:\n%s", linked, out)
	}
}

// measuresFromOutside lists a file's string literals naming /proc and its
// uses of SIGKILL.
func measuresFromOutside(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var uses []string
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if s, err := strconv.Unquote(n.Value); err == nil && strings.Contains(s, "/proc") {
					uses = append(uses, fmt.Sprintf("line %d reads %q", fset.Position(n.Pos()).Line, s))
				}
			}
		case *ast.Ident:
			if n.Name == "SIGKILL" {
				uses = append(uses, fmt.Sprintf("line %d sends SIGKILL", fset.Position(n.Pos()).Line))
			}
		}
		return true
	})
	return uses
}
