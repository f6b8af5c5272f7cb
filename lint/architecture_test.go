package lint

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// tableRow is one row of docs/ARCHITECTURE.md's table "One package, one question": the
// package and what its non-test files may import of ours, expanded ("*": anything).
type tableRow struct {
	pkg     string
	imports []string
}

// architectureTable reads the package table of docs/ARCHITECTURE.md, rows in the table's
// order. The first cell names one package; the last says what it may import of ours, in
// the words the page defines under the table:
//   - none;
//   - everything (any package of ours);
//   - everything above (every package of the rows above);
//   - a list of packages, "`drive`, `query`", where an item may be "`abci` and everything
//     above it" (abci and every package of the rows above abci's) and a name may be
//     followed by a note in parentheses, "`drive` (key layout)", which says why and is
//     not read.
func architectureTable(doc string) ([]tableRow, error) {
	const heading = "## One package, one question"
	_, section, found := strings.Cut(doc, "\n"+heading+"\n")
	if !found {
		return nil, fmt.Errorf("no section %q", heading)
	}
	if next := strings.Index(section, "\n## "); next >= 0 {
		section = section[:next]
	}
	var rows []tableRow
	var header bool
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if header {
				break // the table ends at its first line that is not a row
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if !header {
			header = true // the header row; the separator row follows
			continue
		}
		if strings.Trim(line, "|-") == "" {
			continue
		}
		if len(cells) != 3 {
			return nil, fmt.Errorf("row %q: %d cells, want 3", line, len(cells))
		}
		pkg, ok := codeName(strings.TrimSpace(cells[0]))
		if !ok {
			return nil, fmt.Errorf("row %q: the first cell names no single package", line)
		}
		for _, r := range rows {
			if r.pkg == pkg {
				return nil, fmt.Errorf("package %s has two rows", pkg)
			}
		}
		imports, err := readImports(strings.TrimSpace(cells[2]), rows)
		if err != nil {
			return nil, fmt.Errorf("row of %s: %w", pkg, err)
		}
		rows = append(rows, tableRow{pkg: pkg, imports: imports})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("section %q has no table", heading)
	}
	return rows, nil
}

// readImports expands the last cell of a row against the rows above it.
func readImports(cell string, above []tableRow) ([]string, error) {
	switch cell {
	case "none":
		return nil, nil
	case "everything":
		return []string{"*"}, nil
	case "everything above":
		return names(above), nil
	}
	var out []string
	for _, item := range strings.Split(cell, ", ") {
		item = strings.TrimSpace(item)
		if open := strings.Index(item, " ("); open >= 0 && strings.HasSuffix(item, ")") {
			item = item[:open]
		}
		name, rest, _ := strings.Cut(item, " ")
		pkg, ok := codeName(name)
		if !ok {
			return nil, fmt.Errorf("%q is not a package in backquotes", item)
		}
		switch rest {
		case "":
			out = append(out, pkg)
		case "and everything above it":
			i := slices.IndexFunc(above, func(r tableRow) bool { return r.pkg == pkg })
			if i < 0 {
				return nil, fmt.Errorf("%q: %s has no row above", item, pkg)
			}
			out = append(out, names(above[:i+1])...)
		default:
			return nil, fmt.Errorf("%q: unknown words %q", item, rest)
		}
	}
	return out, nil
}

// codeName returns the name inside one pair of backquotes.
func codeName(s string) (string, bool) {
	name, ok := strings.CutPrefix(s, "`")
	name, ok2 := strings.CutSuffix(name, "`")
	if !ok || !ok2 || name == "" || strings.ContainsAny(name, "` ") {
		return "", false
	}
	return name, true
}

func names(rows []tableRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.pkg
	}
	return out
}

