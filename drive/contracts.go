package drive

import "github.com/ttld-dev/ttld/protocol"

// GetContractBytes returns the stored encoding of contract id (nil: no such contract).
// The caller decodes it with protocol.DecodeContract under the version in force, which
// validates it again.
func GetContractBytes(kv KV, id protocol.ContractID) ([]byte, error) {
	return kv.Get(ContractKey(id))
}

// GetContract reads and decodes contract id under protocol version v. A stored
// contract that no longer decodes is ErrCorrupt: this package wrote it decodable.
func GetContract(kv KV, id protocol.ContractID, v protocol.Version) (protocol.Contract, bool, error) {
	b, err := GetContractBytes(kv, id)
	if err != nil || b == nil {
		return protocol.Contract{}, false, err
	}
	c, err := protocol.DecodeContract(b, v)
	if err != nil {
		return protocol.Contract{}, false, ErrCorrupt{Key: ContractKey(id), Reason: err.Error()}
	}
	return c, true, nil
}

// SetContract writes contract c (its encoding) under its id and returns the length of
// the value written.
func SetContract(kv KV, c protocol.Contract) (valueLen int, err error) {
	v := c.Encode()
	return len(v), kv.Set(ContractKey(c.ID), v)
}
