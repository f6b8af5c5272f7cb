package drive

import (
	"encoding/binary"
	"fmt"

	"github.com/ttld-dev/ttld/protocol"
)

// EpochSignals are the version signals of one epoch's blocks (docs/STATE.md, "Protocol
// upgrades").
type EpochSignals struct {
	// Blocks is the epoch's block count, written when the epoch ends; 0 while it runs,
	// when its blocks so far are the heights from the current epoch's first on.
	Blocks uint64
	// Counts are the blocks that signalled each version, by ascending version, none 0.
	Counts []VersionCount
}

// VersionCount is the number of an epoch's blocks that signalled one version.
type VersionCount struct {
	Version protocol.Version
	Blocks  uint64
}

// AtLeast is the number of the epoch's blocks that signalled v or a later version.
func (s EpochSignals) AtLeast(v protocol.Version) uint64 {
	var n uint64
	for _, c := range s.Counts {
		if c.Version >= v {
			n += c.Blocks // below the epoch's blocks, so below 2^64
		}
	}
	return n
}

// add counts one more block signalling v and returns v's count with it.
func (s *EpochSignals) add(v protocol.Version) uint64 {
	for i := range s.Counts {
		switch c := &s.Counts[i]; {
		case c.Version == v:
			c.Blocks++
			return c.Blocks
		case c.Version > v:
			s.Counts = append(s.Counts[:i], append([]VersionCount{{v, 1}}, s.Counts[i:]...)...)
			return 1
		}
	}
	s.Counts = append(s.Counts, VersionCount{v, 1})
	return 1
}

// versionCountLen is the length of one count in an EpochSignals encoding.
const versionCountLen = 4 + U64Len

// EncodeEpochSignals writes s: blocks u64, then version u32 ++ count u64 for each
// version, ascending.
func EncodeEpochSignals(s EpochSignals) []byte {
	out := binary.BigEndian.AppendUint64(make([]byte, 0, U64Len+versionCountLen*len(s.Counts)), s.Blocks)
	for _, c := range s.Counts {
		out = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(out, uint32(c.Version)), c.Blocks)
	}
	return out
}

// DecodeEpochSignals reads what EncodeEpochSignals wrote, refusing versions out of
// order and counts of 0.
func DecodeEpochSignals(v []byte) (EpochSignals, error) {
	if len(v) < U64Len || (len(v)-U64Len)%versionCountLen != 0 {
		return EpochSignals{}, fmt.Errorf("want blocks u64 then (version u32, count u64) pairs, got %d bytes", len(v))
	}
	s := EpochSignals{Blocks: binary.BigEndian.Uint64(v)}
	for rest := v[U64Len:]; len(rest) > 0; rest = rest[versionCountLen:] {
		c := VersionCount{Version: protocol.Version(binary.BigEndian.Uint32(rest)), Blocks: binary.BigEndian.Uint64(rest[4:])}
		if c.Blocks == 0 || (len(s.Counts) > 0 && c.Version <= s.Counts[len(s.Counts)-1].Version) {
			return EpochSignals{}, fmt.Errorf("count %d of version %d: versions ascend and counts are not 0", c.Blocks, c.Version)
		}
		s.Counts = append(s.Counts, c)
	}
	return s, nil
}

// GetEpochSignals reads the signals of an epoch's blocks (ok false: none signalled).
func GetEpochSignals(kv KV, epoch uint32) (s EpochSignals, ok bool, err error) {
	key := EpochSignalsKey(epoch)
	v, err := kv.Get(key)
	if err != nil || v == nil {
		return s, false, err
	}
	if s, err = DecodeEpochSignals(v); err != nil {
		return s, false, ErrCorrupt{Key: key, Reason: err.Error()}
	}
	return s, true, nil
}

// SetEpochSignals writes the signals of an epoch's blocks.
func SetEpochSignals(kv KV, epoch uint32, s EpochSignals) error {
	return kv.Set(EpochSignalsKey(epoch), EncodeEpochSignals(s))
}

// AddSignal counts one more block of epoch signalling v and returns v's count in the
// epoch with it.
func AddSignal(kv KV, epoch uint32, v protocol.Version) (uint64, error) {
	s, _, err := GetEpochSignals(kv, epoch)
	if err != nil {
		return 0, err
	}
	n := s.add(v)
	return n, SetEpochSignals(kv, epoch, s)
}

// DeleteSignalsBefore removes the signals of every epoch before epoch.
func DeleteSignalsBefore(kv KV, epoch uint32) error {
	var old [][]byte
	err := kv.Iterate(EpochSignalsPrefix(), EpochSignalsKey(epoch), func(k, _ []byte) (bool, error) {
		old = append(old, k)
		return false, nil
	})
	if err != nil {
		return err
	}
	for _, k := range old {
		if err := kv.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// GetNextVersion reads the version the chain moves to at the next epoch change (ok
// false: none decided).
func GetNextVersion(kv KV) (v protocol.Version, ok bool, err error) {
	b, err := kv.Get(NextVersionKey())
	if err != nil || b == nil {
		return 0, false, err
	}
	if len(b) != 4 {
		return 0, false, ErrCorrupt{Key: NextVersionKey(), Reason: "want a 4-byte protocol version"}
	}
	return protocol.Version(binary.BigEndian.Uint32(b)), true, nil
}

// SetNextVersion records the version the chain moves to at the next epoch change.
func SetNextVersion(kv KV, v protocol.Version) error {
	return kv.Set(NextVersionKey(), binary.BigEndian.AppendUint32(nil, uint32(v)))
}
