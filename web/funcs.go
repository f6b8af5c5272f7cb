package web

import (
	"html/template"
	"math/big"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// funcs are the helpers the templates use.
var funcs = template.FuncMap{
	"credits": credits,
	"when":    func(t time.Time) string { return t.Format("2006-01-02 15:04:05.000 UTC") },
	"short":   short,
	"join":    func(xs []string) string { return strings.Join(xs, ", ") },
}

// credits writes n with thousands separators: 1,234,567.
func credits(n uint64) string { return humanize.BigComma(new(big.Int).SetUint64(n)) }

// short abbreviates a long hex string to its first and last 8 digits.
func short(s string) string {
	if len(s) <= 20 {
		return s
	}
	return s[:8] + "…" + s[len(s)-8:]
}
