package web

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

type epochRow struct {
	proofBox
	Index        uint32
	Start        time.Time
	Fees         uint64
	StorageShare uint64
	Proposers    []proposerRow
	Paid         bool
	PaidCredits  uint64
}

type proposerRow struct {
	Address string
	Blocks  uint64
}

type epochsPage struct {
	Current uint32
	LengthS uint64
	Epochs  []epochRow
	Height  int64
}

func (s *Server) epochs(r *http.Request) (any, error) {
	ctx := r.Context()
	h, err := s.provenHeight(ctx)
	if err != nil {
		return nil, err
	}
	pools, err := s.c.Pools(ctx, h, false)
	if err != nil {
		return nil, err
	}
	p := epochsPage{Current: pools.CurrentEpoch.Index, Height: pools.Height}
	if !pools.Started {
		return p, nil
	}
	// The starts come from the genesis parameters, read once; each epoch's figures
	// from its keys, read raw and checked in the browser.
	g, err := s.rawRead(ctx, proofs.PathKey, drive.GenesisKey(), pools.Height)
	if err != nil {
		return nil, err
	}
	params, err := drive.GetChainParams(client.EntriesKV([]proofs.KV{{Key: drive.GenesisKey(), Value: g.Value}}))
	if err != nil {
		return nil, err
	}
	p.LengthS = params.EpochLengthS
	for i := 0; i < EpochsPerPage && i <= int(p.Current); i++ {
		index := p.Current - uint32(i)
		data := proofs.EpochData(index)
		a, err := s.rawRead(ctx, proofs.PathEpoch, data, pools.Height)
		if err != nil {
			return nil, err
		}
		kv := client.EntriesKV(a.Entries)
		start := protocol.EpochStartMs(params.GenesisTimeMs, params.EpochLengthS, index)
		row := epochRow{Index: index, Start: time.UnixMilli(int64(start)).UTC()}
		if row.Fees, err = drive.GetU64(kv, drive.EpochFeesKey(index)); err != nil {
			return nil, err
		}
		if row.StorageShare, err = drive.GetU64(kv, drive.EpochStorageKey(index)); err != nil {
			return nil, err
		}
		if paid, _ := kv.Get(drive.EpochPaidKey(index)); paid != nil {
			row.Paid = true
			if row.PaidCredits, err = drive.GetU64(kv, drive.EpochPaidKey(index)); err != nil {
				return nil, err
			}
		}
		proposers, err := drive.EpochProposers(kv, index)
		if err != nil {
			return nil, err
		}
		for _, pr := range proposers {
			row.Proposers = append(row.Proposers, proposerRow{strings.ToUpper(hex.EncodeToString(pr.Proposer)), pr.Blocks})
		}
		if row.proofBox, err = s.proofBox(ctx, proofs.PathEpoch, data, a.Height, a.shown(), fmt.Sprintf("ttld query epoch %d --prove", index)); err != nil {
			return nil, err
		}
		p.Epochs = append(p.Epochs, row)
	}
	return p, nil
}
