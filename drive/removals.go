package drive

import (
	"encoding/binary"
	"fmt"

	"github.com/ttld-dev/ttld/protocol"
)

// RemovalRef names a removal record: its document's type and id.
type RemovalRef struct {
	Type string
	ID   protocol.DocumentID
}

// removalFormat leads an encoded removal record.
const removalFormat = 1

// removalFixedLen: format, owner, moderator, time, hash, reason length.
const removalFixedLen = 1 + 2*protocol.IdentityIDLen + 8 + 32 + 2

// EncodeRemoval writes a removal record's value: the format byte 1, the owner, the
// moderator, the block time of the deletion (u64 ms), the document's hash (32 bytes),
// the reason's length (u16) and the reason. The type and the id are in the key.
func EncodeRemoval(r protocol.RemovalRecord) []byte {
	out := make([]byte, 0, removalFixedLen+len(r.Reason))
	out = append(out, removalFormat)
	out = append(out, r.Owner[:]...)
	out = append(out, r.Moderator[:]...)
	out = binary.BigEndian.AppendUint64(out, r.AtMs)
	out = append(out, r.DocumentHash[:]...)
	out = binary.BigEndian.AppendUint16(out, uint16(len(r.Reason)))
	return append(out, r.Reason...)
}

// DecodeRemoval reads the record at key from its payload (the value after the storage
// flags).
func DecodeRemoval(key, payload []byte) (protocol.RemovalRecord, error) {
	_, typeName, id, ok := ParseRemovalKey(key)
	if !ok {
		return protocol.RemovalRecord{}, fmt.Errorf("not a removal record key")
	}
	if len(payload) < removalFixedLen || payload[0] != removalFormat {
		return protocol.RemovalRecord{}, fmt.Errorf("%d bytes: not a removal record", len(payload))
	}
	r := protocol.RemovalRecord{Type: typeName, ID: id}
	off := 1
	off += copy(r.Owner[:], payload[off:])
	off += copy(r.Moderator[:], payload[off:])
	r.AtMs = binary.BigEndian.Uint64(payload[off:])
	off += 8
	off += copy(r.DocumentHash[:], payload[off:])
	n := int(binary.BigEndian.Uint16(payload[off:]))
	off += 2
	if len(payload)-off != n {
		return protocol.RemovalRecord{}, fmt.Errorf("a reason of %d bytes announced, %d follow", n, len(payload)-off)
	}
	r.Reason = string(payload[off:])
	return r, nil
}

// StoredRemoval is a removal record as stored: the record and the storage flags of its
// item.
type StoredRemoval struct {
	protocol.RemovalRecord
	Flags      StorageFlags
	PayloadLen int
}

// GetRemoval reads the removal record of document id of type typeName in contract c.
func GetRemoval(kv KV, c protocol.ContractID, typeName string, id protocol.DocumentID) (StoredRemoval, bool, error) {
	key := RemovalKey(c, typeName, id)
	v, err := kv.Get(key)
	if err != nil || v == nil {
		return StoredRemoval{}, false, err
	}
	r, err := DecodeRemovalValue(key, v)
	return r, err == nil, err
}

// DecodeRemovalValue reads a stored removal record: the value at key, storage flags
// and record. A value that does not decode is ErrCorrupt.
func DecodeRemovalValue(key, v []byte) (StoredRemoval, error) {
	f, payload, err := SplitFlags(v)
	if err != nil {
		return StoredRemoval{}, ErrCorrupt{Key: key, Reason: err.Error()}
	}
	r, err := DecodeRemoval(key, payload)
	if err != nil {
		return StoredRemoval{}, ErrCorrupt{Key: key, Reason: err.Error()}
	}
	return StoredRemoval{RemovalRecord: r, Flags: f, PayloadLen: len(payload)}, nil
}

// PutRemoval stores record r of contract c, its bytes paid by s.Payer as perpetual
// storage, over any earlier record of the same document (refunded to its payers).
func PutRemoval(kv KV, s *Storage, c protocol.ContractID, r protocol.RemovalRecord) error {
	old, found, err := GetRemoval(kv, c, r.Type, r.ID)
	if err != nil {
		return err
	}
	key := RemovalKey(c, r.Type, r.ID)
	if found {
		if err := s.dropItem(kv, key, old.Flags, old.PayloadLen); err != nil {
			return err
		}
	}
	return s.putItem(kv, key, EncodeRemoval(r))
}

// DeleteRemoval removes the stored record r of contract c, refunding its payers.
func DeleteRemoval(kv KV, s *Storage, c protocol.ContractID, r StoredRemoval) error {
	return s.dropItem(kv, RemovalKey(c, r.Type, r.ID), r.Flags, r.PayloadLen)
}
