package abci

import (
	"bytes"
	"context"
	"errors"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/snapshot"
)

// Outcomes of a snapshot due, the labels of the snapshots metric.
const (
	snapshotTaken   = "taken"
	snapshotFailed  = "failed"
	snapshotSkipped = "skipped"
)

// ServeSnapshots makes the application offer the snapshots in files to the nodes that
// state-sync from it (ListSnapshots, LoadSnapshotChunk) and, when interval > 0, take one
// of every height that is a multiple of interval after its commit, in the background,
// keeping the keep newest (docs/STATE.md, "Snapshots"). Call it before the node starts,
// and CloseSnapshots once it has stopped.
func (a *Application) ServeSnapshots(files *snapshot.Files, interval int64, keep int) {
	a.snapshots = files
	if interval > 0 {
		a.scheduler = snapshot.NewScheduler(a.store, files, interval, keep, 0, a.snapshotTaken)
	}
}

// CloseSnapshots stops a snapshot being taken (it leaves nothing) and waits for it, so
// that nothing reads the store after; it abandons a restore not finished, emptying the
// store.
func (a *Application) CloseSnapshots() {
	if a.scheduler != nil {
		a.scheduler.Close()
	}
	if a.restoring != nil {
		a.restoring.r.Close()
		a.restoring = nil
	}
}

// snapshotTaken logs a snapshot's outcome and records it in the metrics.
func (a *Application) snapshotTaken(t snapshot.Taken) {
	switch {
	case t.Skipped:
		a.metrics.Snapshots.WithLabelValues(snapshotSkipped).Inc()
		a.log.Warn().Int64("height", t.Height).Msg("snapshot skipped: the one before is still being taken (snapshot_interval is shorter than a snapshot takes)")
	case t.Err != nil:
		a.metrics.Snapshots.WithLabelValues(snapshotFailed).Inc()
		if !errors.As(t.Err, new(snapshot.ErrStopped)) {
			a.log.Error().Err(t.Err).Int64("height", t.Height).Msg("snapshot failed")
		}
	default:
		a.metrics.Snapshots.WithLabelValues(snapshotTaken).Inc()
		a.metrics.SnapshotHeight.Set(float64(t.Height))
		a.metrics.SnapshotSeconds.Set(t.Duration.Seconds())
		a.metrics.SnapshotBytes.Set(float64(t.Bytes))
		a.log.Info().Int64("height", t.Height).Int("chunks", len(t.Manifest.Chunks)).Int64("bytes", t.Bytes).
			Dur("took", t.Duration).Ints64("pruned", t.Pruned).Hex("hash", t.Manifest.Hash()).Msg("snapshot taken")
	}
}

// ListSnapshots offers the snapshots kept, newest first (CometBFT's reactor passes the
// newest ten to a peer that asks).
func (a *Application) ListSnapshots(context.Context, *abcitypes.RequestListSnapshots) (*abcitypes.ResponseListSnapshots, error) {
	res := &abcitypes.ResponseListSnapshots{}
	if a.snapshots == nil {
		return res, nil
	}
	heights, err := a.snapshots.Heights()
	if err != nil {
		a.log.Error().Err(err).Msg("listing the snapshots failed")
		return res, nil
	}
	for _, h := range heights {
		m, err := a.snapshots.Manifest(h)
		if err != nil {
			// Pruned meanwhile, or damaged on disk: not offered.
			a.log.Warn().Err(err).Int64("height", h).Msg("snapshot not offered")
			continue
		}
		res.Snapshots = append(res.Snapshots, abciSnapshot(m))
	}
	return res, nil
}

// abciSnapshot is m as CometBFT's Snapshot: the manifest is its metadata, whose hash is
// the snapshot's.
func abciSnapshot(m snapshot.Manifest) *abcitypes.Snapshot {
	return &abcitypes.Snapshot{Height: uint64(m.Height), Format: m.Format, Chunks: uint32(len(m.Chunks)), Hash: m.Hash(), Metadata: m.Encode()}
}

