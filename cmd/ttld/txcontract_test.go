package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ttld-dev/ttld/e2e"
	"github.com/ttld-dev/ttld/node"
	"github.com/ttld-dev/ttld/protocol"
)

// TestContractCommands: an identity registers docs/examples/note.json, reads it back
// proven, updates it with a second type and is refused a version it skips.
func TestContractCommands(t *testing.T) {
	t.Parallel()
	env := e2e.StartNode(t)
	c := cli{t: t, env: env}

	var created txOutput
	if err := c.json(&created, "tx", "identity", "create", "--from", node.DevKeyName, "--amount", "1000000000", "--commit"); err != nil || created.Code != 0 {
		t.Fatalf("identity create: %+v %v", created, err)
	}
	owner := created.Identity

	var tx txOutput
	if err := c.json(&tx, "tx", "contract", "create", "../../docs/examples/note.json", "--identity", owner, "--from", node.DevKeyName, "--commit"); err != nil || tx.Code != 0 {
		t.Fatalf("contract create: %+v %v", tx, err)
	}
	ownerID, err := protocol.ParseIdentityID(owner)
	if err != nil {
		t.Fatal(err)
	}
	id := protocol.NewContractID(ownerID, tx.Nonce)
	if tx.Contract != id.String() || tx.Fee == nil || *tx.Fee < 27000*200 {
		t.Fatalf("contract create: %+v, want contract %s and a storage fee", tx, id)
	}

	type verified struct {
		Answer   contractJSON `json:"answer"`
		Verified string       `json:"verified"`
	}
	var q verified
	if err := c.json(&q, "query", "contract", id.String(), "--prove"); err != nil {
		t.Fatal(err)
	}
	var schemas struct {
		DocumentSchemas map[string]json.RawMessage `json:"documentSchemas"`
	}
	if err := json.Unmarshal(q.Answer.DocumentTypes, &schemas); err != nil {
		t.Fatal(err)
	}
	if q.Verified != "presence" || q.Answer.Owner != owner || q.Answer.Version != 1 || len(schemas.DocumentSchemas) != 1 || schemas.DocumentSchemas["note"] == nil {
		t.Fatalf("query contract --prove: %+v", q)
	}

	// An update adding the story type: the version is read from the node.
	both := filepath.Join(t.TempDir(), "both.json")
	def := `{"documentSchemas":{"note":{"type":"object","properties":{"text":{"type":"string","maxLength":280,"position":0}},"required":["$createdAt","text"],"additionalProperties":false},
	"story":{"type":"object","properties":{"caption":{"type":"string","maxLength":200,"position":0}},"additionalProperties":false}}}`
	if err := os.WriteFile(both, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.json(&tx, "tx", "contract", "update", id.String(), both, "--identity", owner, "--from", node.DevKeyName, "--commit"); err != nil || tx.Code != 0 || tx.Contract != id.String() {
		t.Fatalf("contract update: %+v %v", tx, err)
	}
	if err := c.json(&q, "query", "contract", id.String(), "--prove"); err != nil {
		t.Fatal(err)
	}
	schemas.DocumentSchemas = nil
	if err := json.Unmarshal(q.Answer.DocumentTypes, &schemas); err != nil || q.Answer.Version != 2 || len(schemas.DocumentSchemas) != 2 {
		t.Fatalf("query contract after the update: %+v %v", q, err)
	}

	// A skipped version is a paid refusal: CheckTx refuses it before any block.
	err = c.json(&tx, "tx", "contract", "update", id.String(), both, "--identity", owner, "--from", node.DevKeyName, "--version", "5", "--commit")
	var re errRefused
	if !errors.As(err, &re) || re.Code != protocol.CodeInvalidDataContractVersion {
		t.Fatalf("update to version 5: %+v %v", tx, err)
	}

	// An unknown contract reads as a verified absence.
	var absent verified
	if err := c.json(&absent, "query", "contract", protocol.ContractID{1}.String(), "--prove"); err != nil || absent.Verified != "absence" || absent.Answer.Present {
		t.Fatalf("query of an unknown contract: %+v %v", absent, err)
	}
}
