package main

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rpchttp "github.com/cometbft/cometbft/rpc/client/http"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web"
)

// TestCheckProof: a document's proof bundle from the web view checks offline against
// the home's genesis validator set, and one with a byte of its answer changed fails.
func TestCheckProof(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	c := cli{t: t, env: env}
	var tx txOutput
	id := c.newIdentity()
	if err := c.json(&tx, "tx", "contract", "create", "../../docs/examples/note.json", "--identity", id, "--from", "dev", "--commit"); err != nil || tx.Code != 0 {
		t.Fatalf("contract create: %+v %v", tx, err)
	}
	contract := tx.Contract
	if err := c.json(&tx, "tx", "document", "create", contract, "note", `{"text":"proven"}`, "--identity", id, "--from", "dev", "--commit"); err != nil || tx.Code != 0 {
		t.Fatalf("document create: %+v %v", tx, err)
	}
	// The view proves the newest state whose next header exists: the document's block
	// must be followed by another.
	if _, err := env.Client.WaitForHeight(context.Background(), tx.Height+1); err != nil {
		t.Fatal(err)
	}
	rpc, err := rpchttp.New(env.RPC, "/websocket")
	if err != nil {
		t.Fatal(err)
	}
	s, err := web.New(rpc, web.Options{Trusted: env.Trusted})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	cid, _ := protocol.ParseContractID(contract)
	did, _ := protocol.ParseDocumentID(tx.Document)
	res, err := http.Get(srv.URL + "/proof?path=/document&data=" + hex.EncodeToString(proofs.DocumentData(cid, "note", did)))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("bundle: %d %v", res.StatusCode, err)
	}
	file := filepath.Join(t.TempDir(), "proof.json")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	var out checkProofJSON
	if err := c.json(&out, "check-proof", file); err != nil || out.Verified != "presence" {
		t.Fatalf("check-proof: %+v %v", out, err)
	}
	// The answer's value is base64 in the bundle: change one of its characters.
	i := strings.Index(string(raw), `"value":"`) + len(`"value":"`) + 20
	bad := []byte(string(raw))
	if bad[i] == 'A' {
		bad[i] = 'B'
	} else {
		bad[i] = 'A'
	}
	if err := os.WriteFile(file, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = c.run("check-proof", file)
	var ve errVerification
	if !errors.As(err, &ve) {
		t.Fatalf("a changed bundle: %v", err)
	}
}
