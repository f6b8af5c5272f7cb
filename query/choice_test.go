package query

import (
	"errors"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// TestEveryVersionChoosesIndexes: every protocol version this build runs names its
// index choice rules, and the rules name no version the build does not run. A new
// protocol version fails here until it states its rules (choice.go): the index a query
// gets is part of what a verifier checks.
func TestEveryVersionChoosesIndexes(t *testing.T) {
	for _, v := range protocol.Supported() {
		if _, err := indexChoiceFor(v); err != nil {
			t.Errorf("protocol version %d: %v", v, err)
		}
	}
	for v := range indexChoices {
		if !protocol.Known(v) {
			t.Errorf("index choice rules for protocol version %d, which this build does not run", v)
		}
	}
}

// TestUnknownVersion: a version this build does not know has no query language; that
// is not a refusal of the query (no query code names it).
func TestUnknownVersion(t *testing.T) {
	lt := marketListing(t)
	const unknown = protocol.Version(99)
	_, err := Parse(lt, []byte(`{}`), unknown)
	_, cerr := ParseCount(lt, nil, unknown, "", false)
	_, rerr := ParseRanked(lt, []byte(`{}`), unknown)
	for name, err := range map[string]error{"Parse": err, "ParseCount": cerr, "ParseRanked": rerr} {
		var iq ErrInvalid
		if err == nil || errors.As(err, &iq) {
			t.Errorf("%s under version %d: %v, want an error that is no ErrInvalid", name, unknown, err)
		}
	}
}
