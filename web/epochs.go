package web

import (
	"net/http"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/web/check"
)

type epochsPage struct {
	proofBox `json:"proof"`
	// Epochs are the indexes of the epochs shown, the current one first.
	Epochs []uint32 `json:"epochs"`
}

// epochs shows the current epoch and up to EpochsPerPage-1 before it in one proof
// box: the pools (which epoch is current), the genesis parameters (when each starts)
// and each epoch's pool, at one state.
func (s *Server) epochs(r *http.Request) (any, error) {
	ctx := r.Context()
	h, err := s.provenHeight(ctx)
	if err != nil {
		return nil, err
	}
	pools, err := s.rawRead(ctx, proofs.PathPools, nil, h)
	if err != nil {
		return nil, err
	}
	entries, err := proofs.DecodeEntries(pools.Value)
	if err != nil {
		return nil, err
	}
	cur, started, err := drive.GetCurrentEpoch(proofs.EntriesKV(entries))
	if err != nil {
		return nil, err
	}
	reads := []read{{proofs.PathKey, drive.GenesisKey()}}
	var p epochsPage
	for i := 0; started && i < EpochsPerPage && i <= int(cur.Index); i++ {
		reads = append(reads, read{proofs.PathEpoch, proofs.EpochData(cur.Index - uint32(i))})
		p.Epochs = append(p.Epochs, cur.Index-uint32(i))
	}
	rest, err := s.rawReads(ctx, pools.Height, reads...)
	if err != nil {
		return nil, err
	}
	p.proofBox, err = s.proofBox(ctx, append([]check.Answer{pools}, rest...), "ttld query pools --prove", "ttld query epoch N --prove")
	return p, err
}
