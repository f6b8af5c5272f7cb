package abci

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/protocol"
)

// TestReadAheadChangesNothing runs the same blocks on two chains, one reading ahead
// (readahead.go) and one not, and requires every block's response (results, events, app hash) to be the same. The
// blocks transfer credits among 300 identities and create documents of a one-hour ttl
// type (benchTTLContract's "one" and "three"), one block a minute; past the first hour
// each block's cleanup deletes what the block an hour earlier created, more than its
// budget of 128 in some blocks, while the block's own transactions delete some of the
// same documents and transfer among their owners. Every other block is processed
// (ProcessProposal) before FinalizeBlock, as a validator does.
func TestReadAheadChangesNothing(t *testing.T) {
	t.Parallel()
	var chains [2]*harness
	for i, ahead := range []bool{true, false} {
		h := newHarness(t)
		h.readAhead = ahead
		h.app.ReadAhead(ahead)
		chains[i] = h
	}
	ids := make([]benchIdentity, 300)
	st := genesis.AppState{ProtocolVersion: protocol.V14}
	for i := range ids {
		seed := sha256.Sum256([]byte("read-ahead/" + strconv.Itoa(i)))
		ids[i].key = ed25519.NewKeyFromSeed(seed[:])
		ids[i].id = protocol.IdentityID(sha256.Sum256(seed[:]))
		st.Identities = append(st.Identities, genesis.Identity{
			ID: ids[i].id.String(), Balance: 1_000_000_000_000, Keys: []string{hex.EncodeToString(ids[i].key.Public().(ed25519.PublicKey))},
		})
	}
	height := 0
	// block runs txs at at on both chains and compares their responses.
	block := func(at time.Time, txs [][]byte) *responses {
		height++
		var out responses
		for i, h := range chains {
			if height%2 == 0 {
				h.hash = blockHash(strconv.Itoa(height))
				h.processBlock(at, txs)
			}
			out[i] = h.block(at, txs)
			h.hash = nil
		}
		if a, b := marshal(t, out[0]), marshal(t, out[1]); !slices.Equal(a, b) {
			t.Fatalf("block %d differs:\nread ahead: %v\nnot: %v", height, out[0], out[1])
		}
		return &out
	}
	for _, h := range chains {
		h.initChain(st)
	}
	start := genesisTime.Add(time.Minute)
	owner := &ids[0]
	owner.nonce++
	res := block(start, [][]byte{protocol.Sign(testChainID, &protocol.DataContractCreate{Identity: owner.id, Nonce: owner.nonce, Definition: []byte(benchTTLContract)}, owner.key)})
	if res[0].TxResults[0].Code != 0 {
		t.Fatalf("contract refused: %s", res[0].TxResults[0].Log)
	}
	contract := protocol.NewContractID(owner.id, owner.nonce)
	type created struct {
		typ   string
		id    protocol.DocumentID
		owner *benchIdentity
	}
	var docs [][]created // by block
	seq := uint64(0)
	expired, deleted := 0, 0
	for blk := 1; blk <= 90; blk++ {
		at := start.Add(time.Duration(blk) * time.Minute)
		var txs [][]byte
		var made []created
		n := 60
		if blk%10 == 0 {
			n = 200 // more than the cleanup removes in one block
		}
		for i := range n {
			w := &ids[(blk*37+i)%len(ids)]
			w.nonce++
			seq++
			typ := benchTTLTypes[i%2]
			var entropy [32]byte
			binary.BigEndian.PutUint64(entropy[:], seq)
			data := fmt.Sprintf(`{"author":[%s],"title":"t %d","n":%d}`, byteList(w.id[:]), seq%17, seq)
			txs = append(txs, protocol.Sign(testChainID, &protocol.DocumentsBatch{Identity: w.id, Nonce: w.nonce, Contract: contract, Actions: []protocol.DocumentAction{
				{Kind: protocol.ActionCreate, Type: typ, Entropy: entropy, Data: []byte(data)},
			}}, w.key))
			made = append(made, created{typ, protocol.NewDocumentID(contract, w.id, typ, entropy), w})
		}
		for i := range 40 {
			from := &ids[(blk*11+i)%len(ids)]
			from.nonce++
			txs = append(txs, protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: from.id, Nonce: from.nonce, Recipient: ids[(blk*13+i+1)%len(ids)].id, Amount: 1}, from.key))
		}
		// Owners delete a few of the documents due now, which the cleanup would
		// otherwise remove in this block.
		if k := blk - 61; k >= 0 && k < len(docs) {
			for _, d := range docs[k][:10] {
				d.owner.nonce++
				txs = append(txs, protocol.Sign(testChainID, &protocol.DocumentsBatch{Identity: d.owner.id, Nonce: d.owner.nonce, Contract: contract, Actions: []protocol.DocumentAction{
					{Kind: protocol.ActionDelete, Type: d.typ, ID: d.id},
				}}, d.owner.key))
			}
		}
		res := block(at, txs)
		for _, r := range res[0].TxResults {
			if r.Code == 0 {
				continue
			}
			t.Fatalf("block %d: transaction refused: %d %s", blk, r.Code, r.Log)
		}
		_, n = expiredIn(res[0], "")
		expired += n
		if blk > 61 {
			deleted += 10
		}
		docs = append(docs, made)
	}
	if expired < 1_000 || deleted == 0 {
		t.Fatalf("%d documents expired, %d deleted by their owners: the blocks exercise too little", expired, deleted)
	}
	if a, b := chains[0].rootAt(0), chains[1].rootAt(0); !slices.Equal(a, b) {
		t.Fatalf("the chains end at %X and %X", a, b)
	}
}

func marshal(t *testing.T, res *abcitypes.ResponseFinalizeBlock) []byte {
	b, err := res.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// responses are one block's FinalizeBlock responses on the two chains.
type responses = [2]*abcitypes.ResponseFinalizeBlock

// TestScenariosWithoutReadingAhead runs every scenario (testdata) with reading ahead and
// without, executing each block in FinalizeBlock alone: each must print what the file
// holds (TestScenarios) and commit the same app hashes both ways.
func TestScenariosWithoutReadingAhead(t *testing.T) {
	t.Parallel()
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var roots [2][]string
		for i, ahead := range []bool{true, false} {
			h := newHarness(t)
			h.readAhead = ahead
			h.app.ReadAhead(ahead)
			datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
				h.t = t
				return h.run(d)
			})
			roots[i] = h.roots
		}
		if !slices.Equal(roots[0], roots[1]) {
			t.Fatalf("app hashes reading ahead:\n%v\nnot:\n%v", roots[0], roots[1])
		}
	})
}
