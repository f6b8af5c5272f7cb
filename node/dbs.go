package node

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	cmtdb "github.com/cometbft/cometbft-db"
	"github.com/cometbft/cometbft/config"
)

// cometDBs opens CometBFT's databases and remembers them.
//
// NB: CometBFT v0.38 closes its block, state and evidence stores on stop but never the
// transaction index database, whose goleveldb file lock then makes a second start in
// the same process fail. closeRest closes whatever CometBFT left open.
type cometDBs struct {
	mu  sync.Mutex
	dbs []*trackedDB
}

// provider is a config.DBProvider that opens databases as config.DefaultDBProvider does.
func (c *cometDBs) provider(ctx *config.DBContext) (cmtdb.DB, error) {
	db, err := config.DefaultDBProvider(ctx)
	if err != nil {
		return nil, CorruptOnOpen(filepath.Join(ctx.Config.DBDir(), ctx.ID+".db"), err)
	}
	t := &trackedDB{DB: db, name: ctx.ID}
	c.mu.Lock()
	c.dbs = append(c.dbs, t)
	c.mu.Unlock()
	return t, nil
}

// closeRest closes every database CometBFT has not closed itself.
func (c *cometDBs) closeRest() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, db := range c.dbs {
		if err := db.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close %s db: %w", db.name, err))
		}
	}
	return errors.Join(errs...)
}

// trackedDB is a database whose Close runs once; later calls return nil.
type trackedDB struct {
	cmtdb.DB
	name string

	once sync.Once
	err  error
}

func (t *trackedDB) Close() error {
	t.once.Do(func() { t.err = t.DB.Close() })
	return t.err
}
