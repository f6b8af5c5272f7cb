package abci

import (
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/sim/invariants"
)

// documentsBatch builds a documents batch from the action words of a scenario line:
//
//	create:TYPE:NAME:JSON            the entropy is sha256(NAME); the id is kept as NAME
//	replace:TYPE:NAME:REVISION:JSON
//	delete:TYPE:NAME
//	transfer:TYPE:NAME:REVISION:TO
//	purchase:TYPE:NAME:REVISION:PRICE
//	set-price:TYPE:NAME:REVISION:PRICE
//	renew:TYPE:NAME:REVISION
//	moderate-delete:TYPE:NAME:REASON  the reason has no spaces
//	restore:TYPE:NAME:HEIGHT[:flip]   the document as the state saved at HEIGHT held it
//	                                  (flip: with its last byte changed)
//
// JSON has no spaces. NAME may be a document id in hex.
func (h *harness) documentsBatch(words []string, m map[string]string) protocol.Transition {
	b := &protocol.DocumentsBatch{Identity: h.identity(m["identity"]), Nonce: h.u64(m, "nonce"), Contract: h.contracts[m["contract"]]}
	if m["key"] != "" {
		b.KeyIndex = uint8(h.u64(m, "key"))
	}
	for _, w := range words {
		if strings.Contains(strings.SplitN(w, ":", 2)[0], "=") {
			continue
		}
		f := strings.SplitN(w, ":", 5)
		if len(f) < 3 {
			h.t.Fatalf("bad document action %q", w)
		}
		a := protocol.DocumentAction{Type: f[1]}
		num := func(i int) uint64 {
			n, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				h.t.Fatalf("action %q: %v", w, err)
			}
			return n
		}
		switch f[0] {
		case "create":
			f = strings.SplitN(w, ":", 4)
			a.Kind, a.Entropy, a.Data = protocol.ActionCreate, sha256.Sum256([]byte(f[2])), h.expandNames([]byte(f[3]))
			a.ID = b.CreateID(a)
			h.documents[f[2]] = a.ID
		case "replace":
			a.Kind, a.ID, a.Revision, a.Data = protocol.ActionReplace, h.document(f[2]), num(3), h.expandNames([]byte(f[4]))
		case "delete":
			a.Kind, a.ID = protocol.ActionDelete, h.document(f[2])
		case "transfer":
			a.Kind, a.ID, a.Revision, a.Recipient = protocol.ActionTransfer, h.document(f[2]), num(3), h.identity(f[4])
		case "purchase":
			a.Kind, a.ID, a.Revision, a.Price = protocol.ActionPurchase, h.document(f[2]), num(3), num(4)
		case "set-price":
			a.Kind, a.ID, a.Revision, a.Price = protocol.ActionUpdatePrice, h.document(f[2]), num(3), num(4)
		case "renew":
			a.Kind, a.ID, a.Revision = protocol.ActionRenew, h.document(f[2]), num(3)
		case "moderate-delete":
			f = strings.SplitN(w, ":", 4)
			a.Kind, a.ID, a.Reason = protocol.ActionModerateDelete, h.document(f[2]), f[3]
		case "restore":
			a.Kind, a.ID, a.Document = protocol.ActionRestore, h.document(f[2]), h.savedDocument(b.Contract, f[1], h.document(f[2]), int64(num(3)))
			if len(f) > 4 && f[4] == "flip" {
				a.Document[len(a.Document)-1] ^= 1
			}
		default:
			h.t.Fatalf("unknown document action %q", w)
		}
		b.Actions = append(b.Actions, a)
	}
	return b
}

// savedDocument is the encoding of document id of type typeName in contract c as the
// state saved at height held it.
func (h *harness) savedDocument(c protocol.ContractID, typeName string, id protocol.DocumentID, height int64) []byte {
	kv, err := h.store.Saved(height)
	if err != nil {
		h.t.Fatal(err)
	}
	v, err := drive.GetProtocolVersion(kv)
	if err != nil {
		h.t.Fatal(err)
	}
	contract, ok, err := drive.GetContract(kv, c, v)
	if err != nil || !ok {
		h.t.Fatalf("contract %s at height %d: %v", c, height, err)
	}
	dt, _ := contract.DocumentType(typeName)
	sd, ok, err := drive.GetDocument(kv, drive.DocumentType{Contract: c, DocumentType: dt}, id)
	if err != nil || !ok {
		h.t.Fatalf("document %s at height %d: found %v, %v", h.documentName(id), height, ok, err)
	}
	return sd.Encode(dt)
}

// showRemovals prints the removal records of a contract (of one type, with type=),
// read through PathRemovals at the last height and verified complete against its root:
//
//	removals contract=NAME [type=TYPE]
func (h *harness) showRemovals(out *strings.Builder, m map[string]string) {
	path, data := proofs.PathRemovals, proofs.RemovalsData(h.contracts[m["contract"]], m["type"], nil)
	res := h.query(path, data, 0)
	if res.Code != 0 {
		fmt.Fprintf(out, "query code %d\n", res.Code)
		return
	}
	entries, err := h.verifyRange(path, data, res)
	if err != nil {
		h.t.Fatalf("%s: %v", path, err)
	}
	for _, e := range entries {
		r, err := drive.DecodeRemovalValue(e.Key, e.Value)
		if err != nil {
			h.t.Fatal(err)
		}
		fmt.Fprintf(out, "removal %s %s: owner=%s moderator=%s at=%d reason=%q hash=%x\n  flags:%s\n", r.Type, h.documentName(r.ID),
			h.identityName(r.Owner), h.identityName(r.Moderator), r.AtMs, r.Reason, r.DocumentHash[:4], h.flags(r.Flags))
	}
	fmt.Fprintf(out, "%d records, verified complete at height %d\n", len(entries), res.Height)
}

