package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ttld-dev/ttld/drive"
)

// Files are the snapshots a node keeps on disk, one folder each under its directory
// (data/snapshots in a node's home): the folder named by the height holds the manifest
// (file "manifest") and the chunks (files "0", "1", ...). A snapshot is written in a
// folder of its own and renamed into place when whole, so a folder with a height for
// name is always a whole snapshot.
//
// One snapshot operation runs at a time in a process: a snapshot taken (Take) or a
// restore (BeginRestore). A Take while another operation runs is an ErrBusy; a
// restore waits for a snapshot being taken to end.
type Files struct {
	dir string
	// mu orders the writes of the directory (a snapshot renamed into place, pruning)
	// against each other.
	mu sync.Mutex

	// opMu guards op, the operation under way ("": none), and opEnded, closed when it
	// ends.
	opMu    sync.Mutex
	op      string
	opEnded chan struct{}
}

// The snapshot operations, as ErrBusy names them.
const (
	opTake    = "a snapshot being taken"
	opRestore = "a restore"
)

// ErrBusy: a snapshot operation asked for while another one runs in the process.
type ErrBusy struct{ Running string }

func (e ErrBusy) Error() string { return "snapshot: " + e.Running + " is under way" }

// begin starts operation op, unless another one runs.
func (f *Files) begin(op string) (end func(), err error) {
	f.opMu.Lock()
	defer f.opMu.Unlock()
	if f.op != "" {
		return nil, ErrBusy{Running: f.op}
	}
	f.op, f.opEnded = op, make(chan struct{})
	ended := f.opEnded
	return func() {
		f.opMu.Lock()
		defer f.opMu.Unlock()
		f.op = ""
		close(ended)
	}, nil
}

// BeginRestore starts a restore, once a snapshot being taken has ended, and returns
// the function that ends it; until then Take refuses to start (ErrBusy). A restore
// under way already is an ErrBusy.
func (f *Files) BeginRestore() (end func(), err error) {
	for {
		end, err := f.begin(opRestore)
		var busy ErrBusy
		if !errors.As(err, &busy) || busy.Running != opTake {
			return end, err
		}
		f.opMu.Lock()
		ended := f.opEnded
		f.opMu.Unlock()
		if ended != nil {
			<-ended
		}
	}
}

// DirName is the folder of a node's snapshots under its data directory.
const DirName = "snapshots"

// manifestFile is a snapshot's manifest in its folder.
const manifestFile = "manifest"

// partialSuffix marks a folder a snapshot is being written in.
const partialSuffix = ".partial"

// OpenFiles opens the snapshot directory dir for the process that takes and restores
// snapshots in it, which it creates if missing, and removes the folders of snapshots a
// stopped process left unfinished.
func OpenFiles(dir string) (*Files, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), partialSuffix) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return nil, fmt.Errorf("snapshot: %w", err)
			}
		}
	}
	return &Files{dir: dir}, nil
}

// ReadFiles opens the snapshot directory dir to read the snapshots in it, changing
// nothing: a snapshot another process is writing there meanwhile is left alone.
func ReadFiles(dir string) *Files { return &Files{dir: dir} }

// Dir is the snapshot directory.
func (f *Files) Dir() string { return f.dir }

// folder is the folder of the snapshot at height.
func (f *Files) folder(height int64) string {
	return filepath.Join(f.dir, strconv.FormatInt(height, 10))
}

// ErrNotFound: no whole snapshot at a height.
type ErrNotFound struct{ Height int64 }

func (e ErrNotFound) Error() string { return fmt.Sprintf("snapshot: none at height %d", e.Height) }

