package abci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/proofs"
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
// keeping the keep newest (docs/STATE.md, "Snapshots"). It also readies the node's own
// state sync, whose progress queries read (RestoreStatus). Call it before the node
// starts, and CloseSnapshots once it has stopped.
func (a *Application) ServeSnapshots(files *snapshot.Files, interval int64, keep int) {
	a.snapshots = files
	a.restoring = &restore{}
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
		a.endRun()
	}
}

// snapshotTaken logs a snapshot's outcome and records it in the metrics.
func (a *Application) snapshotTaken(t snapshot.Taken) {
	switch {
	case t.Skipped && t.Err != nil:
		a.metrics.Snapshots.WithLabelValues(snapshotSkipped).Inc()
		a.log.Warn().Err(t.Err).Int64("height", t.Height).Msg("snapshot skipped: one snapshot operation runs at a time")
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

// LoadSnapshotChunk reads a chunk of a snapshot kept, as it is on disk (in format 2,
// compressed); none (a nil chunk, which the asking peer takes as missing) when it is
// not kept, or kept in another format than the one asked.
func (a *Application) LoadSnapshotChunk(_ context.Context, req *abcitypes.RequestLoadSnapshotChunk) (*abcitypes.ResponseLoadSnapshotChunk, error) {
	if a.snapshots == nil || req.Height < 1 || req.Height > 1<<62 {
		return &abcitypes.ResponseLoadSnapshotChunk{}, nil
	}
	// A peer asks for a chunk of the snapshot of a height and a format: the one kept
	// at that height must be of that format.
	m, err := a.snapshots.Manifest(int64(req.Height))
	if err == nil && m.Format != req.Format {
		return &abcitypes.ResponseLoadSnapshotChunk{}, nil
	}
	var chunk []byte
	if err == nil {
		chunk, err = a.snapshots.Chunk(int64(req.Height), req.Chunk)
	}
	if err != nil {
		if !errors.As(err, new(snapshot.ErrNotFound)) {
			a.log.Error().Err(err).Uint64("height", req.Height).Uint32("chunk", req.Chunk).Msg("reading a snapshot chunk failed")
		}
		return &abcitypes.ResponseLoadSnapshotChunk{}, nil
	}
	return &abcitypes.ResponseLoadSnapshotChunk{Chunk: chunk}, nil
}

// MaxChunkRefusals is how many chunks of one snapshot the application refuses (chunks
// whose hash is not the one the manifest names) before it refuses the snapshot, so
// that CometBFT's syncer tries the next one, older (docs/STATE.md, "Snapshots").
const MaxChunkRefusals = 3

// restore is the node's state sync as the application sees it. ServeSnapshots makes
// it before the node starts (OfferSnapshot, for an application that serves none), and
// it is never replaced: run, the snapshot being restored, belongs to the snapshot
// connection; status is published under mu for the query connection and the node
// (RestoreStatus).
type restore struct {
	run *restoreRun

	mu     sync.Mutex
	status RestoreStatus
}

// restoreRun is the snapshot accepted and what of it is imported.
type restoreRun struct {
	r *snapshot.Restorer
	// end ends the restore as a snapshot operation of the snapshot files, if the
	// application serves any (snapshot.Files.BeginRestore).
	end   func()
	start time.Time
	bytes int64
	// refused counts its chunks refused (MaxChunkRefusals).
	refused int
}

// RestoreStatus is what the node's state sync has done: the snapshot it is restoring,
// if any, and what it was offered and refused since the process started. It is the
// value of proofs.PathRestore, in JSON.
type RestoreStatus struct {
	// Height is the height of the snapshot being restored; 0: none is.
	Height int64 `json:"height"`
	// Chunks is how many chunks it has, ChunksApplied how many of them, in order, were
	// accepted and handed to the import (one or two of them may still be importing),
	// BytesApplied their size.
	Chunks        int   `json:"chunks"`
	ChunksApplied int   `json:"chunks_applied"`
	BytesApplied  int64 `json:"bytes_applied"`
	// Restored is the height of the snapshot the state was restored from; 0: none.
	Restored int64 `json:"restored"`
	// Offered counts the snapshots CometBFT offered, Refused those the application
	// refused (at the offer, or whole after chunks), ChunksRefused the chunks it
	// refused.
	Offered       int `json:"offered"`
	Refused       int `json:"refused"`
	ChunksRefused int `json:"chunks_refused"`
}

// RestoreStatus is what the node's state sync has done so far; safe to call from any
// goroutine.
func (a *Application) RestoreStatus() RestoreStatus {
	rs := a.restoring
	if rs == nil {
		return RestoreStatus{}
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.status
}

// publish changes the status under its lock and sets the restore gauges from it.
func (a *Application) publish(change func(*RestoreStatus)) {
	rs := a.restoring
	rs.mu.Lock()
	change(&rs.status)
	st := rs.status
	rs.mu.Unlock()
	a.metrics.RestoreChunks.Set(float64(st.Chunks))
	a.metrics.RestoreApplied.Set(float64(st.ChunksApplied))
	a.metrics.RestoreBytes.Set(float64(st.BytesApplied))
}

// restoreStatus answers proofs.PathRestore: RestoreStatus in JSON, with no height and
// no proof (it is no saved state).
func (a *Application) restoreStatus(req *abcitypes.RequestQuery) *abcitypes.ResponseQuery {
	if req.Prove || req.Height != 0 || len(req.Data) != 0 {
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeBadRequest, Log: proofs.ErrBadQuery{Path: req.Path, Reason: "no data, height 0 and no proof: the node's own progress is no saved state"}.Error()}
	}
	st := a.RestoreStatus()
	value, err := json.Marshal(st)
	if err != nil {
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeInternal, Log: err.Error()}
	}
	log := "no snapshot being restored"
	if st.Height != 0 {
		log = fmt.Sprintf("restoring the snapshot at height %d: chunk %d of %d, %d bytes (unproven)", st.Height, st.ChunksApplied, st.Chunks, st.BytesApplied)
	}
	return &abcitypes.ResponseQuery{Value: value, Log: log}
}

// endRun ends the restore in progress, if any, emptying the store unless it is done;
// it fails only when the store cannot be emptied.
func (a *Application) endRun() error {
	run := a.restoring.run
	if run == nil {
		return nil
	}
	a.restoring.run = nil
	a.publish(func(st *RestoreStatus) { st.Height, st.Chunks, st.ChunksApplied, st.BytesApplied = 0, 0, 0, 0 })
	err := run.r.Close()
	run.end()
	if err != (snapshot.ErrAbandoned{}) {
		return err
	}
	return nil
}

// refuse counts a snapshot refused and answers CometBFT with res.
func (a *Application) refuse(res abcitypes.ResponseOfferSnapshot_Result) *abcitypes.ResponseOfferSnapshot {
	a.publish(func(st *RestoreStatus) { st.Refused++ })
	return &abcitypes.ResponseOfferSnapshot{Result: res}
}

// OfferSnapshot takes a snapshot to restore when it is one this binary restores:
// format 1 or 2 (else REJECT_FORMAT), with metadata that is a manifest matching the
// snapshot's height, chunk count and hash (else REJECT_SENDER: the peer sent what it
// does not describe), whose root is the app hash the light client verified for its
// height (else REJECT). The store must be empty: whatever it holds cannot be CometBFT's
// (which state-syncs only a node with no state of its own) and is deleted first, once
// a snapshot being taken of it has ended: one snapshot operation runs at a time, and
// none is taken until the restore ends.
func (a *Application) OfferSnapshot(_ context.Context, req *abcitypes.RequestOfferSnapshot) (*abcitypes.ResponseOfferSnapshot, error) {
	if a.restoring == nil {
		a.restoring = &restore{}
	}
	// CometBFT offers another snapshot after the one before failed.
	if err := a.endRun(); err != nil {
		return nil, err
	}
	a.publish(func(st *RestoreStatus) { st.Offered++ })
	s := req.Snapshot
	if s == nil {
		return a.refuse(abcitypes.ResponseOfferSnapshot_REJECT), nil
	}
	if !snapshot.Restores(s.Format) {
		a.log.Info().Uint64("height", s.Height).Uint32("format", s.Format).Msgf("snapshot refused: format %d, which this binary does not restore (it restores formats %d and %d)", s.Format, snapshot.Format1, snapshot.Format2)
		return a.refuse(abcitypes.ResponseOfferSnapshot_REJECT_FORMAT), nil
	}
	m, err := snapshot.DecodeManifest(s.Metadata)
	if err == nil && (uint64(m.Height) != s.Height || uint32(len(m.Chunks)) != s.Chunks || !bytes.Equal(m.Hash(), s.Hash)) {
		err = snapshot.ErrManifest{Reason: "its height, chunk count or hash is not the snapshot's"}
	}
	if err != nil {
		a.log.Warn().Err(err).Uint64("height", s.Height).Msg("snapshot refused, and its sender")
		return a.refuse(abcitypes.ResponseOfferSnapshot_REJECT_SENDER), nil
	}
	end := func() {}
	if a.snapshots != nil {
		if end, err = a.snapshots.BeginRestore(); err != nil {
			return nil, err
		}
	}
	if v, _ := a.store.LastCommit(); v != 0 {
		a.log.Warn().Int64("height", v).Msg("state sync: the application store holds a state CometBFT has none of (a restore its node did not record); deleting it")
		if err := a.store.Reset(); err != nil {
			end()
			return nil, err
		}
	}
	r, err := snapshot.NewRestorer(a.store, m, req.AppHash)
	if err != nil {
		end()
	}
	var root snapshot.ErrRoot
	if errors.As(err, &root) {
		a.log.Warn().Err(err).Int64("height", m.Height).Msg("snapshot refused")
		return a.refuse(abcitypes.ResponseOfferSnapshot_REJECT), nil
	}
	if err != nil {
		return nil, err
	}
	a.restoring.run = &restoreRun{r: r, end: end, start: time.Now()}
	a.publish(func(st *RestoreStatus) {
		st.Height, st.Chunks, st.ChunksApplied, st.BytesApplied = m.Height, len(m.Chunks), 0, 0
	})
	a.log.Info().Int64("height", m.Height).Int("chunks", len(m.Chunks)).Hex("app_hash", m.Root).Msg("restoring the state from a snapshot")
	return &abcitypes.ResponseOfferSnapshot{Result: abcitypes.ResponseOfferSnapshot_ACCEPT}, nil
}

// ApplySnapshotChunk imports the next chunk of the snapshot accepted. A chunk that is
// not the one the manifest names is fetched again, from another peer (its sender is
// rejected), until MaxChunkRefusals of the snapshot's chunks are refused: then the
// snapshot is, and CometBFT tries the next. A chunk that hashes right is handed to the
// restore's import and answered at once, so that the next one arrives while it is
// imported (snapshot.Restorer); chunks that make no tree refuse the snapshot at the
// next chunk, or at the last, whose answer waits for the whole import and its root:
// a tree of another root than the trusted one refuses the snapshot too. A refused
// snapshot leaves the store empty again. After the last chunk the store holds the
// state at the snapshot's height, and the check state is rebuilt from it.
func (a *Application) ApplySnapshotChunk(_ context.Context, req *abcitypes.RequestApplySnapshotChunk) (*abcitypes.ResponseApplySnapshotChunk, error) {
	if a.restoring == nil || a.restoring.run == nil {
		return &abcitypes.ResponseApplySnapshotChunk{Result: abcitypes.ResponseApplySnapshotChunk_ABORT}, nil
	}
	run := a.restoring.run
	m := run.r.Manifest()
	err := run.r.Apply(req.Index, req.Chunk)
	var hash snapshot.ErrChunkHash
	var order snapshot.ErrChunkOrder
	switch {
	case errors.As(err, &hash):
		run.refused++
		a.publish(func(st *RestoreStatus) { st.ChunksRefused++ })
		res := &abcitypes.ResponseApplySnapshotChunk{Result: abcitypes.ResponseApplySnapshotChunk_RETRY, RefetchChunks: []uint32{req.Index}}
		if req.Sender != "" {
			res.RejectSenders = []string{req.Sender}
		}
		if run.refused < MaxChunkRefusals {
			a.log.Warn().Int64("height", m.Height).Uint32("chunk", req.Index).Str("sender", req.Sender).Int("refused", run.refused).
				Msgf("snapshot chunk refused: not the chunk the manifest names; fetching it again from another peer (the snapshot is refused at %d)", MaxChunkRefusals)
			return res, nil
		}
		a.log.Warn().Int64("height", m.Height).Uint32("chunk", req.Index).Str("sender", req.Sender).
			Msgf("snapshot refused: %d of its chunks were not the chunks its manifest names; trying another snapshot", run.refused)
		res.Result, res.RefetchChunks = abcitypes.ResponseApplySnapshotChunk_REJECT_SNAPSHOT, nil
		a.publish(func(st *RestoreStatus) { st.Refused++ })
		if err := a.endRun(); err != nil {
			return nil, err
		}
		return res, nil
	case errors.As(err, &order):
		return &abcitypes.ResponseApplySnapshotChunk{Result: abcitypes.ResponseApplySnapshotChunk_RETRY}, nil
	case err != nil:
		a.publish(func(st *RestoreStatus) { st.Refused++ })
		if cerr := a.endRun(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		a.log.Error().Err(err).Int64("height", m.Height).Uint32("chunk", req.Index).Msg("snapshot refused: its chunks do not make the state the light client trusts; the store is empty again")
		return &abcitypes.ResponseApplySnapshotChunk{Result: abcitypes.ResponseApplySnapshotChunk_REJECT_SNAPSHOT}, nil
	}
	run.bytes += int64(len(req.Chunk))
	done := run.r.Next()
	a.publish(func(st *RestoreStatus) { st.ChunksApplied, st.BytesApplied = int(done), run.bytes })
	a.log.Info().Int64("height", m.Height).Msgf("restoring: chunk %d of %d, %.1f MiB, %d%%", done, len(m.Chunks), float64(run.bytes)/(1<<20), int(done)*100/len(m.Chunks))
	if !run.r.Done() {
		return &abcitypes.ResponseApplySnapshotChunk{Result: abcitypes.ResponseApplySnapshotChunk_ACCEPT}, nil
	}
	if err := a.endRun(); err != nil {
		return nil, err
	}
	if err := a.restored(m.Height); err != nil {
		return nil, err
	}
	a.log.Info().Int64("height", m.Height).Hex("app_hash", m.Root).Int("chunks", len(m.Chunks)).Int64("bytes", run.bytes).
		Dur("took", time.Since(run.start)).Msg("state restored from a snapshot")
	return &abcitypes.ResponseApplySnapshotChunk{Result: abcitypes.ResponseApplySnapshotChunk_ACCEPT}, nil
}

// HaltStateSync halts the node for good on err, a state sync that cannot end, which the
// node finds in what CometBFT's syncer logs (node/statesync_watch.go): it logs err,
// closes Halted and HaltErr is err. A node halted already keeps its first reason.
func (a *Application) HaltStateSync(err error) {
	a.halted.once.Do(func() {
		if a.halted.notify != nil {
			a.halted.notify()
		}
		a.log.Error().Msg(err.Error())
		a.halted.err = err
		close(a.halted.done)
	})
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
	a.publish(func(st *RestoreStatus) { st.Restored = height })
	a.metrics.RestoreSucceeded.Set(float64(height))
	a.metrics.Height.Set(float64(height))
	a.observePools(height)
	if saved, err := a.store.Saved(height); err == nil {
		a.warnUpgrade(saved)
	}
	return nil
}
