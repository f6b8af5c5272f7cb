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
	e.events = append(e.events, Event{Type: "data_contract_created", Attrs: []Attr{
		{"contract", c.ID.String()}, {"owner", c.Owner.String()}, {"version", "1"},
	}})
	return nil
}
