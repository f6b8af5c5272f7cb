package abci

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/genesis"
	"github.com/ttld-dev/ttld/protocol"
)

// BenchmarkCheckTx measures CheckTx as CometBFT's mempool calls it, through the node's
// mempool client (CheckTxAsync): new transactions, signed before the timer starts, each
// from one of 10,000 funded signers (in turn, so one signer's transactions arrive in
// nonce order) to another of them, on a goleveldb store as on a node. ns/op is the time
// per transaction, cpu-ns/op the CPU time the process spent per transaction on all its
// threads (what a loaded machine changes least):
//
//   - transfers/serial: address transfers sent one at a time;
//   - transfers/parallel: the same from GOMAXPROCS goroutines at once (b.RunParallel),
//     as from many RPC connections and peers;
//   - identities/parallel: identity credit transfers from GOMAXPROCS goroutines, whose
//     signer's key is read from the state;
//   - state/serial and state/parallel: address transfers whose signatures the node
//     remembers already (verified before the timer starts): what CheckTx does besides
//     ed25519, the state's part, alone.
//
// Run it with a fixed count, such as -benchtime=20000x: each run starts a chain.
func BenchmarkCheckTx(b *testing.B) {
	b.Run("transfers/serial", func(b *testing.B) { benchCheckTx(b, false, false, false) })
	b.Run("transfers/parallel", func(b *testing.B) { benchCheckTx(b, false, true, false) })
	b.Run("identities/parallel", func(b *testing.B) { benchCheckTx(b, true, true, false) })
	b.Run("state/serial", func(b *testing.B) { benchCheckTx(b, false, false, true) })
	b.Run("state/parallel", func(b *testing.B) { benchCheckTx(b, false, true, true) })
}

