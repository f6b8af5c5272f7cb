package app

import "github.com/ttld-dev/ttld/protocol"

func init() { handle(protocol.TypeIdentityTopUp, applyIdentityTopUp) }

// applyIdentityTopUp: an address tops up an identity, the amount spent before it is credited.
func applyIdentityTopUp(e *execution, t *protocol.IdentityTopUp) error {
	if err := e.spend(t.Amount); err != nil {
		return err
	}
	return e.creditIdentity(t.Identity, t.Amount)
}
