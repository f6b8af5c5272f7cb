//go:build !js

package drive

import (
	"math/rand/v2"
	"testing"

	"github.com/cosmos/iavl"

	"github.com/ttld-dev/ttld/protocol"
)

// TestCountStatistics: the statistics counted from the tree's shape are those a walk
// of every key finds, on states of random contracts, types (with and without
// documents), documents, their index entries, history and counts, and expirations.
func TestCountStatistics(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 20 {
		s, _ := newTestStore(t, 1)
		kv := s.Working()
		set := func(k []byte) {
			if err := kv.Set(k, []byte{1}); err != nil {
				t.Fatal(err)
			}
		}
		for range rng.IntN(6) {
			var c protocol.ContractID
			for i := range c {
				c[i] = byte(rng.IntN(256))
			}
			if round%4 == 0 {
				c[0] = 0xff // the last contract of the range
			}
			set(ContractKey(c))
			for ty := range rng.IntN(4) {
				name := string([]byte{'a' + byte(ty), 'a' + byte(rng.IntN(3))})[:1+rng.IntN(2)]
				for range rng.IntN(30) {
					var id protocol.DocumentID
					for i := range id {
						id[i] = byte(rng.IntN(256))
					}
					set(DocumentKey(c, name, id))
					set(IndexEntryKey(c, name, "byX", []byte{byte(rng.IntN(3))}, id))
					set(DocumentHistoryKey(c, name, id, 1))
				}
				set(IndexCountKey(c, name, "byX", nil))
			}
		}
		for range rng.IntN(40) {
			var id protocol.DocumentID
			id[0] = byte(rng.IntN(256))
			set(ExpirationKey(uint64(rng.IntN(1000)), id))
		}
		// The keys around the contracts' root.
		set(AddressKey(protocol.Address{0xff}))
		set(TotalCreditsKey())
		if _, _, err := s.Commit(); err != nil {
			t.Fatal(err)
		}
		until := uint64(rng.IntN(1000))
		err := s.View(1, func(tree *iavl.ImmutableTree) error {
			got, err := CountStatistics(tree, until)
			if err != nil {
				return err
			}
			want := Statistics{UntilMs: until}
			contracts, types := map[protocol.ContractID]bool{}, map[string]bool{}
			_, err = tree.Iterate(func(k, _ []byte) bool {
				if c, ok := ParseContractKey(k); ok {
					contracts[c] = true
				}
				if p, ok := ParseDocumentKey(k); ok && p.Entry == DocumentEntryDocument {
					want.Documents++
					types[p.Contract.String()+"/"+p.Type] = true
				}
				if at, _, ok := ParseExpirationKey(k); ok && at < until {
					want.Expiring++
				}
				return false
			})
			want.Contracts, want.DocumentTypes = uint64(len(contracts)), uint64(len(types))
			if got != want {
				t.Errorf("round %d: counted %+v, walked %+v", round, got, want)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
