package replay

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"flag"
	"sync"
	"syscall"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/rs/zerolog"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/protocol"
)

// Figures of BenchmarkReplay.
var (
	replaySenders   = flag.Int("bench.senders", 16, "identities sending transfers in BenchmarkReplay, one goroutine each")
	replayTransfers = flag.Int("bench.transfers", 1500, "transfers each sender of BenchmarkReplay sends")
)

// BenchmarkReplay runs a one-validator node in process (e2e.StartNode: one-second
// timeout_commit), loads it with identity credit transfers as fast as its RPC takes
// them (bench.senders identities, each sending bench.transfers, one broadcast_tx_sync
// after another, retrying while the mempool is full), stops it, and replays its block
// store with Run. Reported: the loaded blocks (those holding transfers), their mean
// transfers, the rate the chain made them at (their header times, from the block before
// the first to the last), the rate the replay re-executed them at (FinalizeBlock,
// Commit and the hash checks, timed between Progress calls), and the ratio of the two:
// how many times faster than the chain's real time the replay runs. The whole replay's
// rate is reported too, with the CPU time the process used during it and how many
// cores that makes (on a machine other work shares, the cores the replay had).
//
// Then the same blocks are executed again in process (executeSame), each through
// FinalizeBlock and Commit alone, timed from the request to the commit's return: once
// with every signature verified before the block, untimed (exec-verified-blocks/s: the
// execution proper, what a validator whose CheckTx took the transactions pays), once
// with nothing verified before (exec-unverified-blocks/s: what a node pays for a block
// it never saw, FinalizeBlock verifying on every core). of-verified and of-unverified
// are the replay's rate over each. Run it with -benchtime 1x: an iteration is the
// whole chain.
func BenchmarkReplay(b *testing.B) {
	for range b.N {
		benchReplay(b)
	}
}

func benchReplay(b *testing.B) {
	b.StopTimer()
	env := e2e.StartNode(b)
	ctx := context.Background()
	senders, funded := fundSenders(b, env, *replaySenders)
	loadStart := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(senders))
	for i := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = sendTransfers(ctx, env, &senders[i], senders[(i+1)%len(senders)].id, *replayTransfers)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	rpc, err := rpchttp.New(env.RPC, "/websocket")
	if err != nil {
		b.Fatal(err)
	}
	drained, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		n, err := rpc.NumUnconfirmedTxs(drained)
		if err != nil {
			b.Fatal(err)
		}
		if n.Total == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	last, err := env.Client.LatestHeight(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := env.Client.WaitForHeight(drained, last+2); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d transfers sent in %s", len(senders)**replayTransfers, time.Since(loadStart).Round(time.Millisecond))
	metas := blockMetas(b, rpc, last+2)
	if err := env.Node.Stop(); err != nil {
		b.Fatal(err)
	}

	done := make(map[int64]time.Time, len(metas))
	first := metas[0].Header.Height
	b.StartTimer()
	start, cpuStart := time.Now(), processCPU(b)
	sum, err := Run(ctx, Options{Home: env.Home, Progress: func(n, _ int64) { done[first+n-1] = time.Now() }})
	b.StopTimer()
	cpu, wall := processCPU(b)-cpuStart, time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	if sum.Verdict != "match" {
		b.Fatalf("replay verdict %s: %+v", sum.Verdict, sum.Mismatch)
	}
	// The loaded blocks: from the first holding a transfer (after the one that created
	// the senders) to the last.
	lo, hi := int64(0), int64(0)
	txs := 0
	for _, m := range metas {
		if m.NumTxs > 0 && m.Header.Height > funded {
			if lo == 0 {
				lo = m.Header.Height
			}
			hi = m.Header.Height
			txs += m.NumTxs
		}
	}
	if lo == 0 {
		b.Fatal("no block holds a transfer")
	}
	at := func(h int64) time.Time { return metas[h-first].Header.Time }
	blocks := float64(hi - lo + 1)
	chain := at(hi).Sub(at(lo - 1))
	replayed := done[hi].Sub(done[lo-1])
	b.ReportMetric(blocks, "loaded-blocks")
	b.ReportMetric(float64(txs)/blocks, "transfers/block")
	b.ReportMetric(blocks/chain.Seconds(), "chain-blocks/s")
	b.ReportMetric(blocks/replayed.Seconds(), "replay-blocks/s")
	b.ReportMetric(chain.Seconds()/replayed.Seconds(), "x-real-time")
	b.ReportMetric(float64(sum.Blocks)/wall.Seconds(), "replay-all-blocks/s")
	b.ReportMetric(cpu.Seconds(), "replay-cpu-s")
	b.ReportMetric(cpu.Seconds()/wall.Seconds(), "replay-cores")
	b.Logf("loaded blocks %d to %d: %d transfers in %s of chain time, replayed in %s; all %d blocks replayed in %.2f s, %d signatures verified ahead", lo, hi, txs, chain.Round(time.Millisecond), replayed.Round(time.Millisecond), sum.Blocks, sum.Seconds, sum.VerifiedAhead)
	verified := executeSame(b, env.Home, lo, hi, true)
	unverified := executeSame(b, env.Home, lo, hi, false)
	b.ReportMetric(blocks/verified.Seconds(), "exec-verified-blocks/s")
	b.ReportMetric(blocks/unverified.Seconds(), "exec-unverified-blocks/s")
	b.ReportMetric(verified.Seconds()/replayed.Seconds(), "of-verified")
	b.ReportMetric(unverified.Seconds()/replayed.Seconds(), "of-unverified")
	b.Logf("the same blocks in process: %s with their signatures verified before, %s without", verified.Round(time.Millisecond), unverified.Round(time.Millisecond))
}

