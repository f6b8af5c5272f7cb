package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/cometbft/cometbft/config"
	cmtnode "github.com/cometbft/cometbft/node"
	dbm "github.com/cosmos/cosmos-db"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/snapshot"
)

// SnapshotInfo is one snapshot a home keeps.
type SnapshotInfo struct {
	Manifest snapshot.Manifest
	// Bytes is the size of its chunks.
	Bytes int64
}

// Snapshots are the snapshots home keeps (data/snapshots), newest first, and the
// directory they are in.
func Snapshots(home string) ([]SnapshotInfo, string, error) {
	cfg, err := readConfig(home)
	if err != nil {
		return nil, "", err
	}
	files := snapshot.ReadFiles(SnapshotDir(cfg))
	heights, err := files.Heights()
	if err != nil {
		return nil, "", err
	}
	out := []SnapshotInfo{}
	for _, h := range heights {
		m, err := files.Manifest(h)
		if err != nil {
			return nil, "", err
		}
		size, err := files.Size(h)
		if err != nil {
			return nil, "", err
		}
		out = append(out, SnapshotInfo{Manifest: m, Bytes: size})
	}
	return out, files.Dir(), nil
}

// offline is a stopped node's configuration, application store and snapshots, opened
// by the snapshot commands.
type offline struct {
	cfg   *config.Config
	files *snapshot.Files
	store *drive.Store
	db    dbm.DB
}

func openOffline(home string) (*offline, error) {
	cfg, err := readConfig(home)
	if err != nil {
		return nil, err
	}
	appCfg, err := LoadAppConfig(cfg.RootDir)
	if err != nil {
		return nil, err
	}
	gen, err := LoadGenesis(cfg.RootDir)
	if err != nil {
		return nil, err
	}
	// The database first: a running node holds its lock, and its snapshot directory
	// is its own meanwhile.
	store, db, err := openApplication(cfg, appCfg, gen)
	if err != nil {
		return nil, err
	}
	o := &offline{cfg: cfg, store: store, db: db}
	if o.files, err = snapshot.OpenFiles(SnapshotDir(cfg)); err != nil {
		return nil, errors.Join(err, o.close())
	}
	return o, nil
}

func (o *offline) close() error { return errors.Join(o.store.Close(), o.db.Close()) }

// ExportSnapshot takes a snapshot of a stopped node's state at height (0: its last)
// into its snapshot directory, where the node offers it to peers once started; it
// returns the snapshot.
func ExportSnapshot(home string, height int64) (SnapshotInfo, error) {
	o, err := openOffline(home)
	if err != nil {
		return SnapshotInfo{}, err
	}
	defer o.close()
	if height == 0 {
		height, _ = o.store.LastCommit()
	}
	m, size, err := o.files.Take(o.store, height, 0, nil)
	if err != nil {
		return SnapshotInfo{}, err
	}
	return SnapshotInfo{Manifest: m, Bytes: size}, nil
}

// ErrNotEmpty: a restore into a home that holds a state.
type ErrNotEmpty struct {
	Home   string
	Height int64
	What   string
}

func (e ErrNotEmpty) Error() string {
	return fmt.Sprintf("%s: the %s holds height %d: a snapshot restores into a home with no state (ttld init a new one)", e.Home, e.What, e.Height)
}

// RestoreSnapshot restores a stopped node that has no state from the snapshot at
// height (0: the newest) in its snapshot directory (copied there from another node),
// then bootstraps CometBFT's state at that height: its light client, configured by
// [statesync] (ttld statesync-config), must find that the header after the snapshot
// carries the restored root as its app hash, or nothing of the restore is kept. The
// node then starts from the snapshot's height as if it had state-synced. progress,
// when set, is called after each chunk.
func RestoreSnapshot(ctx context.Context, home string, height int64, progress func(done, total int)) (SnapshotInfo, error) {
	o, err := openOffline(home)
	if err != nil {
		return SnapshotInfo{}, err
	}
	if s := o.cfg.StateSync; s.TrustHeight <= 0 || s.TrustHash == "" || len(s.RPCServers) < 2 {
		o.close()
		return SnapshotInfo{}, ErrStateSyncTrust{Home: o.cfg.RootDir}
	}
	info, err := o.restore(height, progress)
	if cerr := o.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return SnapshotInfo{}, err
	}
	dbs := &cometDBs{}
	err = cmtnode.BootstrapState(ctx, o.cfg, dbs.provider, uint64(info.Manifest.Height), info.Manifest.Root)
	err = errors.Join(err, dbs.closeRest())
	if err == nil {
		return info, nil
	}
	// The light client does not vouch for the restored state: it goes.
	if o, rerr := openOffline(home); rerr == nil {
		err = errors.Join(err, o.store.Reset(), o.close())
	}
	return SnapshotInfo{}, fmt.Errorf("bootstrap CometBFT's state at height %d: %w", info.Manifest.Height, err)
}

// restore imports the snapshot at height (0: the newest) into the empty store.
func (o *offline) restore(height int64, progress func(done, total int)) (SnapshotInfo, error) {
	if v, _ := o.store.LastCommit(); v != 0 {
		return SnapshotInfo{}, ErrNotEmpty{Home: o.cfg.RootDir, Height: v, What: "application store"}
	}
	if height == 0 {
		hs, err := o.files.Heights()
		if err != nil {
			return SnapshotInfo{}, err
		}
		if len(hs) == 0 {
			return SnapshotInfo{}, fmt.Errorf("%s holds no snapshot", o.files.Dir())
		}
		height = hs[0]
	}
	m, err := o.files.Manifest(height)
	if err != nil {
		return SnapshotInfo{}, err
	}
	end, err := o.files.BeginRestore()
	if err != nil {
		return SnapshotInfo{}, err
	}
	defer end()
	// The root is checked against the light client's after the import
	// (RestoreSnapshot), which needs the state in place.
	r, err := snapshot.NewRestorer(o.store, m, m.Root)
	if err != nil {
		return SnapshotInfo{}, err
	}
	var size int64
	for i := range m.Chunks {
		chunk, err := o.files.Chunk(height, uint32(i))
		if err == nil {
			err = r.Apply(uint32(i), chunk)
		}
		if err != nil {
			return SnapshotInfo{}, errors.Join(err, r.Close())
		}
		size += int64(len(chunk))
		if progress != nil {
			progress(i+1, len(m.Chunks))
		}
	}
	return SnapshotInfo{Manifest: m, Bytes: size}, nil
}
