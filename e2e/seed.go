package e2e

import (
	"crypto/ed25519"
	"encoding/json"
	"testing"

	"github.com/ttld-dev/ttld/protocol"
)

// NoteDefinition is a contract of one type, "note": a text of up to 63 bytes, indexed
// and counted, that lives two minutes (a chain of StartNodeShortTTL with a minimum of
// 120 s or less takes its ttl).
const NoteDefinition = `{"documentSchemas":{"note":{"type":"object","ttl":120,` +
	`"properties":{"text":{"type":"string","maxLength":63,"position":0}},"required":["$createdAt","text"],"additionalProperties":false,` +
	`"indices":[{"name":"byText","properties":[{"text":"asc"}],"countable":true}]}}}`

// Note is what SeedNote wrote: an identity, its NoteDefinition contract, one note of it
// and the height of the block that created the note.
type Note struct {
	Identity protocol.IdentityID
	Contract protocol.ContractID
	Document protocol.DocumentID
	Height   int64
}

// SeedNote creates an identity funded from the dev key, registers NoteDefinition under
// it and writes one note of text, each committed.
func (e *Env) SeedNote(t testing.TB, text string) Note {
	t.Helper()
	create := &protocol.IdentityCreate{PubKey: e.Dev.Pub, Amount: 1_000_000_000, Keys: []ed25519.PublicKey{e.Dev.Pub}}
	e.Commit(t, create)
	n := Note{Identity: protocol.NewIdentityID(e.Dev.Address(), create.Nonce)}
	contract := &protocol.DataContractCreate{Identity: n.Identity, Definition: []byte(NoteDefinition)}
	e.Commit(t, contract)
	n.Contract = contract.ContractID()
	data, err := json.Marshal(map[string]string{"text": text})
	if err != nil {
		t.Fatal(err)
	}
	b := &protocol.DocumentsBatch{Identity: n.Identity, Contract: n.Contract, Actions: []protocol.DocumentAction{
		{Kind: protocol.ActionCreate, Type: "note", Entropy: [32]byte{7}, Data: data},
	}}
	b.Actions[0].ID = b.CreateID(b.Actions[0])
	n.Document = b.Actions[0].ID
	n.Height = e.Commit(t, b)
	return n
}
