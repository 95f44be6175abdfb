package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/rungs-dev/rungs"

// allowedImports is ARCHITECTURE.md's one-way import rule: each package of
// the module, by its directory, may import only the rungs packages listed
// for it (tests excepted). Every package the module holds must be listed:
// TestImportDirection walks the tree, so a package added later fails the
// test until its place in the rule is decided here.
var allowedImports = map[string][]string{
	".":                 {"cli"},
	"topology":          {},
	"health":            {"topology"},
	"broker":            {"topology"},
	"broker/brokertest": {"broker", "internal/testutil", "topology"},
	"internal/testutil": {},
	"retry":             {"broker", "topology"},
	"ops":               {"broker", "health", "topology"},
	"ui":                {"broker", "health", "ops", "topology"},
	"internal/fixture":  {"broker", "topology"},
	"internal/examples": {"cli"},
	"model":             {"broker", "health", "ops", "topology", "ui"},
	"bench":             {"bridge", "broker", "health", "ops", "topology"},
	"internal/lab":      {"bench", "broker", "health", "ops", "topology", "ui"},
	"cmd/rungs-lab":     {"bench", "broker", "internal/lab", "topology"},
	"exporter":          {"broker", "health", "ops", "topology"},
	"bridge":            {"broker", "ops", "topology"},
	"retry/demo":        {"broker", "retry", "topology"},
	"cli":               {"bench", "bridge", "broker", "exporter", "health", "model", "ops", "retry", "retry/demo", "topology", "ui"},
	"examples/worker":   {"broker", "retry", "topology"},
	"e2e":               {}, // tests only
}

// packageDirs lists every directory of the module holding Go files,
// relative to the module root, skipping testdata and hidden directories.
func packageDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			dir := filepath.ToSlash(filepath.Dir(path))
			if !slices.Contains(dirs, dir) {
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

func TestImportDirection(t *testing.T) {
	dirs := packageDirs(t)
	for _, must := range []string{".", "internal/fixture", "broker/brokertest", "ops"} {
		if !slices.Contains(dirs, must) {
			t.Fatalf("the walk missed %s: it found %v", must, dirs)
		}
	}
	for _, dir := range dirs {
		allowed, listed := allowedImports[dir]
		if !listed {
			t.Errorf("package %s is not in allowedImports: decide what it may import (and add it to ARCHITECTURE.md)", dir)
			continue
		}
		p, err := build.ImportDir(dir, 0)
		if _, testsOnly := err.(*build.NoGoError); testsOnly {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range p.Imports {
			name, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if !slices.Contains(allowed, name) {
				t.Errorf("%s imports %s: ARCHITECTURE.md allows only %v", dir, name, allowed)
			}
		}
	}
	for dir := range allowedImports {
		if !slices.Contains(dirs, dir) {
			t.Errorf("allowedImports lists %s, which holds no Go package", dir)
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

// uiBrokerMethods are the broker methods ui may call: pure arithmetic on a
// value it was handed, no I/O.
var uiBrokerMethods = []string{"MoveProgress.Rate"}

// TestUIUsesBrokerValuesOnly: ui may name broker types to draw their
// values (a peeked message, a move's progress), read their fields and
// constants, and nothing else: no broker interface or function type, no
// package function or variable, and no method but the pure ones listed.
// It type-checks ui against the compiler's export data, so a call through
// a variable or a method value is caught as well as a direct one.
func TestUIUsesBrokerValuesOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", "./ui").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	p, err := build.ImportDir("ui", 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join("ui", name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (rc io.ReadCloser, err error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	if _, err := (&types.Config{Importer: imp}).Check(module+"/ui", fset, files, info); err != nil {
		t.Fatal(err)
	}
	for id, obj := range info.Uses {
		if obj.Pkg() == nil {
			continue
		}
		at := fset.Position(id.Pos())
		switch obj.Pkg().Path() {
		case module + "/broker":
			checkUIBrokerUse(t, at, obj)
		case module + "/ops":
			checkUIOpsUse(t, at, obj)
		}
	}
}

// checkUIBrokerUse: a broker type's values, fields and constants, and the
// pure methods listed.
func checkUIBrokerUse(t *testing.T, at token.Position, obj types.Object) {
	t.Helper()
	switch o := obj.(type) {
	case *types.TypeName:
		switch o.Type().Underlying().(type) {
		case *types.Interface, *types.Signature:
			t.Errorf("%s: ui names broker.%s, an interface or function type: ui draws values, it never calls the broker", at, o.Name())
		}
	case *types.Const:
	case *types.Var:
		if !o.IsField() {
			t.Errorf("%s: ui reads the broker variable %s", at, o.Name())
		}
	case *types.Func:
		if name := funcName(o); !slices.Contains(uiBrokerMethods, name) {
			t.Errorf("%s: ui calls broker %s: ui draws values, it never calls the broker", at, name)
		}
	default:
		t.Errorf("%s: ui uses broker.%s", at, obj.Name())
	}
}

// checkUIOpsUse: ui draws what an operation returned (cli's text output
// of a plan, a scan, a preview), so it may name ops value types, read
// their fields and constants, and call what is pure arithmetic or
// wording on values. It never names an ops interface or function type,
// reads an ops variable, or calls anything that takes a context: those
// read the broker or act on it.
func checkUIOpsUse(t *testing.T, at token.Position, obj types.Object) {
	t.Helper()
	switch o := obj.(type) {
	case *types.TypeName:
		switch o.Type().Underlying().(type) {
		case *types.Interface, *types.Signature:
			t.Errorf("%s: ui names ops.%s, an interface or function type: ui draws values, it never runs an operation", at, o.Name())
		}
	case *types.Const:
	case *types.Var:
		if !o.IsField() {
			t.Errorf("%s: ui reads the ops variable %s", at, o.Name())
		}
	case *types.Func:
		sig := o.Type().(*types.Signature)
		for i := 0; i < sig.Params().Len(); i++ {
			if sig.Params().At(i).Type().String() == "context.Context" {
				t.Errorf("%s: ui calls ops %s, which takes a context: ui draws values, it never runs an operation", at, funcName(o))
			}
		}
	default:
		t.Errorf("%s: ui uses ops.%s", at, obj.Name())
	}
}

// funcName is a function's name, or a method's as Type.Method.
func funcName(o *types.Func) string {
	sig, ok := o.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return o.Name()
	}
	recv := sig.Recv().Type()
	if ptr, ok := recv.(*types.Pointer); ok {
		recv = ptr.Elem()
	}
	if named, ok := recv.(*types.Named); ok {
		return named.Obj().Name() + "." + o.Name()
	}
	return o.Name()
}
