package load

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
)

// kvstoreKeyLen is the length of a kvstore transaction's key: the run (8 hex digits),
// the client (4) and the client's sequence number (12), so keys never repeat within
// a run, and across runs unless two run ids share their first four bytes.
const kvstoreKeyLen = 8 + 4 + 12

// MinKVStoreSize is the smallest kvstore transaction: a key, '=' and one value byte.
const MinKVStoreSize = kvstoreKeyLen + 2

// kvstoreTx is transaction seq of client of run for CometBFT's kvstore: "key=value",
// size bytes, of lower-case hex digits but for the one '=' (kvstore's isValidTx:
// exactly one '=', no ':', neither at an end; and no "val=" prefix, which kvstore reads
// as a validator update). The value is random, as incompressible as the signatures
// and ids of ttld's transactions (goleveldb compresses its blocks).
func kvstoreTx(run RunID, client int, seq uint64, size int, rng *rand.ChaCha8) []byte {
	tx := make([]byte, 0, size)
	tx = hex.AppendEncode(tx, run[:4])
	tx = fmt.Appendf(tx, "%04x%012x", client&0xffff, seq&0xffffffffffff)
	tx = append(tx, '=')
	var r [8]byte
	for len(tx) < size {
		binary.LittleEndian.PutUint64(r[:], rng.Uint64())
		tx = hex.AppendEncode(tx, r[:])
	}
	return tx[:size]
}
