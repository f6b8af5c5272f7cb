package proofs_test

import (
	"errors"
	"fmt"

	dbm "github.com/cosmos/cosmos-db"
	"github.com/cosmos/iavl"
	iavldb "github.com/cosmos/iavl/db"

	"github.com/ttld-dev/ttld/proofs"
)

// A node proves an answer from a saved version of its state tree; a client checks it
// against the version's root. On a chain that root is the AppHash of the next block's
// header, which Verifier checks is signed by the validators (docs/PROOFS.md); here the
// tree is built in memory and its root is taken as trusted.
func ExampleVerifyPresence() {
	tree := iavl.NewMutableTree(iavldb.NewWrapper(dbm.NewMemDB()), 0, false, iavl.NewNopLogger())
	for _, kv := range [][2]string{{"balance/alice", "250000"}, {"balance/bob", "1000"}, {"balance/dave", "7"}} {
		if _, err := tree.Set([]byte(kv[0]), []byte(kv[1])); err != nil {
			panic(err)
		}
	}
	root, version, err := tree.SaveVersion()
	if err != nil {
		panic(err)
	}
	saved, err := tree.GetImmutable(version)
	if err != nil {
		panic(err)
	}

	// The node's side: the value and its proof.
	value, ops, err := proofs.Prove(saved, []byte("balance/alice"))
	if err != nil {
		panic(err)
	}
	fmt.Printf("answer: balance/alice = %s\n", value)

	// The client's side: the proof must compute the trusted root from the key and value.
	fmt.Println("verified:", proofs.VerifyPresence(root, []byte("balance/alice"), value, ops) == nil)

	// A node that changes the value is caught: the proof commits to the stored one.
	err = proofs.VerifyPresence(root, []byte("balance/alice"), []byte("990000"), ops)
	var mismatch proofs.ErrValueMismatch
	fmt.Printf("tampered value refused: %t (the proof commits to %s)\n", errors.As(err, &mismatch), mismatch.Got)

	// An absent key is proven too: its neighbours are adjacent leaves.
	value, ops, err = proofs.Prove(saved, []byte("balance/carol"))
	if err != nil {
		panic(err)
	}
	fmt.Println("balance/carol present:", value != nil, "absence verified:", proofs.VerifyAbsence(root, []byte("balance/carol"), ops) == nil)
	// Output:
	// answer: balance/alice = 250000
	// verified: true
	// tampered value refused: true (the proof commits to 250000)
	// balance/carol present: false absence verified: true
}
