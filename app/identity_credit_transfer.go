package app

import "github.com/ttld-dev/ttld/protocol"

func init() { handle(protocol.TypeIdentityCreditTransfer, applyIdentityCreditTransfer) }

// applyIdentityCreditTransfer: an identity pays another identity, the amount spent before it is credited.
func applyIdentityCreditTransfer(e *execution, t *protocol.IdentityCreditTransfer) error {
	if err := e.spend(t.Amount); err != nil {
		return err
	}
	return e.creditIdentity(t.Recipient, t.Amount)
}
