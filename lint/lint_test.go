package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/ttld-dev/ttld/"

// layout is docs/ARCHITECTURE.md's package table, in its order: every package of ours,
// with the packages of ours its non-test files may import ("*": any). A package imports
// only packages of rows above its own (TestArchitectureTable checks the order and that
// the page's table says the same, row by row).
var layout = map[string][]string{
	"protocol": {},
	// the query language and its planner: what a document query means and which index
	// answers it, for the node that answers and the verifier that re-plans; the block
	// pipeline never reads a query.
	"query":       {"protocol"},
	"feeschedule": {"protocol"},
	"drive":       {"protocol", "query", "feeschedule"},
	"app":         {"protocol", "feeschedule", "drive"},
	"genesis":     {"protocol", "drive"},
	"proofs":      {"protocol", "query", "drive"},
	// how a state travels to a node that has none: a saved version of the tree in
	// chunks, checked and imported
	"snapshot": {"drive"},
	"abci":     {"protocol", "query", "feeschedule", "drive", "app", "genesis", "proofs", "snapshot"},
	"keyring":  {"protocol"},
	"client":   {"protocol", "query", "proofs", "drive"},
	// the web view reads a node as a client does (through CometBFT's RPC and the query
	// paths) and draws pages; web/check verifies proven answers offline, for the
	// browser, and writes the figures a page shows of them, decoding state as drive
	// and protocol do; e2e/web drives the view in a browser.
	"web/check": {"protocol", "proofs", "drive"},
	"web":       {"protocol", "query", "proofs", "drive", "client", "web/check"},
	// the WebAssembly build of web/check, for the browser
	"web/verify": {"web/check"},
	// node writes the development key of a new home, so it takes keyring, a leaf over
	// protocol, besides abci and what is above it; and it serves the web view.
	"node":   {"protocol", "query", "feeschedule", "drive", "app", "genesis", "proofs", "snapshot", "abci", "keyring", "web"},
	"replay": {"protocol", "query", "feeschedule", "drive", "app", "genesis", "proofs", "snapshot", "abci", "node"},
	// the long checks of the state, for tests and the simulation: never in the node
	"sim/invariants": {"protocol", "query", "drive"},
	"sim":            {"protocol", "query", "feeschedule", "drive", "app", "genesis", "proofs", "snapshot", "abci", "sim/invariants"},
	// load drives a node through the client package and funds load signers in a new
	// home's genesis; its command line may use anything.
	"load":          {"protocol", "genesis", "client"},
	"cmd/ttld-load": {"*"},
	"cmd/ttld":      {"*"},
	"e2e":           {"*"},
	// the tests' loopback ports: nothing of ours, so any package's tests may use it
	"e2e/ports": {},
	// chains of signed light blocks for the tests of following the validator set
	"proofs/lightchain": {},
	"e2e/devnet":        {"*"},
	"e2e/web":           {"*"},
	// the third-party verifier is written from docs/PROOFS.md alone: nothing of ours
	"e2e/thirdparty": {},
	"lint":           {},
	// the plotting program reads CSV files and draws them: nothing of ours
	"scripts/plot": {},
}

// core are the deterministic packages: they never read the clock, randomness, the
// environment, files or the network, start no goroutine, use no floats, and range over a
// map only to collect its keys for sorting.
var core = []string{"protocol", "query", "feeschedule", "drive", "app"}

// forbiddenImports would let block execution depend on something other than its input.
var forbiddenImports = map[string]bool{
	"math/rand": true, "math/rand/v2": true, "crypto/rand": true, "os": true, "os/exec": true,
	"os/signal": true, "net": true, "net/http": true, "syscall": true, "unsafe": true, "runtime": true,
}

// forbiddenCalls read the wall clock or wait on it.
var forbiddenCalls = map[string]map[string]bool{"time": {
	"Now": true, "Since": true, "Until": true, "Tick": true, "After": true, "AfterFunc": true,
	"NewTimer": true, "NewTicker": true, "Sleep": true,
}}