// LoadSnapshotChunk reads a chunk of a snapshot kept; none (a nil chunk, which the
// asking peer takes as missing) when it is not kept.
func (a *Application) LoadSnapshotChunk(_ context.Context, req *abcitypes.RequestLoadSnapshotChunk) (*abcitypes.ResponseLoadSnapshotChunk, error) {
	if a.snapshots == nil || req.Format != snapshot.Format1 || req.Height > 1<<62 {
		return &abcitypes.ResponseLoadSnapshotChunk{}, nil
	}
	chunk, err := a.snapshots.Chunk(int64(req.Height), req.Chunk)
	if err != nil {
		if !errors.As(err, new(snapshot.ErrNotFound)) {
			a.log.Error().Err(err).Uint64("height", req.Height).Uint32("chunk", req.Chunk).Msg("reading a snapshot chunk failed")
		}
		return &abcitypes.ResponseLoadSnapshotChunk{}, nil
	}
	return &abcitypes.ResponseLoadSnapshotChunk{Chunk: chunk}, nil
}

// restore is a state sync in progress: the snapshot accepted and what of it is
// imported.
type restore struct {
	r     *snapshot.Restorer
	start time.Time
	bytes int64
}

// OfferSnapshot takes a snapshot to restore when it is one this binary restores:
// format 1 (else REJECT_FORMAT), with metadata that is a manifest matching the
// snapshot's height, chunk count and hash (else REJECT_SENDER: the peer sent what it
// does not describe), whose root is the app hash the light client verified for its
// height (else REJECT). The store must be empty: whatever it holds cannot be CometBFT's
// (which state-syncs only a node with no state of its own) and is deleted first.
func (a *Application) OfferSnapshot(_ context.Context, req *abcitypes.RequestOfferSnapshot) (*abcitypes.ResponseOfferSnapshot, error) {
	if a.restoring != nil {
		// CometBFT offers another snapshot after the one before failed.
		a.restoring.r.Close()
		a.restoring = nil
		a.metrics.RestoreChunks.Set(0)
	}
	s := req.Snapshot
	if s == nil {
		return &abcitypes.ResponseOfferSnapshot{Result: abcitypes.ResponseOfferSnapshot_REJECT}, nil
	}
	if s.Format != snapshot.Format1 {
		a.log.Info().Uint64("height", s.Height).Uint32("format", s.Format).Msg("snapshot refused: a format this binary does not restore")
		return &abcitypes.ResponseOfferSnapshot{Result: abcitypes.ResponseOfferSnapshot_REJECT_FORMAT}, nil
	}
	m, err := snapshot.DecodeManifest(s.Metadata)
	if err == nil && (uint64(m.Height) != s.Height || uint32(len(m.Chunks)) != s.Chunks || !bytes.Equal(m.Hash(), s.Hash)) {
		err = snapshot.ErrManifest{Reason: "its height, chunk count or hash is not the snapshot's"}
	}
	if err != nil {
		a.log.Warn().Err(err).Uint64("height", s.Height).Msg("snapshot refused, and its sender")
		return &abcitypes.ResponseOfferSnapshot{Result: abcitypes.ResponseOfferSnapshot_REJECT_SENDER}, nil
	}
	if v, _ := a.store.LastCommit(); v != 0 {
		a.log.Warn().Int64("height", v).Msg("state sync: the application store holds a state CometBFT has none of (a restore its node did not record); deleting it")
		if err := a.store.Reset(); err != nil {
			return nil, err
		}
	}
	r, err := snapshot.NewRestorer(a.store, m, req.AppHash)
	var root snapshot.ErrRoot
	if errors.As(err, &root) {
		a.log.Warn().Err(err).Int64("height", m.Height).Msg("snapshot refused")
		return &abcitypes.ResponseOfferSnapshot{Result: abcitypes.ResponseOfferSnapshot_REJECT}, nil
	}
	if err != nil {
		return nil, err
	}
	a.restoring = &restore{r: r, start: time.Now()}
	a.metrics.RestoreChunks.Set(float64(len(m.Chunks)))
	a.metrics.RestoreApplied.Set(0)
	a.metrics.RestoreBytes.Set(0)
	a.log.Info().Int64("height", m.Height).Int("chunks", len(m.Chunks)).Hex("app_hash", m.Root).Msg("restoring the state from a snapshot")
	return &abcitypes.ResponseOfferSnapshot{Result: abcitypes.ResponseOfferSnapshot_ACCEPT}, nil
}

