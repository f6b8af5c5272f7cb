package check

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dustin/go-humanize"

	"github.com/ttld-dev/ttld/protocol"
)

// The formatting of every figure the web view shows. The server's templates and the
// browser's check write figures with these same functions, so that a figure the page
// displays and the one the browser reads from the proven bytes are the same text
// exactly when they say the same thing.

// Credits writes n with thousands separators: 1,234,567.
func Credits(n uint64) string { return humanize.BigComma(new(big.Int).SetUint64(n)) }

// creditsSum writes the sum of amounts as Credits does, however large.
func creditsSum(amounts []uint64) string {
	sum := new(big.Int)
	for _, n := range amounts {
		sum.Add(sum, new(big.Int).SetUint64(n))
	}
	return humanize.BigComma(sum)
}

// When writes a time as the view shows every time, on every page: to the second, in
// UTC, then how long before or after ref it is, as go-humanize words it:
// "2006-01-02 15:04:05 UTC (3 minutes ago)". ref is the time the text is read against:
// the clock, for what the server writes outside a proof box; for a proven figure, the
// block time of the state read (which a verified box holds within proofs.DefaultMaxAge
// of the reader's clock), so that the browser writes the same text from the proven
// bytes. A zero ref writes the time alone: the block time itself, or a figure whose
// answers hold no block time.
func When(t, ref time.Time) string {
	at := t.UTC().Format("2006-01-02 15:04:05 UTC")
	if ref.IsZero() {
		return at
	}
	return at + " (" + humanize.RelTime(t, ref, "ago", "from now") + ")"
}

// msTime is a block time in milliseconds (docs/STATE.md, "Block time") as a time.
func msTime(ms uint64) time.Time { return time.UnixMilli(int64(ms)) }

// Short abbreviates a long hex string to its first and last 8 digits.
func Short(s string) string {
	if len(s) <= 20 {
		return s
	}
	return s[:8] + "…" + s[len(s)-8:]
}

// Seconds writes a duration given in seconds as Go does: 2m0s.
func Seconds(s uint64) string { return (time.Duration(s) * time.Second).String() }

// Expiry says when a document that expires at expiresMs does, relative to the block
// time atMs of the state read.
func Expiry(expiresMs, atMs uint64) string {
	at := When(msTime(expiresMs), msTime(atMs))
	if atMs >= expiresMs {
		return "expired at " + at + ", waiting for cleanup"
	}
	return "expires at " + at
}

// escapeOpen starts every escape Visible writes; written by a text itself, it is
// escaped too, so that no text can pass for an escape.
const escapeOpen = '⟨'

// Visible is s as the view shows a value or a name: every character that is invisible
// or changes how the text around it reads is written as its code point between ⟨ and
// ⟩ (U+202E, the right-to-left override, as ⟨U+202E⟩), and so is ⟨ itself; a byte
// that is not UTF-8 is written ⟨0xNN⟩. Escaped are the controls, the format characters
// (the bidirectional controls, the zero-width characters), every separator but the
// space, private use and unassigned code points (all that unicode.IsPrint refuses),
// the other default-ignorable code points (the Hangul fillers among them) and the
// variation selectors. What is left reads as it is written, and a page shows it inside
// an isolate (<bdi>), so that no value can reorder the text around it.
func Visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "⟨0x%02X⟩", s[i])
		case hidden(r):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// hidden reports whether Visible escapes r.
func hidden(r rune) bool {
	return r == escapeOpen || !unicode.IsPrint(r) ||
		unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}

// Value writes a document's value of a property of type t, for people: a string as its
// text (Visible), an integer in decimal, a boolean as true or false, a byte array as
// 0x and its hex, an identifier as its 64 hex digits, an identifier list as those,
// comma-separated.
func Value(t protocol.PropertyType, v protocol.Value) string {
	switch t {
	case protocol.PropertyString:
		return Visible(string(v.Bytes))
	case protocol.PropertyInteger:
		return strconv.FormatInt(v.Int, 10)
	case protocol.PropertyBoolean:
		return strconv.FormatBool(v.Bool)
	case protocol.PropertyByteArray:
		return "0x" + hex.EncodeToString(v.Bytes)
	case protocol.PropertyIdentifierList:
		var ids []string
		for id := range slices.Chunk(v.Bytes, protocol.IdentityIDLen) {
			ids = append(ids, hex.EncodeToString(id))
		}
		return strings.Join(ids, ", ")
	}
	return hex.EncodeToString(v.Bytes) // protocol.PropertyIdentifier
}

// count writes how many entries a range answer holds: "1000 or more" when it was cut.
func count(n int, more bool) string {
	if more {
		return strconv.Itoa(n) + " or more"
	}
	return strconv.Itoa(n)
}
