package client

import (
	"context"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// ContractState is a data contract as read at Height.
type ContractState struct {
	protocol.Contract
	// Present: the contract exists; when false only ID is set.
	Present bool
	// ProtocolVersion is the version in force at Height, which the contract was decoded
	// (and validated again) under.
	ProtocolVersion protocol.Version
	Height          int64
	Verified        bool
}

// Contract reads contract id at height (0: the latest saved state) and the protocol
// version in force there, both at the height the first answered; it decodes the
// contract under that version. With prove, both answers (the contract's presence or
// absence) are checked against the signed header after it.
func (c *Client) Contract(ctx context.Context, id protocol.ContractID, height int64, prove bool) (ContractState, error) {
	value, h, err := c.single(ctx, proofs.PathContract, id[:], height, prove)
	if err != nil {
		return ContractState{}, err
	}
	out := ContractState{Contract: protocol.Contract{ID: id}, Height: h, Verified: prove}
	if value == nil {
		return out, nil
	}
	key := drive.ProtocolVersionKey()
	vb, _, err := c.single(ctx, proofs.PathKey, key, h, prove)
	if err != nil {
		return ContractState{}, err
	}
	v, err := drive.GetProtocolVersion(proofs.SingleKV(key, vb))
	if err != nil {
		return ContractState{}, corrupt(err)
	}
	contract, err := protocol.DecodeContract(value, v)
	if err != nil {
		return ContractState{}, ErrCorruptValue{Key: drive.ContractKey(id), Err: err}
	}
	if contract.ID != id {
		return ContractState{}, ErrInconsistentAnswer{Path: proofs.PathContract, Reason: "the stored contract names another id"}
	}
	out.Contract, out.Present, out.ProtocolVersion = contract, true, v
	return out, nil
}