// document resolves a scenario document name, or a hex id.
func (h *harness) document(name string) protocol.DocumentID {
	if id, ok := h.documents[name]; ok {
		return id
	}
	id, err := protocol.ParseDocumentID(name)
	if err != nil {
		h.t.Fatalf("unknown document %q", name)
	}
	return id
}

// documentName is the scenario name of id, or its hex.
func (h *harness) documentName(id protocol.DocumentID) string {
	for _, n := range names(h.documents) {
		if h.documents[n] == id {
			return n
		}
	}
	return id.String()
}

// showDocuments prints, from the last committed state, every document of a type (by
// scenario name, in id order) with its system fields, values and storage flags, then
// the index entries and count records of the type:
//
//	documents contract=NAME type=TYPE
func (h *harness) showDocuments(out *strings.Builder, m map[string]string) {
	kv, err := h.store.Saved(h.height)
	if err != nil {
		h.t.Fatal(err)
	}
	v, err := drive.GetProtocolVersion(kv)
	if err != nil {
		h.t.Fatal(err)
	}
	c, ok, err := drive.GetContract(kv, h.contracts[m["contract"]], v)
	if err != nil || !ok {
		h.t.Fatalf("contract %s: %v", m["contract"], err)
	}
	dt, ok := c.DocumentType(m["type"])
	if !ok {
		h.t.Fatalf("no type %s", m["type"])
	}
	prefix := drive.DocumentTypePrefix(c.ID, dt.Name)
	err = kv.Iterate(prefix, drive.PrefixEnd(prefix), func(k, v []byte) (bool, error) {
		p, ok := drive.ParseDocumentKey(k)
		if !ok {
			h.t.Fatalf("key %x under the type does not parse", k)
		}
		switch p.Entry {
		case drive.DocumentEntryDocument, drive.DocumentEntryHistory:
			sd, err := drive.DecodeStoredDocument(k, v, dt)
			if err != nil {
				return true, err
			}
			if p.Entry == drive.DocumentEntryHistory {
				fmt.Fprintf(out, "history %s revision %d: %s\n", h.documentName(p.ID), p.Revision, protocol.DocumentData(dt, sd.Document))
				break
			}
			d := sd.Document
			renewed := ""
			if d.RenewedAt != 0 {
				renewed = fmt.Sprintf(" renewed=%d", d.RenewedAt)
			}
			fmt.Fprintf(out, "document %s: owner=%s revision=%d created=%d updated=%d transferred=%d%s price=%d %s\n",
				h.documentName(d.ID), h.identityName(d.Owner), d.Revision, d.CreatedAt, d.UpdatedAt, d.TransferredAt, renewed, d.Price, protocol.DocumentData(dt, d))
			fmt.Fprintf(out, "  flags:%s\n", h.flags(sd.Flags))
		case drive.DocumentEntryIndex:
			fmt.Fprintf(out, "index %s entry %x -> %s\n", p.Index, p.Values, h.documentName(p.ID))
		case drive.DocumentEntryCount:
			c, _ := drive.DecodeIndexCount(v)
			fmt.Fprintf(out, "count %s [%x]: %d sum %s\n", p.Index, p.Values, c.Count, c.Sum)
		case drive.DocumentEntryWindow:
			w := p.Window
			at := fmt.Sprintf("window %s@%ds", w.Index, (int64(w.StartMs)-genesisTime.UnixMilli())/1000)
			switch w.Part {
			case 'i':
				fmt.Fprintf(out, "%s entry %x -> %s (%x)\n", at, w.Values, h.documentName(w.ID), v)
			case 'n':
				c, _ := drive.DecodeIndexCount(v)
				fmt.Fprintf(out, "%s count [%x]: %d sum %s\n", at, w.Values, c.Count, c.Sum)
			case 'r':
				fmt.Fprintf(out, "%s rank %d [%x]\n", at, w.Count, w.Values)
			}
		}
		return false, nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := invariants.CheckDocuments(kv); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) flags(f drive.StorageFlags) string {
	var b strings.Builder
	for _, p := range f {
		fmt.Fprintf(&b, " %s@%d=%d", h.identityName(p.Owner), p.Epoch, p.Bytes)
	}
	return b.String()
}

// showExpirations prints the documents expirations tree of the last committed state:
// each entry's expiry, document (by scenario name) and type.
//
//	expirations
func (h *harness) showExpirations(out *strings.Builder) {
	kv, err := h.store.Saved(h.height)
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	err = kv.Iterate(drive.ExpirationsPrefix(), drive.PrefixEnd(drive.ExpirationsPrefix()), func(k, v []byte) (bool, error) {
		e, ok := drive.DecodeExpirationEntry(k, v)
		if !ok {
			h.t.Fatalf("expirations entry %x does not decode", k)
		}
		fmt.Fprintf(out, "expires %d: %s (%s)\n", e.ExpiresAtMs, h.documentName(e.ID), e.Type)
		n++
		return false, nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	fmt.Fprintf(out, "%d entries\n", n)
}

// showLifetimePools prints the lifetime storage fee pools of the last committed state.
//
//	lifetime-pools
func (h *harness) showLifetimePools(out *strings.Builder) {
	kv, err := h.store.Saved(h.height)
	if err != nil {
		h.t.Fatal(err)
	}
	pools, err := drive.LifetimePools(kv, protocol.MaxEpoch)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, p := range pools {
		fmt.Fprintf(out, "pool collected in epoch %d for %d epochs: %d\n", p.Epoch, p.Lifetime, p.Credits)
	}
	fmt.Fprintf(out, "%d pools\n", len(pools))
}
