package e2e

import (
	"crypto/ed25519"
	"testing"

	"github.com/ttld-dev/ttld/keyring"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// AddValidator adds a validator of key pub and power to the node's chain, by a
// proposal of its one validator's operator (the payout identity, whose key is the
// home's, topped up first), which passes at once: ttld init's validator holds power
// 10, so power must be below 5 for the change to move less than a third
// (docs/STATE.md, "Validators"). The new validator is operated by a new identity of
// the dev key. It returns the height of the block that applied the change; the set
// signs from two heights later.
func (e *Env) AddValidator(t testing.TB, pub ed25519.PublicKey, power uint64) int64 {
	t.Helper()
	operator := protocol.PayoutIdentityID(e.Trusted.Validators[0].Address)
	payout, err := keyring.Open(e.Home).Get(node.PayoutKeyName("validator"))
	if err != nil {
		t.Fatal(err)
	}
	e.Commit(t, &protocol.IdentityTopUp{PubKey: e.Dev.Pub, Identity: operator, Amount: 1_000_000_000})
	create := &protocol.IdentityCreate{PubKey: e.Dev.Pub, Amount: 1_000_000, Keys: []ed25519.PublicKey{e.Dev.Pub}}
	e.Commit(t, create)
	added := protocol.NewIdentityID(e.Dev.Address(), create.Nonce)
	return e.CommitSigned(t, &protocol.ValidatorSetProposal{Identity: operator, Change: protocol.ValidatorChange{Kind: protocol.ValidatorAdd, PubKey: pub, Power: power, Operator: added}}, payout.Priv)
}
