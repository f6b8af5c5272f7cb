package web

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"time"

	"github.com/ttld-dev/ttld/client"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
)

// validatorRow is one validator as a page shows it.
type validatorRow struct {
	Address string
	Power   int64
}

type overviewPage struct {
	ChainID         string
	Height          int64
	AppHash         string
	BlockTime       time.Time
	ProtocolVersion uint32
	Validators      []validatorRow
	Genesis         []validatorRow
	GenesisHash     string
	// State is the height of the state the app figures below are read at.
	State          int64
	Epoch          drive.CurrentEpoch
	EpochStarted   bool
	StoragePool    uint64
	LifetimePools  int
	PendingRefunds int
	// Backlog counts the expirations tree's entries due at the state's block time, up
	// to proofs.MaxRangeEntries (BacklogMore: at least that many).
	Backlog      int
	BacklogMore  bool
	TotalCredits uint64
	Supply       uint64
	// The proof box of each read the figures come from.
	VersionProof, PoolsProof, BacklogProof, LifetimeProof, RefundsProof, TotalProof, SupplyProof proofBox
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
	// Every app figure is read at one state, the newest proven now (provenHeight), and
	// decoded from the very value the browser then checks against its proof.
	if p.State, err = provenBelow(h); err != nil {
		return nil, err
	}
	reads := []struct {
		path, offline string
		data          []byte
		box           *proofBox
		use           func(a rawAnswer) error
	}{
		{proofs.PathKey, "ttld status and the proof bundle", drive.ProtocolVersionKey(), &p.VersionProof, func(a rawAnswer) error {
			v, err := drive.DecodeProtocolVersion(a.Value)
			p.ProtocolVersion = uint32(v)
			return err
		}},
		{proofs.PathPools, "ttld query pools --prove", nil, &p.PoolsProof, func(a rawAnswer) (err error) {
			kv := client.EntriesKV(a.Entries)
			if p.Epoch, p.EpochStarted, err = drive.GetCurrentEpoch(kv); err != nil {
				return err
			}
			p.StoragePool, err = drive.GetU64(kv, drive.StoragePoolKey())
			return err
		}},
		{proofs.PathLifetimePools, "ttld query pools --prove", nil, &p.LifetimeProof, func(a rawAnswer) error {
			p.LifetimePools = len(a.Entries)
			return nil
		}},
		{proofs.PathPendingRefunds, "ttld query pools --prove", nil, &p.RefundsProof, func(a rawAnswer) error {
			p.PendingRefunds = len(a.Entries)
			return nil
		}},
		{proofs.PathTotalCredits, "ttld query total-credits --prove", nil, &p.TotalProof, func(a rawAnswer) (err error) {
			p.TotalCredits, err = u64(a.Value)
			return err
		}},
		{proofs.PathKey, "ttld query total-credits --prove", drive.SupplyKey(), &p.SupplyProof, func(a rawAnswer) (err error) {
			p.Supply, err = u64(a.Value)
			return err
		}},
	}
	for _, rd := range reads {
		a, err := s.rawRead(ctx, rd.path, rd.data, p.State)
		if err != nil {
			return nil, err
		}
		p.State = a.Height
		if err := rd.use(a); err != nil {
			return nil, err
		}
		if *rd.box, err = s.proofBox(ctx, rd.path, rd.data, a.Height, a.shown(), rd.offline); err != nil {
			return nil, err
		}
	}
	// The backlog: the entries due at the state's block time.
	lb, err := s.rawRead(ctx, proofs.PathKey, drive.LastBlockKey(), p.State)
	if err != nil {
		return nil, err
	}
	last, ok := drive.DecodeLastBlock(lb.Value)
	if !ok {
		return nil, fmt.Errorf("the last block record does not decode")
	}
	data := proofs.ExpirationsData(last.TimeMs, nil)
	due, err := s.rawRead(ctx, proofs.PathExpirations, data, p.State)
	if err != nil {
		return nil, err
	}
	p.Backlog, p.BacklogMore = len(due.Entries), due.More
	p.BacklogProof, err = s.proofBox(ctx, proofs.PathExpirations, data, p.State, due.shown(), "ttld query expirations --prove")
	return p, err
}

func u64(v []byte) (uint64, error) {
	if len(v) != 8 {
		return 0, fmt.Errorf("a u64 record of %d bytes", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}
