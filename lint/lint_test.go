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

// core are the deterministic packages, with the packages of ours each may import.
var core = map[string][]string{
	"protocol":    {},
	"feeschedule": {"protocol"},
	"drive":       {"protocol", "feeschedule"},
	"app":         {"protocol", "feeschedule", "drive"},
}

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
		if dep, ours := strings.CutPrefix(path, module); ours {
			ok := false
			for _, a := range allowed {
				ok = ok || a == dep
			}
			if !ok {
				out = append(out, pkg+" imports "+dep+", which is not below it in the layout")
			}
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

func TestDeterministicCore(t *testing.T) {
	for pkg, allowed := range core {
		dir := filepath.Join("..", pkg)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		files := 0
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files++
			for _, v := range violations(pkg, f, allowed) {
				t.Errorf("%s: %s", name, v)
			}
		}
		if files == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
	}
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
	got := strings.Join(violations("app", f, core["app"]), "\n")
	for _, want := range []string{"imports math/rand", "imports abci", "goroutine", "float64", "calls time.Now"} {
		if !strings.Contains(got, want) {
			t.Errorf("the sample's %q went unnoticed; found:\n%s", want, got)
		}
	}
}
