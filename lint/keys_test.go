package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// keyVocabulary is what drive/keys.go declares to build keys with: its key bytes (the
// unexported byte constants, sub-keys), its roots (the exported byte constants, the first
// byte of every key) and its functions that return bytes (builders).
type keyVocabulary struct {
	keyBytes, roots, builders map[string]bool
}

func readKeyVocabulary(keysGo *ast.File) keyVocabulary {
	v := keyVocabulary{keyBytes: map[string]bool{}, roots: map[string]bool{}, builders: map[string]bool{}}
	for _, decl := range keysGo.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			if d.Tok != token.CONST {
				continue
			}
			for _, spec := range d.Specs {
				s := spec.(*ast.ValueSpec)
				if typ, ok := s.Type.(*ast.Ident); !ok || typ.Name != "byte" {
					continue
				}
				for _, n := range s.Names {
					if n.IsExported() {
						v.roots[n.Name] = true
					} else {
						v.keyBytes[n.Name] = true
					}
				}
			}
		case *ast.FuncDecl:
			if d.Recv == nil && d.Type.Results != nil && len(d.Type.Results.List) == 1 && isByteSlice(d.Type.Results.List[0].Type) {
				v.builders[d.Name.Name] = true
			}
		}
	}
	return v
}

func isByteSlice(e ast.Expr) bool {
	a, ok := e.(*ast.ArrayType)
	if !ok || a.Len != nil {
		return false
	}
	id, ok := a.Elt.(*ast.Ident)
	return ok && id.Name == "byte"
}

// keyBuilding lists where file f, a file of drive other than keys.go, builds a key: it
// names a key byte, appends to what a builder of keys.go returned, or appends to a byte
// slice that starts with a root.
func keyBuilding(f *ast.File, v keyVocabulary) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Ident:
			if v.keyBytes[x.Name] {
				out = append(out, "names the key byte "+x.Name)
			}
		case *ast.CallExpr:
			if !appends(x.Fun) || len(x.Args) == 0 {
				return true
			}
			switch first := x.Args[0].(type) {
			case *ast.CallExpr:
				if id, ok := first.Fun.(*ast.Ident); ok && v.builders[id.Name] {
					out = append(out, "appends to the key of "+id.Name)
				}
			case *ast.CompositeLit:
				for _, e := range first.Elts {
					if id, ok := e.(*ast.Ident); ok && v.roots[id.Name] {
						out = append(out, "appends to a key of the root "+id.Name)
					}
				}
			}
		}
		return true
	})
	return out
}

// appends reports whether fun adds bytes to its first argument: the builtin append or an
// Append function (binary.BigEndian.AppendUint64).
func appends(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name == "append"
	case *ast.SelectorExpr:
		return strings.HasPrefix(f.Sel.Name, "Append")
	}
	return false
}

// TestKeysInKeysGo: docs/ARCHITECTURE.md puts "every key byte in one block of `keys.go`,
// each builder with its parser": no other file of drive names a key byte or builds a
// key from one a builder returned or from a root.
func TestKeysInKeysGo(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files := sourceFiles(t, fset, "drive")
	var keysGo *ast.File
	for _, f := range files {
		if filepath.Base(fset.Position(f.Pos()).Filename) == "keys.go" {
			keysGo = f
		}
	}
	if keysGo == nil {
		t.Fatal("drive has no keys.go")
	}
	v := readKeyVocabulary(keysGo)
	if len(v.keyBytes) == 0 || len(v.roots) == 0 || len(v.builders) == 0 {
		t.Fatalf("keys.go declares no key bytes, roots or builders: %+v", v)
	}
	for _, f := range files {
		if f == keysGo {
			continue
		}
		name := filepath.Base(fset.Position(f.Pos()).Filename)
		for _, b := range keyBuilding(f, v) {
			t.Errorf("drive/%s %s: keys are built in drive/keys.go", name, b)
		}
	}
}

// TestKeyLintCatches runs the key lint on a sample that builds keys in each way it
// forbids, and on one that only uses builders, so it neither passes everything nor
// refuses a caller.
func TestKeyLintCatches(t *testing.T) {
	t.Parallel()
	keys := `package drive
const (
	RootMisc byte = 104
	miscThing byte = 'x'
)
func ThingPrefix() []byte { return []byte{RootMisc, miscThing} }
func ThingKey(n uint64) []byte { return binary.BigEndian.AppendUint64(ThingPrefix(), n) }
func PrefixEnd(p []byte) []byte { return p }
`
	bad := `package drive
func a() []byte { return []byte{RootMisc, miscThing} }
func b(n uint32) []byte { return binary.BigEndian.AppendUint32(ThingPrefix(), n) }
func c() []byte { return append([]byte{RootMisc}, 'y') }
func d(v []byte) []byte { return append(ThingKey(1), v...) }
`
	good := `package drive
func e(kv KV) error { return kv.Iterate(ThingPrefix(), PrefixEnd(ThingPrefix()), nil) }
func f(v []byte) []byte { return append([]byte(nil), v...) }
func g(k []byte) bool { return len(k) > 0 && k[0] == RootMisc }
`
	parse := func(src string) *ast.File {
		f, err := parser.ParseFile(token.NewFileSet(), "sample.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	v := readKeyVocabulary(parse(keys))
	got := strings.Join(keyBuilding(parse(bad), v), "\n")
	for _, want := range []string{"names the key byte miscThing", "appends to the key of ThingPrefix", "appends to a key of the root RootMisc", "appends to the key of ThingKey"} {
		if !strings.Contains(got, want) {
			t.Errorf("the sample's %q went unnoticed; found:\n%s", want, got)
		}
	}
	if found := keyBuilding(parse(good), v); len(found) != 0 {
		t.Errorf("a file that only uses builders is refused: %v", found)
	}
}
