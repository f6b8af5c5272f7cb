package app

import "github.com/ttld-dev/ttld/protocol"

func init() {
	handle(protocol.TypeIdentityCreditTransferToAddress, applyIdentityCreditTransferToAddress)
}

// applyIdentityCreditTransferToAddress: an identity pays an address, the amount spent before it is credited.
func applyIdentityCreditTransferToAddress(e *execution, t *protocol.IdentityCreditTransferToAddress) error {
	if err := e.spend(t.Amount); err != nil {
		return err
	}
	return e.creditAddress(t.Recipient, t.Amount)
}
