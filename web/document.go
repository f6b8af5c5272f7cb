package web

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

type fieldRow struct{ Name, Value string }

type documentPage struct {
	proofBox
	Contract, Type, ID string
	Present            bool
	Owner              string
	Revision           uint64
	CreatedAt          time.Time
	UpdatedAt          time.Time
	Fields             []fieldRow
	Price              uint64
	TTL                bool
	ExpiresAt          time.Time
	Expired            bool
	Expiry             string
	BlockTime          time.Time
	// Lived is how much of its lifetime the document has used at the block time, in
	// percent (0..100), and LivedX the same in thousandths of the lifetime bar's width.
	Lived, LivedX int
	Height        int64
}

func (s *Server) document(r *http.Request) (any, error) {
	c, typeName, err := contractAndType(r)
	if err != nil {
		return nil, err
	}
	id, err := protocol.ParseDocumentID(r.PathValue("id"))
	if err != nil {
		return nil, errBadInput{"document", r.PathValue("id"), "64 hex digits"}
	}
	h, err := s.provenHeight(r.Context())
	if err != nil {
		return nil, err
	}
	st, err := s.c.Document(r.Context(), c, typeName, id, h, false)
	if err != nil {
		return nil, err
	}
	p := documentPage{Contract: c.String(), Type: typeName, ID: id.String(), Present: st.Present, Height: st.Height,
		BlockTime: time.UnixMilli(int64(st.BlockTimeMs)).UTC()}
	// What the page shows of the document is its encoding (empty: absent), which the
	// browser's check finds at the end of the proven row.
	shown := ""
	if st.Present {
		shown = hex.EncodeToString(st.Document.Encode(st.Type))
	}
	if p.proofBox, err = s.proofBox(r.Context(), proofs.PathDocument, proofs.DocumentData(c, typeName, id), st.Height, shown,
		"ttld query document "+c.String()+" "+typeName+" "+id.String()+" --prove"); err != nil {
		return nil, err
	}
	if !st.Present {
		return p, nil
	}
	p.Owner, p.Revision, p.Price = st.Owner.String(), st.Revision, st.Price
	p.CreatedAt, p.UpdatedAt = time.UnixMilli(int64(st.CreatedAt)).UTC(), time.UnixMilli(int64(st.UpdatedAt)).UTC()
	var data map[string]json.RawMessage
	if err := json.Unmarshal(client.ReadableDocumentData(st.Type, st.Document), &data); err != nil {
		return nil, err
	}
	for _, prop := range st.Type.Properties {
		if v, ok := data[prop.Name]; ok {
			p.Fields = append(p.Fields, fieldRow{prop.Name, string(v)})
		}
	}
	if st.ExpiresAtMs > 0 {
		p.TTL, p.Expired = true, st.Expired
		p.ExpiresAt = time.UnixMilli(int64(st.ExpiresAtMs)).UTC()
		p.Expiry = expiryText(st.ExpiresAtMs, st.BlockTimeMs)
		if life := st.ExpiresAtMs - st.CreatedAt; life > 0 {
			used := min(st.BlockTimeMs, st.ExpiresAtMs) - min(st.BlockTimeMs, st.CreatedAt)
			p.Lived, p.LivedX = int(min(100, used*100/life)), int(min(1000, used*1000/life))
		}
	}
	return p, nil
}
