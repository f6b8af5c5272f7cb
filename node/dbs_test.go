package node

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	cmtdb "github.com/cometbft/cometbft-db"
	"github.com/cometbft/cometbft/config"
)

// openCometDB opens database id under a new home's data/ through dbs, as CometBFT's
// node does.
func openCometDB(t *testing.T, dbs *cometDBs, home, id string) cmtdb.DB {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.SetRoot(home)
	db, err := dbs.provider(&config.DBContext{ID: id, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestCometDBReadAfterCometBFTClosesIt: CometBFT's node closes its block store in its
// OnStop while goroutines of its own (the consensus reactor's gossip with a peer that
// catches up) still read it, and panics on the error a closed database returns. A
// database the provider opened still answers after CometBFT's Close; the node's own
// close releases it, so the home opens again in the same process.
func TestCometDBReadAfterCometBFTClosesIt(t *testing.T) {
	home := t.TempDir()
	dbs := &cometDBs{}
	db := openCometDB(t, dbs, home, "blockstore")
	if err := db.Set([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil { // CometBFT's node.OnStop
		t.Fatal(err)
	}
	got, err := db.Get([]byte("k"))
	if err != nil || !bytes.Equal(got, []byte("v")) {
		t.Fatalf("a read after CometBFT's Close: %q, %v; want the value", got, err)
	}
	if err := dbs.closeRest(); err != nil {
		t.Fatal(err)
	}
	again := openCometDB(t, &cometDBs{}, home, "blockstore")
	if got, err := again.Get([]byte("k")); err != nil || !bytes.Equal(got, []byte("v")) {
		t.Fatalf("reopened: %q, %v", got, err)
	}
	again.Close()
}

// TestCometDBCloseWaitsForIterator: an iterator open when the node closes the databases
// reads to its end; the close waits for it, then releases the database.
func TestCometDBCloseWaitsForIterator(t *testing.T) {
	home := t.TempDir()
	dbs := &cometDBs{}
	db := openCometDB(t, dbs, home, "tx_index")
	keys := []string{"a", "b", "c"}
	for _, k := range keys {
		if err := db.Set([]byte(k), []byte("value of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	it, err := db.Iterator(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- dbs.closeRest() }()
	select {
	case <-dbs.gate.signalOf(&dbs.gate.draining):
	case err := <-closed:
		t.Fatalf("the close returned (%v) while an iterator was open", err)
	}
	var got []string
	for ; it.Valid(); it.Next() {
		if want := "value of " + string(it.Key()); string(it.Value()) != want {
			t.Fatalf("%s = %q, want %q", it.Key(), it.Value(), want)
		}
		got = append(got, string(it.Key()))
	}
	if err := it.Error(); err != nil || len(got) != len(keys) {
		t.Fatalf("iterated %v, %v; want %v", got, err, keys)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	openCometDB(t, &cometDBs{}, home, "tx_index").Close()
}

// TestCometDBAfterCloseWaits: an operation that comes after the node closed the
// databases neither returns an error, on which CometBFT panics, nor reaches the closed
// database: it waits for good.
func TestCometDBAfterCloseWaits(t *testing.T) {
	dbs := &cometDBs{}
	db := openCometDB(t, dbs, t.TempDir(), "blockstore")
	if err := dbs.closeRest(); err != nil {
		t.Fatal(err)
	}
	if err := dbs.closeRest(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	parked := dbs.gate.signalOf(&dbs.gate.parking)
	read := make(chan error, 1)
	go func() {
		_, err := db.Get([]byte("k"))
		read <- err
	}()
	select {
	case <-parked:
	case err := <-read:
		t.Fatalf("a read after the close returned (%v)", err)
	}
}

// TestCometDBAfterCloseFailsAnHTTPRequest: an operation after the close on a goroutine
// that serves an HTTP request (the RPC server answers keep-alive connections after its
// node stopped) fails with errStopped, which ends that request alone, and its client
// is answered rather than kept waiting.
func TestCometDBAfterCloseFailsAnHTTPRequest(t *testing.T) {
	dbs := &cometDBs{}
	db := openCometDB(t, dbs, t.TempDir(), "blockstore")
	if err := dbs.closeRest(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if _, err := db.Get([]byte("k")); !errors.Is(err, errStopped) {
			t.Errorf("a read on an HTTP request after the close: %v, want errStopped", err)
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d", res.StatusCode)
	}
}
