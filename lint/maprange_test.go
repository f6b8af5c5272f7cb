package lint

import (
	"go/ast"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// coreInfo is the deterministic core, parsed and type-checked.
type coreInfo struct {
	fset  *token.FileSet
	files map[string][]*ast.File
	types *types.Info
}

// goTool finds the go command (make may run the tests without it on PATH).
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// typeCheckCore type-checks the core packages against the compiler's export data of
// their imports, which `go list -export` builds.
func typeCheckCore(t *testing.T) coreInfo {
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}
	for _, pkg := range core {
		args = append(args, "./"+pkg)
	}
	cmd := exec.Command(goTool(), args...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok {
			exports[path] = file
		}
	}
	info := coreInfo{fset: token.NewFileSet(), files: map[string][]*ast.File{}, types: &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}}
	imp := importer.ForCompiler(info.fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	for _, pkg := range core {
		files := sourceFiles(t, info.fset, pkg)
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(module+pkg, info.fset, files, info.types); err != nil {
			t.Fatalf("type-checking %s: %v", pkg, err)
		}
		info.files[pkg] = files
	}
	return info
}

// mapRanges reports every range over a map in f whose keys are not sorted: the loop
// must append to a slice that a sort call (sort.*, slices.Sort*, or a function named
// Sort...) takes later in the same function. Anything else would make the order of
// what the loop does depend on Go's random map order.
func mapRanges(fset *token.FileSet, f *ast.File, info *types.Info) []string {
	var out []string
	check := func(body *ast.BlockStmt) {
		ast.Inspect(body, func(n ast.Node) bool {
			rs, ok := n.(*ast.RangeStmt)
			if !ok {
				return true
			}
			tv, ok := info.Types[rs.X]
			if !ok {
				return true
			}
			if _, isMap := tv.Type.Underlying().(*types.Map); !isMap {
				return true
			}
			if !sortedAfter(body, rs, appendedSlices(rs.Body)) {
				out = append(out, fset.Position(rs.Pos()).String()+": ranges over a map without sorting what it collects")
			}
			return true
		})
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch fn := n.(type) {
		case *ast.FuncDecl:
			if fn.Body != nil {
				check(fn.Body)
			}
			return false
		case *ast.FuncLit:
			check(fn.Body)
			return false
		}
		return true
	})
	return out
}

// appendedSlices names the slices the body appends to (s = append(s, ...)).
func appendedSlices(body *ast.BlockStmt) map[string]bool {
	names := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		call, ok := as.Rhs[0].(*ast.CallExpr)
		if fn, isIdent := callName(call); !ok || !isIdent || fn != "append" {
			return true
		}
		if id := rootIdent(as.Lhs[0]); id != "" {
			names[id] = true
		}
		return true
	})
	return names
}

// sortedAfter reports whether a sort call after rs in body takes one of the slices.
func sortedAfter(body *ast.BlockStmt, rs *ast.RangeStmt, slices map[string]bool) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || call.Pos() < rs.End() || found {
			return !found
		}
		name, _ := callName(call)
		if !strings.HasPrefix(name, "Sort") && !strings.HasPrefix(name, "sort.") && !strings.HasPrefix(name, "slices.Sort") {
			return true
		}
		for _, a := range call.Args {
			if slices[rootIdent(a)] {
				found = true
			}
		}
		return true
	})
	return found
}

// callName is the called function's name: "append", "sort.Slice", "SortBalanceChanges"
// (a package-qualified call to a function named Sort... keeps only that name); isIdent
// is true for an unqualified call.
func callName(call *ast.CallExpr) (name string, isIdent bool) {
	if call == nil {
		return "", false
	}
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name, true
	case *ast.SelectorExpr:
		if x, ok := fn.X.(*ast.Ident); ok && (x.Name == "sort" || x.Name == "slices") {
			return x.Name + "." + fn.Sel.Name, false
		}
		return fn.Sel.Name, false
	}
	return "", false
}

// rootIdent is the variable an expression names (s, s.field, &s), or "".
func rootIdent(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return rootIdent(x.X)
	case *ast.UnaryExpr:
		return rootIdent(x.X)
	}
	return ""
}

// TestMapRangeLintCatches: the map rule flags an unsorted range and lets a sorted one
// pass.
func TestMapRangeLintCatches(t *testing.T) {
	src := `package bad
import "sort"
func unsorted(m map[string]int) (out []string) {
	for k := range m {
		out = append(out, k)
	}
	return out
}
func sorted(m map[string]int) (out []string) {
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
func sideEffect(m map[string]int, f func(string)) {
	for k := range m {
		f(k)
	}
}
`
	fset := token.NewFileSet()
	f, err := parserParse(fset, src)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := (&types.Config{Importer: importer.Default()}).Check("bad", fset, []*ast.File{f}, info); err != nil {
		t.Fatal(err)
	}
	got := mapRanges(fset, f, info)
	if len(got) != 2 || !strings.Contains(got[0], ":4:") || !strings.Contains(got[1], ":17:") {
		t.Fatalf("flagged %q, want the ranges of lines 4 and 17", got)
	}
}