// tableDrift lists where the table and the layout differ: a package in one and not the
// other, a row whose imports are not the layout's, a row naming a package that is not in
// a row above it (imports point one way, up the table).
func tableDrift(rows []tableRow, layout map[string][]string) []string {
	var out []string
	for i, r := range rows {
		allowed, ok := layout[r.pkg]
		if !ok {
			out = append(out, fmt.Sprintf("the table has a row for %s, which the layout does not have", r.pkg))
			continue
		}
		doc, rule := sorted(r.imports), sorted(allowed)
		if !slices.Equal(doc, rule) {
			out = append(out, fmt.Sprintf("%s: the table allows %v, the layout %v", r.pkg, doc, rule))
		}
		for _, imp := range r.imports {
			if imp != "*" && !slices.Contains(names(rows[:i]), imp) {
				out = append(out, fmt.Sprintf("%s: %s is not in a row above it", r.pkg, imp))
			}
		}
	}
	for pkg := range layout {
		if !slices.ContainsFunc(rows, func(r tableRow) bool { return r.pkg == pkg }) {
			out = append(out, fmt.Sprintf("the layout has %s, which the table has no row for", pkg))
		}
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// TestArchitectureTable: docs/ARCHITECTURE.md's table and the layout the lint enforces
// are the same, row by row, so the design and the code it describes change together.
func TestArchitectureTable(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := architectureTable(string(raw))
	if err != nil {
		t.Fatalf("docs/ARCHITECTURE.md: %v", err)
	}
	for _, d := range tableDrift(rows, layout) {
		t.Errorf("docs/ARCHITECTURE.md and lint's layout differ: %s", d)
	}
}

// TestArchitectureTableCatches runs the table reader and the comparison on samples that
// drift from a layout in each way, so the test cannot silently pass everything.
func TestArchitectureTableCatches(t *testing.T) {
	t.Parallel()
	rule := map[string][]string{
		"a": {}, "b": {"a"}, "c": {"a", "b"}, "d": {"a", "b", "c"}, "e": {"*"},
	}
	table := func(rows ...string) string {
		return "# T\n\n## One package, one question\n\n| package | answers | may import |\n|---|---|---|\n" +
			strings.Join(rows, "\n") + "\n\nProse.\n\n## Next\n\n| x | y | z |\n|---|---|---|\n| `q` | r | none |\n"
	}
	good := []string{
		"| `a` | the base | none |",
		"| `b` | over a | `a` (why) |",
		"| `c` | over b | everything above |",
		"| `d` | over c | `b` and everything above it, `c` |",
		"| `e` | the top | everything |",
	}
	rows, err := architectureTable(table(good...))
	if err != nil {
		t.Fatal(err)
	}
	if d := tableDrift(rows, rule); len(d) != 0 {
		t.Fatalf("a table equal to its layout drifts: %v", d)
	}
	replace := func(i int, row string) []string {
		out := slices.Clone(good)
		out[i] = row
		return out
	}
	for _, tc := range []struct {
		name string
		rows []string
	}{
		{"a row allows less", replace(3, "| `d` | over c | `a`, `c` |")},
		{"a row allows more", replace(1, "| `b` | over a | everything |")},
		{"a package missing from the table", good[:4]},
		{"a package missing from the layout", append(slices.Clone(good), "| `f` | extra | `a` |")},
		{"an import from a row below", []string{good[0], good[1], "| `d` | over c | `a`, `b`, `c` |", "| `c` | over b | `a`, `b` |", good[4]}},
	} {
		rows, err := architectureTable(table(tc.rows...))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(tableDrift(rows, rule)) == 0 {
			t.Errorf("%s went unnoticed", tc.name)
		}
	}
	for _, bad := range []string{
		"| `b` | over a | a |",
		"| `b` | over a | `a` or so |",
		"| `b` | over a | `z` and everything above it |",
		"| `b`, `c` | two | `a` |",
		"| `a` | again | none |",
		"| `b` | two cells |",
	} {
		if _, err := architectureTable(table(good[0], bad)); err == nil {
			t.Errorf("the row %q was read", bad)
		}
	}
}
