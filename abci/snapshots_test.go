package abci

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/snapshot"
)

// transfers runs n blocks of a few address transfers each on h, from alice (whose last
// nonce is *nonce), letting each snapshot due end before the next block.
func transfers(h *harness, n int, nonce *uint64) {
	for range n {
		var txs [][]byte
		for range 3 {
			*nonce++
			txs = append(txs, h.tx(fmt.Sprintf("address-transfer from=alice to=bob amount=7 nonce=%d", *nonce)))
		}
		h.block(genesisTime.Add(time.Duration(h.height+1)*time.Second), txs)
		if h.app.scheduler != nil {
			h.app.scheduler.Wait()
		}
	}
}

// State sync between two applications, through the ABCI calls CometBFT makes: the
// source takes a snapshot every 3 heights and keeps 2; the joining node refuses what
// it cannot take (another format, metadata that is not the snapshot's, a root the light
// client does not trust, a chunk that is not the manifest's: fetched again and its
// sender rejected), restores the state at the snapshot's height, answers Info with it,
// checks transactions over it, and executes the next blocks to the source's app hashes.
func TestStateSync(t *testing.T) {
	ctx := context.Background()
	src := fundedHarness(t, "alice")
	files, err := snapshot.OpenFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src.app.ServeSnapshots(files, 3, 2)
	var nonce uint64
	transfers(src, 9, &nonce)
	src.app.CloseSnapshots()
	list, err := src.app.ListSnapshots(ctx, &abcitypes.RequestListSnapshots{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Snapshots) != 2 || list.Snapshots[0].Height != 9 || list.Snapshots[1].Height != 6 {
		t.Fatalf("snapshots offered: %v", list.Snapshots)
	}
	offered := list.Snapshots[1]
	m, err := snapshot.DecodeManifest(offered.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	trusted := src.rootAt(6)
	if !bytes.Equal(m.Root, trusted) || !bytes.Equal(offered.Hash, m.Hash()) || int(offered.Chunks) != len(m.Chunks) {
		t.Fatalf("snapshot %+v of root %X, want %X", offered, m.Root, trusted)
	}

	dst := newHarness(t)
	offer := func(s *abcitypes.Snapshot, appHash []byte) abcitypes.ResponseOfferSnapshot_Result {
		t.Helper()
		res, err := dst.app.OfferSnapshot(ctx, &abcitypes.RequestOfferSnapshot{Snapshot: s, AppHash: appHash})
		if err != nil {
			t.Fatal(err)
		}
		return res.Result
	}
	if offered.Format != snapshot.Format2 {
		t.Fatalf("a snapshot taken in format %d", offered.Format)
	}
	other := *offered
	other.Format = 3
	if r := offer(&other, trusted); r != abcitypes.ResponseOfferSnapshot_REJECT_FORMAT {
		t.Fatalf("format 3: %v", r)
	}
	other = *offered
	other.Hash = bytes.Clone(offered.Hash)
	other.Hash[0] ^= 1
	if r := offer(&other, trusted); r != abcitypes.ResponseOfferSnapshot_REJECT_SENDER {
		t.Fatalf("another hash: %v", r)
	}
	other = *offered
	other.Height = 9
	if r := offer(&other, trusted); r != abcitypes.ResponseOfferSnapshot_REJECT_SENDER {
		t.Fatalf("another height: %v", r)
	}
	if r := offer(offered, src.rootAt(9)); r != abcitypes.ResponseOfferSnapshot_REJECT {
		t.Fatalf("a root the light client does not trust: %v", r)
	}
	if r := offer(offered, trusted); r != abcitypes.ResponseOfferSnapshot_ACCEPT {
		t.Fatalf("the snapshot: %v", r)
	}
	apply := func(i uint32, chunk []byte, sender string) *abcitypes.ResponseApplySnapshotChunk {
		t.Helper()
		res, err := dst.app.ApplySnapshotChunk(ctx, &abcitypes.RequestApplySnapshotChunk{Index: i, Chunk: chunk, Sender: sender})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// The snapshot kept at that height is of format 2: none of format 1 is served.
	if load, err := src.app.LoadSnapshotChunk(ctx, &abcitypes.RequestLoadSnapshotChunk{Height: offered.Height, Format: snapshot.Format1, Chunk: 0}); err != nil || load.Chunk != nil {
		t.Fatalf("a chunk of format 1: %d bytes, %v", len(load.Chunk), err)
	}
	for i := range offered.Chunks {
		load, err := src.app.LoadSnapshotChunk(ctx, &abcitypes.RequestLoadSnapshotChunk{Height: offered.Height, Format: offered.Format, Chunk: i})
		if err != nil || len(load.Chunk) == 0 {
			t.Fatalf("chunk %d: %v", i, err)
		}
		bad := bytes.Clone(load.Chunk)
		bad[0] ^= 1
		res := apply(i, bad, "liar")
		if res.Result != abcitypes.ResponseApplySnapshotChunk_RETRY || len(res.RefetchChunks) != 1 || res.RefetchChunks[0] != i ||
			len(res.RejectSenders) != 1 || res.RejectSenders[0] != "liar" {
			t.Fatalf("a corrupted chunk %d: %+v", i, res)
		}
		if res := apply(i, load.Chunk, "honest"); res.Result != abcitypes.ResponseApplySnapshotChunk_ACCEPT {
			t.Fatalf("chunk %d: %+v", i, res)
		}
	}
	info, err := dst.app.Info(ctx, &abcitypes.RequestInfo{})
	if err != nil {
		t.Fatal(err)
	}
	srcInfo, err := src.app.Info(ctx, &abcitypes.RequestInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if info.LastBlockHeight != 6 || !bytes.Equal(info.LastBlockAppHash, trusted) || info.AppVersion != srcInfo.AppVersion || info.AppVersion == 0 {
		t.Fatalf("Info after the restore: %+v", info)
	}
	// The joining node goes on from height 6 as the source went (height 1 is
	// fundedHarness's, each later one spent 3 of alice's nonces).
	dst.height = 6
	dnonce := uint64(15)
	ok, err := dst.app.CheckTx(ctx, &abcitypes.RequestCheckTx{Tx: dst.tx(fmt.Sprintf("address-transfer from=alice to=bob amount=7 nonce=%d", dnonce+1))})
	if err != nil || ok.Code != 0 {
		t.Fatalf("CheckTx over the restored state: %+v, %v", ok, err)
	}
	transfers(dst, 3, &dnonce)
	for h := int64(7); h <= 9; h++ {
		if !bytes.Equal(dst.rootAt(h), src.rootAt(h)) {
			t.Fatalf("height %d: %X, the source %X", h, dst.rootAt(h), src.rootAt(h))
		}
	}
}

// A snapshot whose chunks hash as its manifest says but make another tree than the one
// the light client trusts is refused after its last chunk, and the joining node's
// store is empty again, ready for another snapshot.
func TestStateSyncRefusesAnotherTree(t *testing.T) {
	ctx := context.Background()
	src := fundedHarness(t, "alice")
	files, err := snapshot.OpenFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src.app.ServeSnapshots(files, 2, 5)
	var nonce uint64
	transfers(src, 4, &nonce)
	src.app.CloseSnapshots()
	m2, err := files.Manifest(2)
	if err != nil {
		t.Fatal(err)
	}
	// The manifest of height 4's tree, claiming height 2's root.
	m4, err := files.Manifest(4)
	if err != nil {
		t.Fatal(err)
	}
	forged := snapshot.Manifest{Format: m4.Format, Height: 2, Root: m2.Root, Chunks: m4.Chunks}
	dst := newHarness(t)
	res, err := dst.app.OfferSnapshot(ctx, &abcitypes.RequestOfferSnapshot{Snapshot: abciSnapshot(forged), AppHash: m2.Root})
	if err != nil || res.Result != abcitypes.ResponseOfferSnapshot_ACCEPT {
		t.Fatalf("offer: %v %v", res, err)
	}
	var last abcitypes.ResponseApplySnapshotChunk_Result
	for i := range m4.Chunks {
		chunk, err := files.Chunk(4, uint32(i))
		if err != nil {
			t.Fatal(err)
		}
		res, err := dst.app.ApplySnapshotChunk(ctx, &abcitypes.RequestApplySnapshotChunk{Index: uint32(i), Chunk: chunk})
		if err != nil {
			t.Fatal(err)
		}
		last = res.Result
	}
	if last != abcitypes.ResponseApplySnapshotChunk_REJECT_SNAPSHOT {
		t.Fatalf("another tree: %v", last)
	}
	if v, _ := dst.store.LastCommit(); v != 0 {
		t.Fatalf("the store holds height %d after the refusal", v)
	}
	// The true snapshot of height 2 then restores.
	if res, err := dst.app.OfferSnapshot(ctx, &abcitypes.RequestOfferSnapshot{Snapshot: abciSnapshot(m2), AppHash: m2.Root}); err != nil || res.Result != abcitypes.ResponseOfferSnapshot_ACCEPT {
		t.Fatalf("offer: %v %v", res, err)
	}
	for i := range m2.Chunks {
		chunk, _ := files.Chunk(2, uint32(i))
		if res, err := dst.app.ApplySnapshotChunk(ctx, &abcitypes.RequestApplySnapshotChunk{Index: uint32(i), Chunk: chunk}); err != nil || res.Result != abcitypes.ResponseApplySnapshotChunk_ACCEPT {
			t.Fatalf("chunk %d: %v %v", i, res, err)
		}
	}
	if v, root := dst.store.LastCommit(); v != 2 || !bytes.Equal(root, m2.Root) {
		t.Fatalf("restored %d %X", v, root)
	}
}

// A snapshot whose chunk every peer sends corrupted, as CometBFT's syncer drives the
// application: each refused chunk is fetched again and its sender rejected, and the
// MaxChunkRefusals-th refuses the snapshot, leaving the store empty, so that the
// syncer offers the next, older one, which restores.
func TestStateSyncRefusesCorruptSnapshot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := fundedHarness(t, "alice")
	files, err := snapshot.OpenFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src.app.ServeSnapshots(files, 3, 2)
	var nonce uint64
	transfers(src, 9, &nonce)
	src.app.CloseSnapshots()
	list, err := src.app.ListSnapshots(ctx, &abcitypes.RequestListSnapshots{})
	if err != nil || len(list.Snapshots) != 2 {
		t.Fatalf("snapshots offered: %v %v", list, err)
	}
	newest, older := list.Snapshots[0], list.Snapshots[1]

	dst := newHarness(t)
	dst.app.ServeSnapshots(nil, 0, 0)
	if res, err := dst.app.OfferSnapshot(ctx, &abcitypes.RequestOfferSnapshot{Snapshot: newest, AppHash: src.rootAt(int64(newest.Height))}); err != nil || res.Result != abcitypes.ResponseOfferSnapshot_ACCEPT {
		t.Fatalf("offer of %d: %v %v", newest.Height, res, err)
	}
	chunk, err := files.Chunk(int64(newest.Height), 0)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(chunk)
	bad[len(bad)-1] ^= 1
	for i := range MaxChunkRefusals {
		sender := fmt.Sprintf("peer-%d", i)
		res, err := dst.app.ApplySnapshotChunk(ctx, &abcitypes.RequestApplySnapshotChunk{Index: 0, Chunk: bad, Sender: sender})
		if err != nil {
			t.Fatal(err)
		}
		want, refetch := abcitypes.ResponseApplySnapshotChunk_RETRY, 1
		if i == MaxChunkRefusals-1 {
			want, refetch = abcitypes.ResponseApplySnapshotChunk_REJECT_SNAPSHOT, 0
		}
		if res.Result != want || len(res.RefetchChunks) != refetch || len(res.RejectSenders) != 1 || res.RejectSenders[0] != sender {
			t.Fatalf("refusal %d: %+v, want %v", i+1, res, want)
		}
	}
	if v, _ := dst.store.LastCommit(); v != 0 {
		t.Fatalf("the store holds height %d after the snapshot was refused", v)
	}
	if st := dst.app.RestoreStatus(); st != (RestoreStatus{Offered: 1, Refused: 1, ChunksRefused: MaxChunkRefusals}) {
		t.Fatalf("status after the refusal: %+v", st)
	}
	// A chunk arriving late for the refused snapshot is not taken.
	if res, err := dst.app.ApplySnapshotChunk(ctx, &abcitypes.RequestApplySnapshotChunk{Index: 0, Chunk: chunk}); err != nil || res.Result != abcitypes.ResponseApplySnapshotChunk_ABORT {
		t.Fatalf("a chunk after the refusal: %v %v", res, err)
	}
	if res, err := dst.app.OfferSnapshot(ctx, &abcitypes.RequestOfferSnapshot{Snapshot: older, AppHash: src.rootAt(int64(older.Height))}); err != nil || res.Result != abcitypes.ResponseOfferSnapshot_ACCEPT {
		t.Fatalf("offer of %d: %v %v", older.Height, res, err)
	}
	for i := range older.Chunks {
		chunk, err := files.Chunk(int64(older.Height), i)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := dst.app.ApplySnapshotChunk(ctx, &abcitypes.RequestApplySnapshotChunk{Index: i, Chunk: chunk, Sender: "honest"}); err != nil || res.Result != abcitypes.ResponseApplySnapshotChunk_ACCEPT {
			t.Fatalf("chunk %d: %v %v", i, res, err)
		}
	}
	if v, root := dst.store.LastCommit(); v != int64(older.Height) || !bytes.Equal(root, src.rootAt(v)) {
		t.Fatalf("restored %d %X", v, root)
	}
	if st := dst.app.RestoreStatus(); st != (RestoreStatus{Restored: int64(older.Height), Offered: 2, Refused: 1, ChunksRefused: MaxChunkRefusals}) {
		t.Fatalf("status after the restore: %+v", st)
	}
}

// The restore in progress, as proofs.PathRestore answers it while chunks are
// imported: the snapshot's height, chunks applied of all and their bytes; then none,
// and the height restored from. The path takes no data, height or proof.
func TestRestoreStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := fundedHarness(t, "alice")
	var nonce uint64
	transfers(src, 3, &nonce)
	files, err := snapshot.OpenFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := files.Take(src.store, src.height, 256, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Chunks) < 3 {
		t.Fatalf("%d chunks: the test wants a few", len(m.Chunks))
	}
	dst := newHarness(t)
	dst.app.ServeSnapshots(nil, 0, 0)
	status := func() RestoreStatus {
		t.Helper()
		res := dst.app.restoreStatus(&abcitypes.RequestQuery{Path: proofs.PathRestore})
		var st RestoreStatus
		if res.Code != 0 || res.Height != 0 || res.ProofOps != nil {
			t.Fatalf("answer: %+v", res)
		}
		if err := json.Unmarshal(res.Value, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := status(); st != (RestoreStatus{}) {
		t.Fatalf("before any offer: %+v", st)
	}
	if res, err := dst.app.OfferSnapshot(ctx, &abcitypes.RequestOfferSnapshot{Snapshot: abciSnapshot(m), AppHash: m.Root}); err != nil || res.Result != abcitypes.ResponseOfferSnapshot_ACCEPT {
		t.Fatalf("offer: %v %v", res, err)
	}
	var applied int64
	for i := range m.Chunks {
		if st := status(); st != (RestoreStatus{Height: m.Height, Chunks: len(m.Chunks), ChunksApplied: i, BytesApplied: applied, Offered: 1}) {
			t.Fatalf("before chunk %d: %+v", i, st)
		}
		chunk, err := files.Chunk(m.Height, uint32(i))
		if err != nil {
			t.Fatal(err)
		}
		if res, err := dst.app.ApplySnapshotChunk(ctx, &abcitypes.RequestApplySnapshotChunk{Index: uint32(i), Chunk: chunk}); err != nil || res.Result != abcitypes.ResponseApplySnapshotChunk_ACCEPT {
			t.Fatalf("chunk %d: %v %v", i, res, err)
		}
		applied += int64(len(chunk))
	}
	if st := status(); st != (RestoreStatus{Restored: m.Height, Offered: 1}) {
		t.Fatalf("after the restore: %+v", st)
	}
	for _, bad := range []*abcitypes.RequestQuery{
		{Path: proofs.PathRestore, Prove: true},
		{Path: proofs.PathRestore, Height: 2},
		{Path: proofs.PathRestore, Data: []byte{1}},
	} {
		if res := dst.app.restoreStatus(bad); res.Code != proofs.QueryCodeBadRequest {
			t.Fatalf("%+v: %+v", bad, res)
		}
	}
}
