package app

import (
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

func init() { handle(protocol.TypeIdentityCreate, applyIdentityCreate) }

// applyIdentityCreate writes the new identity, funded with the amount the signing
// address spends.
func applyIdentityCreate(e *execution, t *protocol.IdentityCreate) error {
	if err := e.spend(t.Amount); err != nil {
		return err
	}
	id := protocol.NewIdentityID(*e.payer.address, t.Nonce)
	if err := drive.InsertIdentity(e.cache, drive.Identity{ID: id, Balance: t.Amount, Keys: t.Keys}); err != nil {
		return err
	}
	e.events = append(e.events, protocol.NewIdentityCreatedEvent(id, *e.payer.address, t.Amount))
	return nil
}