func benchCheckTx(b *testing.B, identities, parallel, remembered bool) {
	keys := make([]ed25519.PrivateKey, benchIdentities)
	for i := range keys {
		seed := sha256.Sum256(binary.BigEndian.AppendUint64([]byte("checktx/"), uint64(i)))
		keys[i] = ed25519.NewKeyFromSeed(seed[:])
	}
	h, ids := benchChainWith(b, func(_ *harness, st *genesis.AppState) {
		for _, k := range keys {
			st.Addresses = append(st.Addresses, genesis.Address{Address: protocol.AddressOf(k.Public().(ed25519.PublicKey)).String(), Balance: 1_000_000_000_000})
		}
	})
	txs := make([][]byte, b.N)
	for n := range txs {
		from, to := n%benchIdentities, (n*7919+1)%benchIdentities
		if to == from {
			to = (from + 1) % benchIdentities
		}
		nonce := uint64(n/benchIdentities + 1)
		if identities {
			txs[n] = protocol.Sign(testChainID, &protocol.IdentityCreditTransfer{Identity: ids[from].id, Nonce: nonce, Recipient: ids[to].id, Amount: 1}, ids[from].key)
		} else {
			txs[n] = protocol.Sign(testChainID, &protocol.AddressFundsTransfer{PubKey: keys[from].Public().(ed25519.PublicKey), Nonce: nonce, Recipient: protocol.AddressOf(keys[to].Public().(ed25519.PublicKey)), Amount: 1}, keys[from])
		}
	}
	if remembered {
		saved, err := h.store.Saved(0)
		if err != nil {
			b.Fatal(err)
		}
		at, err := app.JudgeTime(saved)
		if err != nil {
			b.Fatal(err)
		}
		checks, err := app.SignatureChecks(saved, txs, at)
		if err != nil || len(checks) != len(txs) {
			b.Fatalf("%d signature checks of %d transactions: %v", len(checks), len(txs), err)
		}
		for _, c := range checks {
			h.app.signatures.Verify(c.PubKey, c.Message, c.Signature)
		}
	}
	client, err := h.app.ClientCreator().NewABCIClient()
	if err != nil {
		b.Fatal(err)
	}
	var refused atomic.Int64
	client.SetResponseCallback(func(_ *abcitypes.Request, res *abcitypes.Response) {
		if res.GetCheckTx().Code != 0 {
			refused.Add(1)
		}
	})
	check := func(tx []byte) {
		if _, err := client.CheckTxAsync(context.Background(), &abcitypes.RequestCheckTx{Tx: tx, Type: abcitypes.CheckTxType_New}); err != nil {
			b.Error(err)
		}
	}
	b.ResetTimer()
	cpu := processCPU(b)
	if parallel {
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				check(txs[next.Add(1)-1])
			}
		})
	} else {
		for _, tx := range txs {
			check(tx)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
	if n := refused.Load(); n > 0 {
		b.Fatalf("%d of %d transactions refused", n, b.N)
	}
}

// processCPU is the CPU time the process has used so far, on every thread.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCheckTxDocuments measures CheckTx of documents batches as the mempool sends
// them, each one create of a post (benchPostContract: two indexes) from one of 10,000
// identities in turn, through Application.CheckTx on a goleveldb store:
//
//   - new: new transactions, all accepted into one check state with no block between
//     them (what the intake does while the mempool fills); ns/op does not grow with
//     -benchtime, as a create reads no range of the pending ones;
//   - recheck: the same transactions again as the recheck after an empty block sends
//     them, in the mempool's order, their signatures remembered: what each transaction
//     left in the mempool costs every block while CometBFT holds the mempool's lock.
//
// Run it with a fixed count, such as -benchtime=20000x.
func BenchmarkCheckTxDocuments(b *testing.B) {
	for _, kind := range []string{"new", "recheck"} {
		b.Run(kind, func(b *testing.B) {
			h, ids, t := benchPosts(b, 0)
			txs := make([][]byte, b.N)
			for n := range txs {
				txs[n] = postCreate(&ids[n%len(ids)], t)
			}
			check := func(typ abcitypes.CheckTxType) {
				for _, tx := range txs {
					res, err := h.app.CheckTx(context.Background(), &abcitypes.RequestCheckTx{Tx: tx, Type: typ})
					if err != nil || res.Code != 0 {
						b.Fatalf("create refused: %v %d %s", err, res.GetCode(), res.GetLog())
					}
				}
			}
			typ := abcitypes.CheckTxType_New
			if kind == "recheck" {
				check(typ)
				h.block(genesisTime.Add(3*time.Second), nil)
				typ = abcitypes.CheckTxType_Recheck
			}
			b.ResetTimer()
			cpu := processCPU(b)
			check(typ)
			b.StopTimer()
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkBlocksWhileReading measures blocks of 1,000 identity credit transfers
// (signed before the timer) through FinalizeBlock and Commit while GOMAXPROCS
// goroutines read random identities' balances from the last saved version without a
// pause, as CheckTx on every core reads what its memo of the saved version misses: the
// block's writes and the readers share the store's lock. slice is the store's
// drive.Options.WriteSlice: 1 takes the lock for every write, 256 (the default) for
// 256 writes at a time. transfers/s is the blocks' rate, reads/s the readers'.
func BenchmarkBlocksWhileReading(b *testing.B) {
	for _, slice := range []int{1, drive.DefaultWriteSlice} {
		b.Run(fmt.Sprintf("slice=%d", slice), func(b *testing.B) {
			h, ids := benchChainWith(b, func(h *harness, _ *genesis.AppState) {
				if err := h.store.Close(); err != nil {
					b.Fatal(err)
				}
				h.writeSlice = slice
				h.open()
			})
			const perBlock = 1000
			blocks := make([][][]byte, (b.N+perBlock-1)/perBlock)
			for n := 0; n < b.N; n++ {
				blocks[n/perBlock] = append(blocks[n/perBlock], benchTransfer(ids, n))
			}
			stop := make(chan struct{})
			var reads atomic.Int64
			var readers sync.WaitGroup
			for r := 0; r < runtime.GOMAXPROCS(0); r++ {
				readers.Add(1)
				go func(r int) {
					defer readers.Done()
					for i := r; ; i += 7919 {
						select {
						case <-stop:
							return
						default:
						}
						saved, err := h.store.Saved(0)
						if err != nil {
							b.Error(err)
							return
						}
						if _, _, err := drive.GetIdentityBalance(saved, ids[i%len(ids)].id); err != nil {
							b.Error(err)
							return
						}
						reads.Add(1)
					}
				}(r)
			}
			at := genesisTime.Add(time.Minute)
			b.ResetTimer()
			start := time.Now()
			for i, txs := range blocks {
				for _, r := range h.block(at.Add(time.Duration(i)*time.Second), txs).TxResults {
					if r.Code != 0 {
						b.Fatalf("transfer refused: %d %s", r.Code, r.Log)
					}
				}
			}
			elapsed := time.Since(start)
			close(stop)
			readers.Wait()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "transfers/s")
			b.ReportMetric(float64(reads.Load())/elapsed.Seconds(), "reads/s")
		})
	}
}
