package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestOpsDocImports keeps ops/doc.go's import sentence true: the rungs
// packages ops imports, and those that import it, as go list sees them.
func TestOpsDocImports(t *testing.T) {
	const module = "github.com/rungs-dev/rungs/"
	doc, err := os.ReadFile("ops/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(doc), "//", "")), " ")
	m := regexp.MustCompile(`ops imports ([a-z/, ]+?), and is imported by ([a-z/, ]+?)\.`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("ops/doc.go has no sentence \"ops imports A, B and C, and is imported by D and E.\"")
	}
	list := func(s string) []string {
		var out []string
		for _, f := range strings.FieldsFunc(strings.ReplaceAll(s, " and ", ","), func(r rune) bool { return r == ',' }) {
			out = append(out, strings.TrimSpace(f))
		}
		slices.Sort(out)
		return out
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}:{{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var imports, importers []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, ":")
		pkg = strings.TrimPrefix(pkg, module)
		for _, d := range strings.Fields(deps) {
			if !strings.HasPrefix(d, module) {
				continue
			}
			d = strings.TrimPrefix(d, module)
			if pkg == "ops" {
				imports = append(imports, d)
			}
			if d == "ops" {
				importers = append(importers, pkg)
			}
		}
	}
	slices.Sort(imports)
	slices.Sort(importers)
	if got := list(m[1]); !slices.Equal(got, imports) {
		t.Errorf("ops/doc.go says ops imports %v; go list: %v", got, imports)
	}
	if got := list(m[2]); !slices.Equal(got, importers) {
		t.Errorf("ops/doc.go says ops is imported by %v; go list: %v", got, importers)
	}
}
