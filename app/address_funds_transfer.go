package app

import "github.com/ttld-dev/ttld/protocol"

func init() { handle(protocol.TypeAddressFundsTransfer, applyAddressFundsTransfer) }

// applyAddressFundsTransfer: an address pays another address, the amount spent before it is credited.
func applyAddressFundsTransfer(e *execution, t *protocol.AddressFundsTransfer) error {
	if err := e.spend(t.Amount); err != nil {
		return err
	}
	return e.creditAddress(t.Recipient, t.Amount)
}
