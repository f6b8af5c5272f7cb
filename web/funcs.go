package web

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/ttld-dev/ttld/web/check"
)

// funcs are the helpers the templates use. A page's figures are written by fig, from
// the figures check.Read wrote of the answers the page read: the text the browser's
// check writes of the proven answers (docs/PROOFS.md, "Proof bundles (the web view)").
var funcs = template.FuncMap{
	"credits": check.Credits,
	"when":    when,
	"short":   check.Short,
	"visible": check.Visible,
	"join":    func(xs []string, sep string) string { return strings.Join(xs, sep) },
	"name":    check.Name,
	"fig":     fig,
	"has":     func(f check.Figures, parts ...any) bool { _, ok := f[check.Name(parts...)]; return ok },
	"count":   count,
	"plural":  plural,
	"int":     toInt,
	// the bounds of the lists the templates say
	"chartBlocks":     func() int { return ChartBlocks },
	"overviewRows":    func() int { return OverviewRows },
	"blockTxsPerPage": func() int { return BlockTxsPerPage },
	"add":             func(a, b int) int { return a + b },
	"sub":             func(a, b int) int { return a - b },
}

// when writes a time as check.When does, against the server's clock, in a time element
// that carries the time itself, so that static/time.js keeps its "12 seconds ago" true
// while the page stays open (a figure's time, in a proof box, is the check's to write).
func when(t time.Time) template.HTML {
	return template.HTML(`<time datetime="` + t.UTC().Format(time.RFC3339Nano) + `" data-ago>` +
		template.HTMLEscapeString(check.When(t, time.Now())) + `</time>`)
}

// fig writes figure parts (joined by dots) of f as an isolated element that carries its
// name, which the browser's check compares with the proven figure and overwrites; a
// figure f does not have is an error, so that a template cannot show what its
// answers do not say.
func fig(f check.Figures, parts ...any) (template.HTML, error) {
	name := check.Name(parts...)
	text, ok := f[name]
	if !ok {
		return "", fmt.Errorf("no figure %s", name)
	}
	return template.HTML(`<bdi class="figure" data-figure="` + template.HTMLEscapeString(name) + `">` +
		template.HTMLEscapeString(text) + `</bdi>`), nil
}

// count is 0, 1, ... up to the number of items of the list prefix (parts joined by
// dots) that f holds: the i of every figure named prefix.i or prefix.i.*.
func count(f check.Figures, parts ...any) []int {
	prefix := check.Name(parts...) + "."
	n := 0
	for name := range f {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		i, err := strconv.Atoi(strings.SplitN(rest, ".", 2)[0])
		if err == nil && i+1 > n {
			n = i + 1
		}
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// plural writes n and noun, the noun with an s unless n is 1: "1 contract", "2 contracts".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// toInt is a count of the pages' data as an int, for plural.
func toInt(v any) (int, error) {
	switch n := v.(type) {
	case int64:
		return int(n), nil
	case uint64:
		return int(n), nil
	case int:
		return n, nil
	}
	return 0, fmt.Errorf("int of %T", v)
}
