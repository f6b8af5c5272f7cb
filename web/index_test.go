package web

import (
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// TestSearchesAreIndexed: every attribute the view searches for is one the node
// indexes, and the node indexes none the view does not search.
func TestSearchesAreIndexed(t *testing.T) {
	searches := []protocol.SearchedAttr{searchSigner, searchType, searchCode, searchRecipient, searchCreated, searchContract, searchOwner,
		searchExpired, searchPayout, searchSetChange, searchBlockTxs}
	for _, k := range protocol.DocumentActionKinds() {
		searches = append(searches, searchAction(k))
	}
	for _, s := range searches {
		if !protocol.IsSearched(s.Type, s.Key) {
			t.Errorf("the view searches %s, which the node does not index", s.Query())
		}
	}
	if len(protocol.Searched) != len(searches) {
		t.Errorf("the node indexes %d attributes, the view searches %d", len(protocol.Searched), len(searches))
	}
}
