package snapshot

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ttld-dev/ttld/drive"
)

// Scheduler takes a snapshot of every saved version whose height is a multiple of its
// interval, on a goroutine of its own while blocks go on (drive.Store.Export), and keeps
// the newest few.
type Scheduler struct {
	src        *drive.Store
	files      *Files
	interval   int64
	keep       int
	chunkBytes int
	done       func(Taken)

	running atomic.Bool
	// mu orders Committed's start of a snapshot with Close: a snapshot is counted in
	// wg before Close sets stopped, or never starts. stopped is also read, without mu,
	// between the chunks of a snapshot being taken.
	mu      sync.Mutex
	stopped atomic.Bool
	wg      sync.WaitGroup
}

// Taken reports one snapshot the scheduler took, or failed or skipped.
type Taken struct {
	Height   int64
	Manifest Manifest
	// Bytes is the size of its chunks.
	Bytes    int64
	Duration time.Duration
	// Pruned are the heights of the snapshots deleted after it.
	Pruned []int64
	Err    error
	// Skipped: another snapshot operation was under way, so this one was not taken:
	// the snapshot before it, still being taken (Err nil), or a restore (Err an
	// ErrBusy).
	Skipped bool
}

// NewScheduler takes a snapshot of src every interval heights (> 0) into files,
// keeping the keep newest (> 0), each in chunks of about chunkBytes (0:
// DefaultChunkBytes), and calls done, on the snapshot's goroutine, with each outcome.
func NewScheduler(src *drive.Store, files *Files, interval int64, keep, chunkBytes int, done func(Taken)) *Scheduler {
	return &Scheduler{src: src, files: files, interval: interval, keep: keep, chunkBytes: chunkBytes, done: done}
}

// Committed tells the scheduler that height was saved. It returns at once: a snapshot
// due at height runs in the background, unless the one before still runs or a restore
// is under way (Files: one snapshot operation at a time).
func (s *Scheduler) Committed(height int64) {
	if s.interval <= 0 || height%s.interval != 0 {
		return
	}
	s.mu.Lock()
	if s.stopped.Load() {
		s.mu.Unlock()
		return
	}
	if !s.running.CompareAndSwap(false, true) {
		s.mu.Unlock()
		s.done(Taken{Height: height, Skipped: true})
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer s.running.Store(false)
		start := time.Now()
		t := Taken{Height: height}
		t.Manifest, t.Bytes, t.Err = s.files.Take(s.src, height, s.chunkBytes, s.stopped.Load)
		t.Duration = time.Since(start)
		t.Skipped = errors.As(t.Err, new(ErrBusy))
		if t.Err == nil {
			t.Pruned, t.Err = s.files.Prune(s.keep)
		}
		s.done(t)
	}()
}

// Wait waits for the snapshot in progress, if any, to end.
func (s *Scheduler) Wait() { s.wg.Wait() }

// Close stops a snapshot in progress between two chunks (it leaves nothing) and waits
// for its goroutine: after Close nothing reads the store for it.
func (s *Scheduler) Close() {
	s.mu.Lock()
	s.stopped.Store(true)
	s.mu.Unlock()
	s.wg.Wait()
}
