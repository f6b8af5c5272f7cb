package sim

import (
	"errors"
	"sync"

	dbm "github.com/cosmos/cosmos-db"
)

// ErrCrashed is what every write returns once a CrashDB has crashed.
var ErrCrashed = errors.New("sim: the process crashed here")

// CrashDB wraps a database so a test can kill the application between two writes: once
// armed with CrashAfter(n), n more writes land (a batch is one write) and every later
// one fails, as if the process had died there. The writes before the crash stay in the
// wrapped database, which the test reopens as a restarted node would. The hook is
// controlled by the test alone: no environment, no clock.
type CrashDB struct {
	dbm.DB

	mu        sync.Mutex
	armed     bool
	remaining int
	crashed   bool
}

// NewCrashDB wraps db; it does not crash until armed.
func NewCrashDB(db dbm.DB) *CrashDB { return &CrashDB{DB: db} }

// CrashAfter arms the crash: n more writes succeed, then all fail.
func (c *CrashDB) CrashAfter(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed, c.remaining = true, n
}

// Crashed reports whether a write has failed.
func (c *CrashDB) Crashed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.crashed
}

// write decides whether one more write may land.
func (c *CrashDB) write() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return ErrCrashed
	}
	if c.armed {
		if c.remaining == 0 {
			c.crashed = true
			return ErrCrashed
		}
		c.remaining--
	}
	return nil
}

func (c *CrashDB) Set(k, v []byte) error {
	if err := c.write(); err != nil {
		return err
	}
	return c.DB.Set(k, v)
}

func (c *CrashDB) SetSync(k, v []byte) error {
	if err := c.write(); err != nil {
		return err
	}
	return c.DB.SetSync(k, v)
}

func (c *CrashDB) Delete(k []byte) error {
	if err := c.write(); err != nil {
		return err
	}
	return c.DB.Delete(k)
}

func (c *CrashDB) DeleteSync(k []byte) error {
	if err := c.write(); err != nil {
		return err
	}
	return c.DB.DeleteSync(k)
}

func (c *CrashDB) NewBatch() dbm.Batch { return &crashBatch{Batch: c.DB.NewBatch(), db: c} }

func (c *CrashDB) NewBatchWithSize(n int) dbm.Batch {
	return &crashBatch{Batch: c.DB.NewBatchWithSize(n), db: c}
}

// crashBatch lands whole or not at all, like a leveldb batch.
type crashBatch struct {
	dbm.Batch
	db *CrashDB
}

func (b *crashBatch) Write() error {
	if err := b.db.write(); err != nil {
		return err
	}
	return b.Batch.Write()
}

func (b *crashBatch) WriteSync() error {
	if err := b.db.write(); err != nil {
		return err
	}
	return b.Batch.WriteSync()
}
