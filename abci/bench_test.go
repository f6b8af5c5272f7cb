package abci

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	dbm "github.com/cosmos/cosmos-db"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

const benchIdentities = 10_000

type benchIdentity struct {
	id    protocol.IdentityID
	key   ed25519.PrivateKey
	nonce uint64
}

// benchChain starts a chain with benchIdentities funded identities, each with one key.
// The state lives in goleveldb on disk, as on a node.
func benchChain(b *testing.B) (*harness, []benchIdentity) {
	db, err := dbm.NewGoLevelDB("application", b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	h := &harness{t: b, db: db, identities: map[string]protocol.IdentityID{}}
	h.open()
	ids := make([]benchIdentity, benchIdentities)
	st := genesis.AppState{EpochTimeLengthS: genesis.DefaultEpochLengthS}
	for i := range ids {
		var seed [32]byte
		binary.BigEndian.PutUint64(seed[:], uint64(i))
		ids[i].key = ed25519.NewKeyFromSeed(seed[:])
		ids[i].id = protocol.IdentityID(sha256.Sum256(seed[:]))
		st.Identities = append(st.Identities, genesis.Identity{
			ID: ids[i].id.String(), Balance: 1_000_000_000_000,
			Keys: []string{hex.EncodeToString(ids[i].key.Public().(ed25519.PublicKey))},
		})
	}
	h.initChain(st)
	h.block(genesisTime.Add(time.Second), nil)
	return h, ids
}

// BenchmarkCreditTransfers measures identity credit transfers per second through
// FinalizeBlock and Commit, in blocks of 1,000, over 10,000 funded identities.
// Signing happens before the timer starts.
func BenchmarkCreditTransfers(b *testing.B) {
	h, ids := benchChain(b)
	const perBlock = 1000
	blocks := (b.N + perBlock - 1) / perBlock
	all := make([][][]byte, blocks)
	for n := 0; n < b.N; n++ {
		from := &ids[n%len(ids)]
		to := ids[(n*7919+1)%len(ids)].id
		if to == from.id {
			to = ids[(n+1)%len(ids)].id
		}
		from.nonce++
		tx := protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: from.id, Nonce: from.nonce, Recipient: to, Amount: 1}, from.key)
		all[n/perBlock] = append(all[n/perBlock], tx)
	}
	at := genesisTime.Add(time.Minute)
	b.ResetTimer()
	start := time.Now()
	for i, txs := range all {
		res := h.block(at.Add(time.Duration(i)*time.Second), txs)
		for _, r := range res.TxResults {
			if r.Code != 0 {
				b.Fatalf("transfer refused: %d %s", r.Code, r.Log)
			}
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "transfers/s")
}

// BenchmarkProofGenerate measures proven address queries per second over a tree of
// 10,000 identities (40,000 keys).
func BenchmarkProofGenerate(b *testing.B) {
	h, ids := benchChain(b)
	b.ResetTimer()
	start := time.Now()
	for n := 0; n < b.N; n++ {
		id := ids[n%len(ids)].id
		res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathKey, Data: drive.IdentityBalanceKey(id), Prove: true})
		if err != nil || res.Code != 0 || res.ProofOps == nil {
			b.Fatalf("query: %v %d", err, res.Code)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "proofs/s")
}

// BenchmarkProofVerify measures presence-proof verifications per second.
func BenchmarkProofVerify(b *testing.B) {
	h, ids := benchChain(b)
	root := h.rootAt(0)
	type answer struct {
		key, value []byte
		res        *abcitypes.ResponseQuery
	}
	answers := make([]answer, 1000)
	for i := range answers {
		id := ids[i].id
		key := drive.IdentityBalanceKey(id)
		res, _ := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathKey, Data: key, Prove: true})
		answers[i] = answer{key, res.Value, res}
	}
	b.ResetTimer()
	start := time.Now()
	for n := 0; n < b.N; n++ {
		a := answers[n%len(answers)]
		if err := proofs.VerifyPresence(root, a.key, a.value, a.res.ProofOps); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "verifications/s")
}

// BenchmarkRangeProof measures identity answers (a complete range of 4 keys, one
// ttld:ics23-range batch op) generated and verified per second.
func BenchmarkRangeProof(b *testing.B) {
	h, ids := benchChain(b)
	root := h.rootAt(0)
	b.ResetTimer()
	start := time.Now()
	for n := 0; n < b.N; n++ {
		id := ids[n%len(ids)].id
		res, err := h.app.Query(context.Background(), &abcitypes.RequestQuery{Path: proofs.PathIdentity, Data: id[:], Prove: true})
		if err != nil || res.Code != 0 {
			b.Fatalf("query: %v %d", err, res.Code)
		}
		entries, err := proofs.DecodeEntries(res.Value)
		if err != nil || len(entries) == 0 {
			b.Fatalf("entries: %v", err)
		}
		p := drive.IdentityPrefix(id)
		if err := proofs.VerifyRange(root, p, drive.PrefixEnd(p), entries, false, res.ProofOps); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "answers/s")
}