// Take writes a snapshot of saved version height of src, in format Format and chunks
// of about chunkBytes of items (0: DefaultChunkBytes), and returns its manifest and
// size in bytes. A snapshot already kept at height is kept as it is. stop, when it
// returns true, ends the export between two chunks with ErrStopped and leaves nothing.
// While another snapshot operation runs in the process, Take is an ErrBusy.
func (f *Files) Take(src *drive.Store, height int64, chunkBytes int, stop func() bool) (Manifest, int64, error) {
	end, err := f.begin(opTake)
	if err != nil {
		return Manifest{}, 0, err
	}
	defer end()
	if m, err := f.Manifest(height); err == nil {
		size, err := f.Size(height)
		return m, size, err
	}
	tmp, err := os.MkdirTemp(f.dir, strconv.FormatInt(height, 10)+"-*"+partialSuffix)
	if err != nil {
		return Manifest{}, 0, fmt.Errorf("snapshot: %w", err)
	}
	defer os.RemoveAll(tmp)
	var size int64
	m, err := Export(src, height, chunkBytes, func(index uint32, chunk []byte) error {
		if stop != nil && stop() {
			return ErrStopped{}
		}
		size += int64(len(chunk))
		return writeFile(filepath.Join(tmp, strconv.FormatUint(uint64(index), 10)), chunk)
	})
	if err != nil {
		return Manifest{}, 0, err
	}
	if err := writeFile(filepath.Join(tmp, manifestFile), m.Encode()); err != nil {
		return Manifest{}, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := os.Rename(tmp, f.folder(height)); err != nil {
		return Manifest{}, 0, fmt.Errorf("snapshot: %w", err)
	}
	return m, size, nil
}

// ErrStopped: a snapshot stopped before its end (the node stops).
type ErrStopped struct{}

func (ErrStopped) Error() string { return "snapshot: stopped" }

// writeFile writes b to a new file at path and syncs it.
func writeFile(path string, b []byte) error {
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	_, err = fh.Write(b)
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

// Heights are the heights of the whole snapshots kept, newest first (none when the
// directory does not exist).
func (f *Files) Heights() ([]int64, error) {
	entries, err := os.ReadDir(f.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	var hs []int64
	for _, e := range entries {
		if h, err := strconv.ParseInt(e.Name(), 10, 64); err == nil && e.IsDir() && h > 0 && e.Name() == strconv.FormatInt(h, 10) {
			hs = append(hs, h)
		}
	}
	slices.Sort(hs)
	slices.Reverse(hs)
	return hs, nil
}

// Manifest reads the manifest of the snapshot at height.
func (f *Files) Manifest(height int64) (Manifest, error) {
	b, err := os.ReadFile(filepath.Join(f.folder(height), manifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Manifest{}, ErrNotFound{height}
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("snapshot: %w", err)
	}
	m, err := DecodeManifest(b)
	if err != nil {
		return Manifest{}, err
	}
	if m.Height != height {
		return Manifest{}, ErrManifest{fmt.Sprintf("height %d in the folder of height %d", m.Height, height)}
	}
	return m, nil
}

// Chunk reads chunk index of the snapshot at height.
func (f *Files) Chunk(height int64, index uint32) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(f.folder(height), strconv.FormatUint(uint64(index), 10)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound{height}
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	return b, nil
}

// Size is the bytes of the chunks of the snapshot at height.
func (f *Files) Size(height int64) (int64, error) {
	entries, err := os.ReadDir(f.folder(height))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, ErrNotFound{height}
	}
	if err != nil {
		return 0, fmt.Errorf("snapshot: %w", err)
	}
	var size int64
	for _, e := range entries {
		if e.Name() == manifestFile {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return 0, fmt.Errorf("snapshot: %w", err)
		}
		size += info.Size()
	}
	return size, nil
}

// Prune deletes all but the keep newest snapshots and returns the heights deleted.
func (f *Files) Prune(keep int) ([]int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	hs, err := f.Heights()
	if err != nil || len(hs) <= keep {
		return nil, err
	}
	gone := hs[keep:]
	for _, h := range gone {
		if err := os.RemoveAll(f.folder(h)); err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
	}
	return gone, nil
}
