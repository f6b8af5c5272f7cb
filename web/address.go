package web

import (
	"encoding/hex"
	"net/http"

	rpcclient "github.com/cometbft/cometbft/rpc/client"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

type addressPage struct {
	proofBox
	Address string
	Present bool
	Balance uint64
	Nonce   uint64
	Changes []client.BalanceChange
	Since   uint64
	Height  int64
}

// AddressChangesBlocks is how far back the address page looks for balance changes.
const AddressChangesBlocks = 10_000

func (s *Server) address(r *http.Request) (any, error) {
	a, err := protocol.ParseAddress(r.PathValue("address"))
	if err != nil {
		return nil, errBadInput{"address", r.PathValue("address"), "40 hex digits"}
	}
	h, err := s.provenHeight(r.Context())
	if err != nil {
		return nil, err
	}
	// The raw value, not client.Address: the page shows it, and the browser checks it
	// against the proven one.
	res, err := s.rpc.ABCIQueryWithOptions(r.Context(), proofs.PathAddress, a[:], rpcclient.ABCIQueryOptions{Height: h})
	if err != nil {
		return nil, err
	}
	p := addressPage{Address: a.String(), Height: res.Response.Height}
	if v := res.Response.Value; len(v) > 0 {
		st, err := drive.DecodeAddressState(v)
		if err != nil {
			return nil, err
		}
		p.Present, p.Balance, p.Nonce = true, st.Balance, st.Nonce.Last
	}
	if p.proofBox, err = s.proofBox(r.Context(), proofs.PathAddress, a[:], p.Height, hex.EncodeToString(res.Response.Value), "ttld query address "+a.String()+" --prove"); err != nil {
		return nil, err
	}
	p.Since = uint64(max(1, p.Height-AddressChangesBlocks))
	ch, err := s.c.AddressChanges(r.Context(), a, p.Since, p.Height, false)
	if err != nil {
		return nil, err
	}
	p.Changes = ch.Changes
	return p, nil
}