// executeSame executes home's blocks from genesis on a new replica, one after another
// on this goroutine, and returns the time FinalizeBlock and Commit of blocks lo to hi
// took. With verified, every signature of a block is verified before its FinalizeBlock
// (untimed), on the state it starts from, and must all be found there.
func executeSame(b *testing.B, home string, lo, hi int64, verified bool) time.Duration {
	ctx := context.Background()
	src, err := openSource(home)
	if err != nil {
		b.Fatal(err)
	}
	defer src.close()
	if _, _, err := src.span(0, 0); err != nil {
		b.Fatal(err)
	}
	rep, err := newReplica(src.gen)
	if err != nil {
		b.Fatal(err)
	}
	defer rep.close()
	var sum Summary
	if err := rep.genesis(ctx, src, &sum, zerolog.Nop()); err != nil || sum.Mismatch != nil {
		b.Fatal(err, sum.Mismatch)
	}
	var spent time.Duration
	for h := src.gen.InitialHeight; h <= hi; h++ {
		block, _, err := src.blocksAt(h)
		if err != nil || block == nil {
			b.Fatalf("block %d: %v", h, err)
		}
		req := finalizeRequest(block)
		if verified && h >= lo {
			if n := rep.app.VerifyAhead(req.Txs, protocol.BlockTimeMs(block.Time)); n != len(req.Txs) {
				b.Fatalf("block %d: %d of %d signatures verified before it", h, n, len(req.Txs))
			}
		}
		start := time.Now()
		if _, err := rep.app.FinalizeBlock(ctx, req); err != nil {
			b.Fatal(err)
		}
		if _, err := rep.app.Commit(ctx, &abcitypes.RequestCommit{}); err != nil {
			b.Fatal(err)
		}
		if h >= lo {
			spent += time.Since(start)
		}
	}
	return spent
}

// processCPU is the CPU time the process has used, user and system: over the replay,
// it tells how much of the machine the replay had (on a machine other work shares).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// replaySender is an identity that signs transfers.
type replaySender struct {
	id    protocol.IdentityID
	key   ed25519.PrivateKey
	nonce uint64
}

// fundSenders creates n identities from the dev key's address, each with one key and
// enough credits for its transfers and their fees, and waits for them to commit at the
// height it returns.
func fundSenders(b *testing.B, env *e2e.Env, n int) ([]replaySender, int64) {
	ctx := context.Background()
	out := make([]replaySender, n)
	var txs [][]byte
	for i := range out {
		seed := sha256.Sum256(binary.BigEndian.AppendUint64([]byte("replay-bench/"), uint64(i)))
		out[i].key = ed25519.NewKeyFromSeed(seed[:])
		nonce := uint64(i + 1)
		out[i].id = protocol.NewIdentityID(env.Dev.Address(), nonce)
		txs = append(txs, protocol.Sign(e2e.ChainID, &protocol.IdentityCreate{
			PubKey: env.Dev.Pub, Nonce: nonce, Amount: e2e.DevBalance / uint64(2*n),
			Keys: []ed25519.PublicKey{out[i].key.Public().(ed25519.PublicKey)},
		}, env.Dev.Priv))
	}
	var height int64
	for i, tx := range txs {
		res, err := env.Client.Broadcast(ctx, tx, i == len(txs)-1)
		if err != nil || res.Code != 0 {
			b.Fatalf("identity %d: %v %+v", i, err, res)
		}
		height = res.Height
	}
	return out, height
}

// sendTransfers sends n transfers of s to recipient, one after another, each accepted
// by CheckTx; a full mempool is waited out, for at most a minute in all.
func sendTransfers(ctx context.Context, env *e2e.Env, s *replaySender, recipient protocol.IdentityID, n int) error {
	deadline := time.Now().Add(time.Minute)
	for range n {
		s.nonce++
		tx := protocol.Sign(e2e.ChainID, &protocol.IdentityCreditTransfer{Identity: s.id, Nonce: s.nonce, Recipient: recipient, Amount: 1}, s.key)
		for {
			res, err := env.Client.Broadcast(ctx, tx, false)
			if (err == nil && res.Code == 0) || errors.As(err, new(client.ErrTxInCache)) {
				break
			}
			if time.Now().After(deadline) {
				return errors.Join(errors.New("replay bench: a transfer was not accepted in time"), err, codeError(res))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// codeError is a refusal's code and log as an error (nil for an acceptance).
func codeError(res client.BroadcastResult) error {
	if res.Code == 0 {
		return nil
	}
	return errors.New(res.Code.String() + ": " + res.Log)
}

// blockMetas reads the metas of blocks 1 to last, in height order.
func blockMetas(b *testing.B, rpc *rpchttp.HTTP, last int64) []*cmttypes.BlockMeta {
	var metas []*cmttypes.BlockMeta
	for lo := int64(1); lo <= last; lo += 20 {
		res, err := rpc.BlockchainInfo(context.Background(), lo, min(lo+19, last))
		if err != nil {
			b.Fatal(err)
		}
		// BlockchainInfo answers newest first.
		for i := len(res.BlockMetas) - 1; i >= 0; i-- {
			metas = append(metas, res.BlockMetas[i])
		}
	}
	for i, m := range metas {
		if m.Header.Height != int64(i+1) {
			b.Fatalf("block meta %d is of height %d", i, m.Header.Height)
		}
	}
	return metas
}
