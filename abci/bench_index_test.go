package abci

import (
	"testing"
	"time"

	dbm "github.com/cometbft/cometbft-db"
	abcitypes "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/state/txindex/kv"
)

// BenchmarkIndexCost measures what CometBFT's kv transaction index writes for a
// transfer between identities and for a documents batch of one create, as the node
// marks its events (protocol.Searched, docs/STATE.md "The transaction index"), against
// what it writes of CometBFT's own tx.hash and tx.height alone (every attribute
// unindexed): the bytes of keys and values, and the records, per transaction. The
// figures are sizes, not times: any -benchtime gives the same.
func BenchmarkIndexCost(b *testing.B) {
	h, ids, t := benchPosts(b, 0)
	for _, kind := range []string{"transfer", "create"} {
		b.Run(kind, func(b *testing.B) {
			const n = 200
			txs := make([][]byte, n)
			for i := range txs {
				if kind == "transfer" {
					txs[i] = benchTransfer(ids, i)
				} else {
					txs[i] = postCreate(&ids[i%len(ids)], t)
				}
			}
			res := h.block(genesisTime.Add(time.Hour+time.Duration(h.height)*time.Second), txs)
			for _, r := range res.TxResults {
				if r.Code != 0 {
					b.Fatalf("%s refused: %d %s", kind, r.Code, r.Log)
				}
			}
			for _, marked := range []bool{true, false} {
				bytes, records := indexed(b, h.height, txs, res.TxResults, marked)
				name := "searched"
				if !marked {
					name = "own"
				}
				b.ReportMetric(float64(bytes)/n, name+"-bytes/tx")
				b.ReportMetric(float64(records)/n, name+"-records/tx")
			}
		})
	}
}

// indexed indexes txs and their results at height into an empty kv index and returns
// the bytes and records it wrote, the stored results (what tx_search answers, one
// record a transaction) among them; unless marked, every attribute is unindexed.
func indexed(b *testing.B, height int64, txs [][]byte, results []*abcitypes.ExecTxResult, marked bool) (bytes, records int) {
	db := dbm.NewMemDB()
	idx := kv.NewTxIndex(db)
	batch := make([]*abcitypes.TxResult, len(txs))
	for i, tx := range txs {
		r := *results[i]
		if !marked {
			r.Events = unmarked(r.Events)
		}
		batch[i] = &abcitypes.TxResult{Height: height, Index: uint32(i), Tx: tx, Result: r}
	}
	for _, r := range batch {
		if err := idx.Index(r); err != nil {
			b.Fatal(err)
		}
	}
	it, err := db.Iterator(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer it.Close()
	for ; it.Valid(); it.Next() {
		bytes += len(it.Key()) + len(it.Value())
		records++
	}
	return bytes, records
}

// unmarked is events with every attribute unindexed.
func unmarked(events []abcitypes.Event) []abcitypes.Event {
	out := make([]abcitypes.Event, len(events))
	for i, e := range events {
		out[i] = abcitypes.Event{Type: e.Type, Attributes: make([]abcitypes.EventAttribute, len(e.Attributes))}
		for j, a := range e.Attributes {
			a.Index = false
			out[i].Attributes[j] = a
		}
	}
	return out
}
