package node

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	cmtdb "github.com/cometbft/cometbft-db"
	"github.com/cometbft/cometbft/config"
)

// cometDBs opens CometBFT's databases (block store, state store, evidence, transaction
// index) behind its gate, and closes them once the gate is closed. The zero value is
// ready to use.
//
// NB: CometBFT v0.38 closes its block, state and evidence stores in its node's OnStop
// while goroutines of its own may still read them (gate), and never closes the
// transaction index database, whose goleveldb file lock would then make a second start
// in the same process fail. So CometBFT's Close leaves a database open, and closeRest
// closes them all, after CometBFT has stopped and its last operations have finished.
type cometDBs struct {
	// gate also admits CometBFT's calls to the application (gatedClients).
	gate gate

	mu  sync.Mutex
	dbs []*gatedDB
}

// provider is a config.DBProvider that opens databases as config.DefaultDBProvider does.
func (c *cometDBs) provider(ctx *config.DBContext) (cmtdb.DB, error) {
	db, err := config.DefaultDBProvider(ctx)
	if err != nil {
		return nil, CorruptOnOpen(filepath.Join(ctx.Config.DBDir(), ctx.ID+".db"), err)
	}
	g := &gatedDB{db: db, gate: &c.gate, name: ctx.ID}
	c.mu.Lock()
	c.dbs = append(c.dbs, g)
	c.mu.Unlock()
	return g, nil
}

// closeRest closes what CometBFT's Close leaves open: it closes the gate, waiting for
// the operations in flight, then every database. Later calls return nil.
func (c *cometDBs) closeRest() error {
	return c.gate.close(func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		var errs []error
		for _, db := range c.dbs {
			if err := db.db.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close %s db: %w", db.name, err))
			}
		}
		return errors.Join(errs...)
	})
}

// gatedDB is a database of CometBFT's whose every operation passes its gate, and whose
// Close, CometBFT's, leaves it open: cometDBs.closeRest closes it.
type gatedDB struct {
	db   cmtdb.DB
	gate *gate
	name string
}

var _ cmtdb.DB = (*gatedDB)(nil)

func (d *gatedDB) Get(key []byte) ([]byte, error) {
	if err := d.gate.enter(); err != nil {
		return nil, err
	}
	defer d.gate.leave()
	return d.db.Get(key)
}

func (d *gatedDB) Has(key []byte) (bool, error) {
	if err := d.gate.enter(); err != nil {
		return false, err
	}
	defer d.gate.leave()
	return d.db.Has(key)
}

func (d *gatedDB) Set(key, value []byte) error {
	if err := d.gate.enter(); err != nil {
		return err
	}
	defer d.gate.leave()
	return d.db.Set(key, value)
}

func (d *gatedDB) SetSync(key, value []byte) error {
	if err := d.gate.enter(); err != nil {
		return err
	}
	defer d.gate.leave()
	return d.db.SetSync(key, value)
}

func (d *gatedDB) Delete(key []byte) error {
	if err := d.gate.enter(); err != nil {
		return err
	}
	defer d.gate.leave()
	return d.db.Delete(key)
}

func (d *gatedDB) DeleteSync(key []byte) error {
	if err := d.gate.enter(); err != nil {
		return err
	}
	defer d.gate.leave()
	return d.db.DeleteSync(key)
}

// Iterator's iterator is in flight until it is closed.
func (d *gatedDB) Iterator(start, end []byte) (cmtdb.Iterator, error) {
	if err := d.gate.enter(); err != nil {
		return nil, err
	}
	it, err := d.db.Iterator(start, end)
	if err != nil {
		d.gate.leave()
		return nil, err
	}
	return &gatedIterator{Iterator: it, gate: d.gate}, nil
}

// ReverseIterator's iterator is in flight until it is closed.
func (d *gatedDB) ReverseIterator(start, end []byte) (cmtdb.Iterator, error) {
	if err := d.gate.enter(); err != nil {
		return nil, err
	}
	it, err := d.db.ReverseIterator(start, end)
	if err != nil {
		d.gate.leave()
		return nil, err
	}
	return &gatedIterator{Iterator: it, gate: d.gate}, nil
}

// Close is CometBFT's: the database stays open for the goroutines of CometBFT's that
// still read it, until cometDBs.closeRest.
func (d *gatedDB) Close() error { return nil }

// NewBatch's batch writes through the gate; filling it touches no database.
func (d *gatedDB) NewBatch() cmtdb.Batch {
	return gatedBatch{Batch: d.db.NewBatch(), gate: d.gate}
}

func (d *gatedDB) Print() error {
	if err := d.gate.enter(); err != nil {
		return err
	}
	defer d.gate.leave()
	return d.db.Print()
}

func (d *gatedDB) Stats() map[string]string {
	if err := d.gate.enter(); err != nil {
		return nil
	}
	defer d.gate.leave()
	return d.db.Stats()
}

func (d *gatedDB) Compact(start, end []byte) error {
	if err := d.gate.enter(); err != nil {
		return err
	}
	defer d.gate.leave()
	return d.db.Compact(start, end)
}

// gatedIterator holds its place in the gate from its opening to its Close.
type gatedIterator struct {
	cmtdb.Iterator
	gate *gate
	once sync.Once
}

func (it *gatedIterator) Close() error {
	err := it.Iterator.Close()
	it.once.Do(it.gate.leave)
	return err
}

type gatedBatch struct {
	cmtdb.Batch
	gate *gate
}

func (b gatedBatch) Write() error {
	if err := b.gate.enter(); err != nil {
		return err
	}
	defer b.gate.leave()
	return b.Batch.Write()
}

func (b gatedBatch) WriteSync() error {
	if err := b.gate.enter(); err != nil {
		return err
	}
	defer b.gate.leave()
	return b.Batch.WriteSync()
}
