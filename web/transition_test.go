package web

import (
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// TestEveryKindIsDescribed: the transaction page describes every registered kind of
// transition.
func TestEveryKindIsDescribed(t *testing.T) {
	for _, k := range protocol.Kinds() {
		if fields, err := describe(k.New()); err != nil || len(fields) == 0 {
			t.Errorf("%s: %v", k.Name, err)
		}
	}
}
