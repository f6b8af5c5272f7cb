package sim

import (
	"encoding/hex"
	"fmt"
	"strings"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// CheckRemovals checks the removal records block fb wrote at block time atMs, from the
// state before it and the state after it: every moderator's deletion that kept a record
// left one, unless a later restore of the block took it, holding the hash its event
// names and the block's time; and where no other action of the block touched the
// document, that hash is the document's as the state before the block stored it: the
// record pins the document it removed. It returns how many hashes it compared with the
// stored document.
func CheckRemovals(before, after drive.KV, fb *abcitypes.ResponseFinalizeBlock, atMs uint64) (int, error) {
	type doc struct{ contract, id string }
	type deletion struct {
		doc
		typ, hash string
		tx        int
	}
	touched := map[doc]int{}
	restoredAfter := map[doc]int{} // the last tx that restored the document
	var deletions []deletion
	for i, tr := range fb.TxResults {
		if tr.Code != 0 {
			continue
		}
		for _, e := range tr.Events {
			attrs := map[string]string{}
			for _, a := range e.Attributes {
				attrs[a.Key] = a.Value
			}
			d := doc{attrs[protocol.AttrContract], attrs[protocol.AttrID]}
			switch e.Type {
			case protocol.EventDocumentAction(protocol.ActionModerateDelete):
				if attrs[protocol.AttrRecord] == "true" {
					deletions = append(deletions, deletion{doc: d, typ: attrs[protocol.AttrType], hash: attrs[protocol.AttrDocumentHash], tx: i})
				}
			case protocol.EventDocumentAction(protocol.ActionRestore):
				restoredAfter[d] = i
			}
			if strings.HasPrefix(e.Type, protocol.EventDocumentPrefix) {
				touched[d]++
			}
		}
	}
	v, err := drive.GetProtocolVersion(after)
	if err != nil {
		return 0, err
	}
	compared := 0
	for _, del := range deletions {
		c, err := protocol.ParseContractID(del.contract)
		if err != nil {
			return compared, fmt.Errorf("a moderator's deletion names contract %q: %v", del.contract, err)
		}
		id, err := protocol.ParseDocumentID(del.id)
		if err != nil {
			return compared, fmt.Errorf("a moderator's deletion names document %q: %v", del.id, err)
		}
		if at, ok := restoredAfter[del.doc]; !ok || at < del.tx {
			r, found, err := drive.GetRemoval(after, c, del.typ, id)
			if err != nil {
				return compared, err
			}
			if !found {
				return compared, fmt.Errorf("the moderator's deletion of %s in tx %d kept no removal record", del.id, del.tx)
			}
			if hex.EncodeToString(r.DocumentHash[:]) != del.hash || r.AtMs != atMs {
				return compared, fmt.Errorf("the removal record of %s holds hash %x at %d, its deletion's event %s at %d", del.id, r.DocumentHash, r.AtMs, del.hash, atMs)
			}
		}
		if touched[del.doc] != 1 {
			continue // another action of the block wrote the document first
		}
		ct, ok, err := drive.GetContract(before, c, v)
		if err != nil || !ok {
			return compared, fmt.Errorf("the contract of a moderated document before the block: found %v, %v", ok, err)
		}
		dt, _ := ct.DocumentType(del.typ)
		sd, found, err := drive.GetDocument(before, drive.DocumentType{Contract: c, DocumentType: dt}, id)
		if err != nil {
			return compared, err
		}
		if !found {
			return compared, fmt.Errorf("a moderator deleted %s, which the state before the block did not hold", del.id)
		}
		if h := protocol.DocumentHash(sd.Encode(dt)); hex.EncodeToString(h[:]) != del.hash {
			return compared, fmt.Errorf("the removal record of %s pins hash %s, the document it removed hashes to %x", del.id, del.hash, h)
		}
		compared++
	}
	return compared, nil
}
