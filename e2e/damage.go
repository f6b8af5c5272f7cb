package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/syndtr/goleveldb/leveldb"
)

// CopyHome copies a stopped node's home, so that a test can damage its own copy.
func CopyHome(t testing.TB, home string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "home")
	if err := os.CopyFS(dst, os.DirFS(home)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// PutRecord overwrites one record of a CometBFT database (db: "blockstore", "state")
// in home's data directory: how tests damage a store.
func PutRecord(t testing.TB, home, db, key string, value []byte) {
	t.Helper()
	ldb, err := leveldb.OpenFile(filepath.Join(home, "data", db+".db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ldb.Close()
	if err := ldb.Put([]byte(key), value, nil); err != nil {
		t.Fatal(err)
	}
}
