package app

import (
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

func init() { handle(protocol.TypeDataContractCreate, applyDataContractCreate) }

// applyDataContractCreate stores the contract at version 1 under NewContractID(owner,
// nonce); its key and value bytes pay the perpetual storage fee.
func applyDataContractCreate(e *execution, t *protocol.DataContractCreate) error {
	c, err := t.Contract(e.r.ctx)
	if err != nil {
		return err
	}
	// NB: the id comes from the owner and a nonce authenticate has just accepted as
	// unused, so this read finds nothing on any state the transaction can meet (short of
	// a sha256 collision): the fee estimate's absent-read margin needs no contract size.
	prev, err := drive.GetContractBytes(e.cache, c.ID)
	if err != nil {
		return err
	}
	if prev != nil {
		return protocol.ErrDataContractAlreadyPresent{ID: c.ID}
	}
	if err := e.checkContractState(c); err != nil {
		return err
	}
	valueLen, err := drive.SetContract(e.cache, c)
	if err != nil {
		return err
	}
	e.storage(uint64(len(drive.ContractKey(c.ID)) + valueLen))
	for _, dt := range c.DocumentTypes {
		n, err := drive.RegisterTimeRanges(e.cache, c.ID, dt)
		if err != nil {
			return err
		}
		e.storage(uint64(n))
	}
	e.events = append(e.events, protocol.NewDataContractEvent(protocol.EventDataContractCreated, c.ID, c.Owner, 1))
	return nil
}

// checkContractState checks what a contract registration or update needs state for:
// each moderator of its moderation block is an identity, and each reference of its
// types names a type that exists and may be referred to so (protocol.CheckReferences;
// a reference to the contract itself resolves to c). A refusal may not hold on a later
// state, where the identity or the target contract exists.
func (e *execution) checkContractState(c protocol.Contract) error {
	if c.Moderation != nil {
		for _, id := range c.Moderation.Moderators {
			ok, err := drive.IdentityExists(e.cache, id)
			if err != nil {
				return err
			}
			if !ok {
				e.unbounded = true
				return protocol.ErrModeratorNotFound{ID: id}
			}
		}
	}
	err := protocol.CheckReferences(c, func(id protocol.ContractID) (protocol.Contract, bool, error) {
		return drive.GetContract(e.cache, id, e.r.ctx.Version)
	})
	if code, _ := protocol.CodeOf(err); code == protocol.CodeInvalidReference {
		e.unbounded = true
	}
	return err
}