// ApplySnapshotChunk imports the next chunk of the snapshot accepted. A chunk that is
// not the one the manifest names is fetched again, from another peer (its sender is
// rejected); chunks that hash right but make no tree, or a tree of another root than
// the trusted one, refuse the snapshot, and the store is emptied again. After the last
// chunk the store holds the state at the snapshot's height, and the check state is
// rebuilt from it.
func (a *Application) ApplySnapshotChunk(_ context.Context, req *abcitypes.RequestApplySnapshotChunk) (*abcitypes.ResponseApplySnapshotChunk, error) {
	rs := a.restoring
	if rs == nil {
		return &abcitypes.ResponseApplySnapshotChunk{Result: abcitypes.ResponseApplySnapshotChunk_ABORT}, nil
	}
	m := rs.r.Manifest()
	err := rs.r.Apply(req.Index, req.Chunk)
	var hash snapshot.ErrChunkHash
	var order snapshot.ErrChunkOrder
	switch {
	case errors.As(err, &hash):
		a.log.Warn().Uint32("chunk", req.Index).Str("sender", req.Sender).Msg("snapshot chunk refused: not the chunk the manifest names; fetching it again from another peer")
		res := &abcitypes.ResponseApplySnapshotChunk{Result: abcitypes.ResponseApplySnapshotChunk_RETRY, RefetchChunks: []uint32{req.Index}}
		if req.Sender != "" {
			res.RejectSenders = []string{req.Sender}
		}
		return res, nil
	case errors.As(err, &order):
		return &abcitypes.ResponseApplySnapshotChunk{Result: abcitypes.ResponseApplySnapshotChunk_RETRY}, nil
	case err != nil:
		a.restoring = nil
		a.metrics.RestoreChunks.Set(0)
		if cerr := rs.r.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		a.log.Error().Err(err).Int64("height", m.Height).Uint32("chunk", req.Index).Msg("snapshot refused: its chunks do not make the state the light client trusts; the store is empty again")
		return &abcitypes.ResponseApplySnapshotChunk{Result: abcitypes.ResponseApplySnapshotChunk_REJECT_SNAPSHOT}, nil
	}
	rs.bytes += int64(len(req.Chunk))
	done := rs.r.Next()
	a.metrics.RestoreApplied.Set(float64(done))
	a.metrics.RestoreBytes.Set(float64(rs.bytes))
	a.log.Info().Int64("height", m.Height).Msgf("restoring: chunk %d of %d, %.1f MiB, %d%%", done, len(m.Chunks), float64(rs.bytes)/(1<<20), int(done)*100/len(m.Chunks))
	if !rs.r.Done() {
		return &abcitypes.ResponseApplySnapshotChunk{Result: abcitypes.ResponseApplySnapshotChunk_ACCEPT}, nil
	}
	a.restoring = nil
	if err := a.restored(m.Height); err != nil {
		return nil, err
	}
	a.log.Info().Int64("height", m.Height).Hex("app_hash", m.Root).Int("chunks", len(m.Chunks)).Int64("bytes", rs.bytes).
		Dur("took", time.Since(rs.start)).Msg("state restored from a snapshot")
	return &abcitypes.ResponseApplySnapshotChunk{Result: abcitypes.ResponseApplySnapshotChunk_ACCEPT}, nil
}

// restored makes the state at height, just imported, the application's: the check
// state, the metrics and the warnings of an upgrade to come start from it as from a
// commit.
func (a *Application) restored(height int64) error {
	if err := a.checkSavedVersion(); err != nil {
		return err
	}
	if err := a.resetCheckState(); err != nil {
		return err
	}
	a.metrics.RestoreSucceeded.Set(float64(height))
	a.metrics.Height.Set(float64(height))
	a.observePools(height)
	if saved, err := a.store.Saved(height); err == nil {
		a.warnUpgrade(saved)
	}
	return nil
}
