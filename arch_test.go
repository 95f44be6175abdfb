package main

import (
	"go/build"
	"slices"
	"strings"
	"testing"
)

// allowedImports is ARCHITECTURE.md's one-way import rule: each package
// may import only the rungs packages listed for it (tests excepted).
var allowedImports = map[string][]string{
	"topology": {},
	"health":   {"topology"},
	"broker":   {"topology"},
	"retry":    {"broker", "topology"},
	"ops":      {"broker", "topology"},
	"ui":       {"broker", "health", "topology"},
	"model":    {"broker", "health", "ops", "topology", "ui"},
	"bench":    {"broker", "topology"},
	"exporter": {"broker", "health", "topology"},
	"cli":      {"bench", "broker", "exporter", "health", "model", "ops", "retry", "topology", "ui"},
}

func TestImportDirection(t *testing.T) {
	const module = "github.com/rungs-dev/rungs/"
	for pkg, allowed := range allowedImports {
		p, err := build.ImportDir(pkg, 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			name, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if top, _, _ := strings.Cut(name, "/"); !slices.Contains(allowed, top) {
				t.Errorf("%s imports %s: ARCHITECTURE.md allows only %v", pkg, name, allowed)
			}
		}
	}
	// Pure packages draw nothing and touch no broker.
	for _, pkg := range []string{"topology", "health"} {
		p, _ := build.ImportDir(pkg, 0)
		for _, imp := range p.Imports {
			if strings.Contains(imp, "charm.land") || strings.Contains(imp, "charmbracelet") || strings.Contains(imp, "amqp") || strings.Contains(imp, "rabbit-hole") {
				t.Errorf("%s is pure but imports %s", pkg, imp)
			}
		}
	}
}
