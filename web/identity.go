package web

import (
	"encoding/hex"
	"net/http"

	rpcclient "github.com/cometbft/cometbft/rpc/client"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

type identityPage struct {
	proofBox
	ID      string
	Present bool
	Balance uint64
	Nonce   uint64
	Keys    []string
	Height  int64
}

func (s *Server) identity(r *http.Request) (any, error) {
	id, err := protocol.ParseIdentityID(r.PathValue("id"))
	if err != nil {
		return nil, errBadInput{"identity", r.PathValue("id"), "64 hex digits"}
	}
	h, err := s.provenHeight(r.Context())
	if err != nil {
		return nil, err
	}
	// The raw entries, not client.Identity: the page shows them, and the browser checks
	// them against the proven range.
	res, err := s.rpc.ABCIQueryWithOptions(r.Context(), proofs.PathIdentity, id[:], rpcclient.ABCIQueryOptions{Height: h})
	if err != nil {
		return nil, err
	}
	entries, err := proofs.DecodeEntries(res.Response.Value)
	if err != nil {
		return nil, err
	}
	kvs := make([][2][]byte, len(entries))
	for i, e := range entries {
		kvs[i] = [2][]byte{e.Key, e.Value}
	}
	st, present, err := drive.DecodeIdentity(id, kvs)
	if err != nil {
		return nil, err
	}
	p := identityPage{ID: id.String(), Present: present, Balance: st.Balance, Nonce: st.Nonce.Last, Height: res.Response.Height}
	for _, k := range st.Keys {
		p.Keys = append(p.Keys, hex.EncodeToString(k))
	}
	shown := ""
	if present {
		shown = hex.EncodeToString(res.Response.Value)
	}
	p.proofBox, err = s.proofBox(r.Context(), proofs.PathIdentity, id[:], p.Height, shown, "ttld query identity "+id.String()+" --prove")
	return p, err
}