// violations lists what file f of package pkg breaks.
func violations(pkg string, f *ast.File, allowed []string) []string {
	var out []string
	local := map[string]string{} // import name -> path
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		if forbiddenImports[path] {
			out = append(out, pkg+" imports "+path)
		}
		if v := layering(pkg, path, allowed); v != "" {
			out = append(out, v)
		}
		name := filepath.Base(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		local[name] = path
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.GoStmt:
			out = append(out, pkg+" starts a goroutine")
		case *ast.Ident:
			if x.Name == "float32" || x.Name == "float64" {
				out = append(out, pkg+" uses "+x.Name)
			}
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && forbiddenCalls[local[id.Name]][x.Sel.Name] {
				out = append(out, pkg+" calls "+local[id.Name]+"."+x.Sel.Name)
			}
		}
		return true
	})
	return out
}

// layering reports an import of path by pkg that the layout does not allow, or "".
func layering(pkg, path string, allowed []string) string {
	dep, ours := strings.CutPrefix(path, module)
	if !ours {
		return ""
	}
	for _, a := range allowed {
		if a == dep || a == "*" {
			return ""
		}
	}
	return pkg + " imports " + dep + ", which is not below it in the layout"
}

// sourceFiles parses the non-test Go files of a package directory.
func sourceFiles(t *testing.T, fset *token.FileSet, pkg string) []*ast.File {
	dir := filepath.Join("..", filepath.FromSlash(pkg))
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// TestLayout: every package of the repository is in the layout, and imports only what
// the layout allows it.
func TestLayout(t *testing.T) {
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin") {
			return filepath.SkipDir
		}
		matches, _ := filepath.Glob(filepath.Join(path, "*.go"))
		if len(matches) == 0 {
			return nil
		}
		pkg := filepath.ToSlash(strings.TrimPrefix(path, "../"))
		if _, ok := layout[pkg]; !ok {
			t.Errorf("package %s is not in the layout: add it to docs/ARCHITECTURE.md's table and to this test", pkg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, allowed := range layout {
		for _, f := range sourceFiles(t, token.NewFileSet(), pkg) {
			for _, imp := range f.Imports {
				if v := layering(pkg, strings.Trim(imp.Path.Value, `"`), allowed); v != "" {
					t.Errorf("%s: %s", f.Name.Name, v)
				}
			}
		}
	}
}

func TestDeterministicCore(t *testing.T) {
	t.Parallel()
	info := typeCheckCore(t)
	for _, pkg := range core {
		fset := info.fset
		files := info.files[pkg]
		if len(files) == 0 {
			t.Fatalf("no Go files in %s", pkg)
		}
		for _, f := range files {
			name := fset.Position(f.Pos()).Filename
			for _, v := range violations(pkg, f, layout[pkg]) {
				t.Errorf("%s: %s", filepath.Base(name), v)
			}
			for _, v := range mapRanges(fset, f, info.types) {
				t.Errorf("%s: %s", filepath.Base(name), v)
			}
		}
	}
}

func parserParse(fset *token.FileSet, src string) (*ast.File, error) {
	return parser.ParseFile(fset, "bad.go", src, 0)
}

// TestLintCatches runs the rules on a sample that breaks each of them, so the lint
// cannot silently pass everything.
func TestLintCatches(t *testing.T) {
	src := `package bad
import (
	"math/rand"
	clock "time"
	"github.com/ttld-dev/ttld/abci"
)
func f() float64 { go func() {}(); _ = clock.Now(); _ = abci.New; return float64(rand.Int()) }
`
	f, err := parser.ParseFile(token.NewFileSet(), "bad.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(violations("app", f, layout["app"]), "\n")
	for _, want := range []string{"imports math/rand", "imports abci", "goroutine", "float64", "calls time.Now"} {
		if !strings.Contains(got, want) {
			t.Errorf("the sample's %q went unnoticed; found:\n%s", want, got)
		}
	}
}
