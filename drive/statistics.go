//go:build !js

package drive

import (
	"fmt"

	"github.com/cosmos/iavl"

	"github.com/ttld-dev/ttld/protocol"
)

// Statistics are counts of a saved version that no record of the state holds, found
// from the tree's shape: an IAVL node knows how many keys lie under it, so the keys
// of a range are counted with two descents (GetWithIndex), however many they are.
type Statistics struct {
	// Contracts are the stored data contracts; DocumentTypes the types of theirs that
	// hold documents; Documents the live documents (expired ones the cleanup has not
	// deleted yet among them).
	Contracts     uint64 `json:"contracts"`
	DocumentTypes uint64 `json:"document_types"`
	Documents     uint64 `json:"documents"`
	// Expiring are the expirations tree's entries due before UntilMs: documents with a
	// ttl that expire before then, those already due included.
	Expiring uint64 `json:"expiring"`
	UntilMs  uint64 `json:"until_ms"`
}

// CountStatistics counts t's statistics, the expirations until untilMs. It descends
// the tree a few times for each contract and each type, never reading a document.
func CountStatistics(t *iavl.ImmutableTree, untilMs uint64) (Statistics, error) {
	st := Statistics{UntilMs: untilMs}
	var err error
	if st.Expiring, err = countRange(t, ExpirationsPrefix(), ExpirationKey(untilMs, protocol.DocumentID{})); err != nil {
		return st, err
	}
	contracts := ContractsPrefix()
	err = eachPrefix(t, contracts, PrefixEnd(contracts), func(k []byte) ([]byte, error) {
		c, ok := ContractOfKey(k)
		if !ok {
			return nil, fmt.Errorf("drive: key %X under the contracts is no contract's", k)
		}
		st.Contracts++
		types := DocumentTypesPrefix(c)
		return ContractPrefix(c), eachPrefix(t, types, PrefixEnd(types), func(k []byte) ([]byte, error) {
			p, ok := ParseDocumentKey(k)
			if !ok {
				return nil, fmt.Errorf("drive: key %X under contract %s's types is no document key", k, c)
			}
			docs := DocumentsPrefix(p.Contract, p.Type)
			n, err := countRange(t, docs, PrefixEnd(docs))
			if n > 0 {
				st.DocumentTypes++
				st.Documents += n
			}
			return DocumentTypePrefix(p.Contract, p.Type), err
		})
	})
	return st, err
}

// eachPrefix calls visit with the first key in [start, end), then with the first key
// after every key that begins with the prefix visit returned, and so on: one call for
// each prefix, jumping from one to the next without visiting the keys between.
func eachPrefix(t *iavl.ImmutableTree, start, end []byte, visit func(key []byte) (prefix []byte, err error)) error {
	last, _, err := t.GetWithIndex(end)
	if err != nil {
		return err
	}
	for pos := start; pos != nil; {
		i, _, err := t.GetWithIndex(pos)
		if err != nil || i >= last {
			return err
		}
		key, _, err := t.GetByIndex(i)
		if err != nil {
			return err
		}
		prefix, err := visit(key)
		if err != nil {
			return err
		}
		pos = PrefixEnd(prefix)
	}
	return nil
}

// countRange is how many keys t holds in [start, end).
func countRange(t *iavl.ImmutableTree, start, end []byte) (uint64, error) {
	i, _, err := t.GetWithIndex(start)
	if err != nil {
		return 0, err
	}
	j, _, err := t.GetWithIndex(end)
	if err != nil || j < i {
		return 0, err
	}
	return uint64(j - i), nil
}
