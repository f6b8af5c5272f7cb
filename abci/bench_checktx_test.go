package abci

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/app"
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
