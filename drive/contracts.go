package drive

import (
	"encoding/binary"
	"sync"

	"github.com/ttld-dev/ttld/protocol"
)

// GetContractBytes returns the stored encoding of contract id (nil: no such contract).
// The caller decodes it with protocol.DecodeContract under the version in force, which
// validates it again.
func GetContractBytes(kv KV, id protocol.ContractID) ([]byte, error) {
	return kv.Get(ContractKey(id))
}

// GetContract reads and decodes contract id under protocol version v. A stored
// contract that no longer decodes is ErrCorrupt: this package wrote it decodable.
//
// NB: decoding parses the definition and validates it against the version's
// meta-schema, which cost a documents batch more than its writes (a quarter of a block
// of creates). The decoded contract is therefore kept by its stored bytes and the
// version (decodedContracts), and what GetContract returns shares its document types
// with every other caller that reads the same bytes: read it, never modify it. The
// read of the bytes is made and counted as before, so fees do not change.
func GetContract(kv KV, id protocol.ContractID, v protocol.Version) (protocol.Contract, bool, error) {
	b, err := GetContractBytes(kv, id)
	if err != nil || b == nil {
		return protocol.Contract{}, false, err
	}
	c, err := decodedContracts.decode(b, v)
	if err != nil {
		return protocol.Contract{}, false, ErrCorrupt{Key: ContractKey(id), Reason: err.Error()}
	}
	return c, true, nil
}

// maxDecodedContracts bounds the decoded contracts kept; when it is reached they are
// all dropped and decoded again as they are read.
const maxDecodedContracts = 256

// decodedContracts memoizes protocol.DecodeContract, a function of the bytes and the
// version alone: the memo changes no result, only how often the work is done. CheckTx
// and block execution read contracts from two goroutines, hence the lock.
var decodedContracts = contractMemo{m: map[string]protocol.Contract{}}

type contractMemo struct {
	mu sync.Mutex
	m  map[string]protocol.Contract // version (u32 big-endian) ++ encoding -> contract
}

func (c *contractMemo) decode(b []byte, v protocol.Version) (protocol.Contract, error) {
	key := append(binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(v)), b...)
	c.mu.Lock()
	got, ok := c.m[string(key)]
	c.mu.Unlock()
	if ok {
		return got, nil
	}
	got, err := protocol.DecodeContract(b, v)
	if err != nil {
		return protocol.Contract{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxDecodedContracts {
		c.m = map[string]protocol.Contract{}
	}
	c.m[string(key)] = got
	return got, nil
}

// SetContract writes contract c (its encoding) under its id and returns the length of
// the value written.
func SetContract(kv KV, c protocol.Contract) (valueLen int, err error) {
	v := c.Encode()
	return len(v), kv.Set(ContractKey(c.ID), v)
}
