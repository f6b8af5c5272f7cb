package web

import (
	"fmt"
	"net/http"

	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
	"github.com/ttld-dev/ttld/web/check"
)

type addressPage struct {
	proofBox `json:"proof"`
	Address  string `json:"address"`
	// Changes are the balance changes the figures change.i.* show.
	Changes []check.BalanceChange `json:"changes"`
}

// AddressChangesBlocks is how far back the address page looks for balance changes.
const AddressChangesBlocks = 10_000

// address shows an address and its balance changes since AddressChangesBlocks before
// the state read, in one proof box: the address and both kinds of balance change
// records, at one height.
func (s *Server) address(r *http.Request) (any, error) {
	ctx := r.Context()
	a, err := protocol.ParseAddress(r.PathValue("address"))
	if err != nil {
		return nil, errBadInput{"address", r.PathValue("address"), "40 hex digits"}
	}
	h, err := s.provenHeight(ctx)
	if err != nil {
		return nil, err
	}
	first, err := s.rawRead(ctx, proofs.PathAddress, a[:], h)
	if err != nil {
		return nil, err
	}
	since := proofs.SinceData(uint64(max(1, first.Height-AddressChangesBlocks)))
	changes, err := s.rawReads(ctx, first.Height, read{proofs.PathAddressChangesCompacted, since}, read{proofs.PathAddressChangesBlocks, since})
	if err != nil {
		return nil, err
	}
	list, err := check.BalanceChanges(a, &changes[0], &changes[1])
	if err != nil {
		return nil, err
	}
	p := addressPage{Address: a.String(), Changes: list.List}
	p.proofBox, err = s.proofBox(ctx, append([]check.Answer{first}, changes...),
		"ttld query address "+a.String()+" --prove", fmt.Sprintf("ttld query address-changes %s --since %d --prove", a, list.Since))
	return p, err
}
