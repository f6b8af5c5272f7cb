package web

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/web/check"
)

// validatorRow is one validator as a page shows it.
type validatorRow struct {
	Address string `json:"address"`
	Power   int64  `json:"power"`
}

type overviewPage struct {
	// The node's status and validators: not proven.
	ChainID     string         `json:"chain_id"`
	Height      int64          `json:"height"`
	AppHash     string         `json:"app_hash"`
	BlockTime   time.Time      `json:"block_time"`
	Validators  []validatorRow `json:"validators"`
	Genesis     []validatorRow `json:"genesis"`
	GenesisHash string         `json:"genesis_hash"`
	// The latest blocks and the latest transactions among the last ChartBlocks
	// blocks, newest first: not proven.
	Blocks []blockRow `json:"blocks"`
	Txs    []txRow    `json:"transactions"`
	// The app figures, proven: read at one state, the latest saved one (none before
	// the first block).
	proofBox `json:"proof"`
}

// OverviewRows is how many of the latest blocks, and of the latest transactions, the
// overview lists.
const OverviewRows = 10

// recentTxs are the latest transactions of the last ChartBlocks blocks before and at
// latest, newest first, OverviewRows at most.
func (s *Server) recentTxs(ctx context.Context, latest int64, now time.Time) ([]txRow, error) {
	metas, err := s.metas(ctx, max(1, latest-ChartBlocks+1), latest)
	if err != nil {
		return nil, err
	}
	var out []txRow
	for _, m := range metas {
		if m.NumTxs == 0 {
			continue
		}
		b, err := s.blockTxsAt(ctx, m.Header.Height)
		if err != nil && m.Header.Height == latest {
			// Stored and not yet executed (executedHeight): its transactions show
			// in a later view.
			continue
		}
		if err != nil {
			return nil, err
		}
		rows, err := s.txRows(ctx, b, len(b.Txs)-(OverviewRows-len(out)), len(b.Txs), now)
		if err != nil {
			return nil, err
		}
		for i := len(rows) - 1; i >= 0 && len(out) < OverviewRows; i-- {
			out = append(out, rows[i])
		}
		if len(out) == OverviewRows {
			break
		}
	}
	return out, nil
}

func (s *Server) overview(r *http.Request) (any, error) {
	ctx := r.Context()
	st, err := s.rpc.Status(ctx)
	if err != nil {
		return nil, err
	}
	h := st.SyncInfo.LatestBlockHeight
	p := overviewPage{ChainID: st.NodeInfo.Network, Height: h, AppHash: st.SyncInfo.LatestAppHash.String(), BlockTime: st.SyncInfo.LatestBlockTime.UTC()}
	vals, err := s.rpc.Validators(ctx, &h, nil, nil)
	if err != nil {
		return nil, err
	}
	for _, v := range vals.Validators {
		p.Validators = append(p.Validators, validatorRow{v.Address.String(), v.VotingPower})
	}
	if t := s.opts.Trusted; t != nil {
		for _, v := range t.Validators {
			p.Genesis = append(p.Genesis, validatorRow{v.Address.String(), v.VotingPower})
		}
		p.GenesisHash = fmt.Sprintf("%X", t.Hash())
	}
	if h > 0 {
		metas, err := s.metas(ctx, max(1, h-OverviewRows+1), h)
		if err != nil {
			return nil, err
		}
		for _, m := range metas {
			p.Blocks = append(p.Blocks, blockRowOf(m))
		}
		if p.Txs, err = s.recentTxs(ctx, h, time.Now()); err != nil {
			return nil, err
		}
	}
	if h < 2 {
		return p, nil
	}
	// Every app figure is read at one state, the newest proven now (provenHeight); the
	// backlog counts the expirations due at that state's block time.
	state, err := provenBelow(h)
	if err != nil {
		return nil, err
	}
	first, err := s.rawRead(ctx, proofs.PathKey, drive.ProtocolVersionKey(), state)
	if err != nil {
		return nil, err
	}
	rest, err := s.rawReads(ctx, first.Height,
		read{proofs.PathPools, nil}, read{proofs.PathUpgrades, nil}, read{proofs.PathLifetimePools, nil}, read{proofs.PathPendingRefunds, nil},
		read{proofs.PathTotalCredits, nil}, read{proofs.PathKey, drive.SupplyKey()}, read{proofs.PathKey, drive.LastBlockKey()})
	if err != nil {
		return nil, err
	}
	last, ok := drive.DecodeLastBlock(rest[len(rest)-1].Value)
	if !ok {
		return nil, fmt.Errorf("the last block record does not decode")
	}
	due, err := s.rawRead(ctx, proofs.PathExpirations, proofs.ExpirationsData(last.TimeMs, nil), first.Height)
	if err != nil {
		return nil, err
	}
	p.proofBox, err = s.proofBox(ctx, append(append([]check.Answer{first}, rest...), due), "ttld query pools --prove", "ttld query protocol --prove", "ttld query total-credits --prove", "ttld query expirations --prove")
	return p, err
}
