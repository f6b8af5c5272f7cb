package thirdparty

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Upgrades is an /upgrades answer read as docs/PROOFS.md, "Value encodings", says.
type Upgrades struct {
	// Next is the version the chain moves to at the next epoch change; 0: none decided.
	Next uint32
	// Signals are the version signals of the epochs that have them, by ascending epoch.
	Signals []EpochSignals
}

// EpochSignals are the version signals of one epoch's blocks.
type EpochSignals struct {
	Epoch uint32
	// Blocks is the epoch's block count once it has ended, 0 while it runs.
	Blocks uint64
	// Counts are the blocks that signalled each version, by ascending version.
	Counts []VersionCount
}

// VersionCount is the number of an epoch's blocks that signalled one version.
type VersionCount struct {
	Version uint32
	Blocks  uint64
}

// DecodeUpgrades reads the entries of a verified /upgrades answer: key 104 'P' 'n',
// the next version u32; keys 104 'P' 's' epoch u32, blocks u64 then (version u32,
// count u64) pairs. Any other key or length is refused.
func DecodeUpgrades(entries []KV) (Upgrades, error) {
	var u Upgrades
	for _, e := range entries {
		rest, ok := bytes.CutPrefix(e.Key, []byte{104, 'P'})
		switch {
		case !ok || len(rest) == 0:
			return Upgrades{}, fmt.Errorf("/upgrades: key %x is not an upgrade record", e.Key)
		case rest[0] == 'n' && len(rest) == 1:
			if len(e.Value) != 4 {
				return Upgrades{}, fmt.Errorf("/upgrades: next version of %d bytes", len(e.Value))
			}
			u.Next = binary.BigEndian.Uint32(e.Value)
		case rest[0] == 's' && len(rest) == 5:
			if len(e.Value) < 8 || (len(e.Value)-8)%12 != 0 {
				return Upgrades{}, fmt.Errorf("/upgrades: signals of %d bytes", len(e.Value))
			}
			s := EpochSignals{Epoch: binary.BigEndian.Uint32(rest[1:]), Blocks: binary.BigEndian.Uint64(e.Value)}
			for v := e.Value[8:]; len(v) > 0; v = v[12:] {
				s.Counts = append(s.Counts, VersionCount{Version: binary.BigEndian.Uint32(v), Blocks: binary.BigEndian.Uint64(v[4:])})
			}
			u.Signals = append(u.Signals, s)
		default:
			return Upgrades{}, fmt.Errorf("/upgrades: key %x is not an upgrade record", e.Key)
		}
	}
	return u, nil
}
