package load

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/protocol"
)

// DocumentType is the type the document workloads create.
const DocumentType = "post"

// DocumentDataBytes is the size of every document's data (its JSON values).
const DocumentDataBytes = 200

// DocumentTTLSeconds is the ttl of DocumentsTTL's type: an hour, the protocol's
// minimum, so the run pays the cheapest lifetime tier and nothing expires during it.
const DocumentTTLSeconds = 3600

// DocumentsContract is the definition Setup registers for a document workload: one
// type, "post", of three string properties and two indexes (by tag and creation time,
// by title), with a ttl for DocumentsTTL.
func DocumentsContract(w Workload) []byte {
	ttl := ""
	if w == DocumentsTTL {
		ttl = fmt.Sprintf(`"ttl":%d,`, DocumentTTLSeconds)
	}
	return []byte(`{"documentSchemas":{"` + DocumentType + `":{"type":"object",` + ttl + `"properties":{` +
		`"title":{"type":"string","maxLength":63,"position":0},` +
		`"tag":{"type":"string","maxLength":32,"position":1},` +
		`"body":{"type":"string","maxLength":256,"position":2}},` +
		`"required":["$createdAt","title","tag","body"],"additionalProperties":false,` +
		`"indices":[{"name":"byTag","properties":[{"tag":"asc"},{"$createdAt":"desc"}]},{"name":"byTitle","properties":[{"title":"asc"}]}]}}}`)
}

// documentTags is how many distinct tags the documents spread over.
const documentTags = 16

// documentBody fills a document's data up to DocumentDataBytes.
var documentBody = strings.Repeat("lorem ipsum dolor sit amet ", 10)

// documentCreate is the documents batch that creates signer s's document with nonce
// n: its entropy is sha256(run || identity || n), so every create of every run makes
// a new document id; its title is the entropy's first 16 bytes in hex.
func documentCreate(contract protocol.ContractID, run RunID, s Signer, n uint64) *protocol.DocumentsBatch {
	h := sha256.New()
	h.Write(run[:])
	h.Write(s.Identity[:])
	h.Write(binary.BigEndian.AppendUint64(nil, n))
	var entropy [32]byte
	copy(entropy[:], h.Sum(nil))
	return &protocol.DocumentsBatch{
		Identity: s.Identity,
		Nonce:    n,
		Contract: contract,
		Actions: []protocol.DocumentAction{{
			Kind: protocol.ActionCreate, Type: DocumentType, Entropy: entropy,
			Data: documentData(hex.EncodeToString(entropy[:16]), fmt.Sprintf("tag-%02d", n%documentTags)),
		}},
	}
}

// documentData is the JSON of a document with title and tag, its body padded so that
// the whole is DocumentDataBytes (for a 32-character title and a 6-character tag).
func documentData(title, tag string) []byte {
	head := `{"title":"` + title + `","tag":"` + tag + `","body":"`
	const tail = `"}`
	return []byte(head + documentBody[:DocumentDataBytes-len(head)-len(tail)] + tail)
}

// Setup registers the contract of document workload w, owned by owner's identity,
// through c (broadcast_tx_commit), and returns its id.
func Setup(ctx context.Context, c *client.Client, owner Signer, w Workload) (protocol.ContractID, error) {
	if !w.documents() {
		return protocol.ContractID{}, fmt.Errorf("load: workload %s needs no contract", w)
	}
	t := &protocol.DataContractCreate{Identity: owner.Identity, Definition: DocumentsContract(w)}
	tx, err := c.Sign(ctx, t, owner.Key)
	if err != nil {
		return protocol.ContractID{}, fmt.Errorf("load: sign the %s contract: %w", w, err)
	}
	res, err := c.Broadcast(ctx, tx, true)
	if err != nil {
		return protocol.ContractID{}, fmt.Errorf("load: register the %s contract: %w", w, err)
	}
	if res.Refused() {
		return protocol.ContractID{}, fmt.Errorf("load: the %s contract was refused with code %d: %s", w, res.Code, res.Log)
	}
	return t.ContractID(), nil
}
