package web

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/ttld-dev/ttld/web/check"
)

// funcs are the helpers the templates use. A page's proof box is not written with
// them: its drawing is check.Draw's, the one the browser's check draws again from the
// proven answers (docs/PROOFS.md, "Proof bundles (the web view)").
var funcs = template.FuncMap{
	"credits": check.Credits,
	"when":    when,
	"short":   check.Short,
	"visible": check.Visible,
	"join":    func(xs []string, sep string) string { return strings.Join(xs, sep) },
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
