package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/web/check"
)

// validatorRow is one validator as a page shows it.
type validatorRow struct {
	Address string
	Power   int64
}

type overviewPage struct {
	// The node's status and validators: not proven.
	ChainID     string
	Height      int64
	AppHash     string
	BlockTime   time.Time
	Validators  []validatorRow
	Genesis     []validatorRow
	GenesisHash string
	// The app figures, proven: read at one state, the latest saved one (none before
	// the first block).
	proofBox
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
		read{proofs.PathPools, nil}, read{proofs.PathLifetimePools, nil}, read{proofs.PathPendingRefunds, nil},
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
	p.proofBox, err = s.proofBox(ctx, append(append([]check.Answer{first}, rest...), due), "ttld query pools --prove", "ttld query total-credits --prove", "ttld query expirations --prove")
	return p, err
}
