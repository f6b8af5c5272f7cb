package app

import (
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

func init() { handle(protocol.TypeDataContractUpdate, applyDataContractUpdate) }

// applyDataContractUpdate replaces a contract by its next version: signed by the owner,
// numbered the stored version plus one, and passing CheckContractUpdate. The bytes the
// new value adds over the old pay the perpetual storage fee; a shrink pays none.
func applyDataContractUpdate(e *execution, t *protocol.DataContractUpdate) error {
	v := e.r.ctx.Version
	next, err := t.Updated(e.r.ctx)
	if err != nil {
		return err
	}
	old, err := drive.GetContractBytes(e.cache, t.Contract)
	if err != nil {
		return err
	}
	if old == nil {
		e.absentContractMargin(len(next.Encode()))
		return protocol.ErrDataContractNotFound{ID: t.Contract}
	}
	prev, err := protocol.DecodeContract(old, v)
	if err != nil {
		return drive.ErrCorrupt{Key: drive.ContractKey(t.Contract), Reason: err.Error()}
	}
	if prev.Owner != t.Identity {
		return protocol.ErrDataContractOwnerMismatch{ID: t.Contract, Owner: prev.Owner, Signer: t.Identity}
	}
	if t.Version != prev.Version+1 {
		return protocol.ErrInvalidDataContractVersion{ID: t.Contract, Stored: prev.Version, Got: t.Version}
	}
	if err := protocol.CheckContractUpdate(prev, next); err != nil {
		return err
	}
	if err := e.checkContractState(next); err != nil {
		return err
	}
	valueLen, err := drive.SetContract(e.cache, next)
	if err != nil {
		return err
	}
	if valueLen > len(old) {
		e.storage(uint64(valueLen - len(old)))
	}
	for _, dt := range next.DocumentTypes {
		if _, had := prev.DocumentType(dt.Name); had {
			continue // CheckContractUpdate: an existing type is unchanged
		}
		n, err := drive.RegisterTimeRanges(e.cache, next.ID, dt)
		if err != nil {
			return err
		}
		e.storage(uint64(n))
	}
	e.events = append(e.events, protocol.NewDataContractEvent(protocol.EventDataContractUpdated, next.ID, next.Owner, next.Version))
	return nil
}

// absentContractMargin bounds what an update that found no contract would cost more on
// a later state where the contract exists: loading the largest stored contract, writing
// the new value (valueLen bytes) and its perpetual storage. The absent-read margin
// covers fixed-width records only.
func (e *execution) absentContractMargin(valueLen int) {
	key := drive.ContractKey(protocol.ContractID{})
	// valueLen is bounded by the transaction size: the price cannot overflow.
	storage, _ := e.r.fees.PerpetualStorageFee(uint64(valueLen))
	e.margin += e.r.fees.AbsentReadMargin(protocol.MaxContractEncodingLen(e.r.ctx.Limits)) +
		e.r.fees.ProcessingFee(drive.SetCost(key, valueLen)) + storage
}
