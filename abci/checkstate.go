package abci

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// checkStateRequest refuses what a check-state path cannot answer: a proof or a height.
func checkStateRequest(req *abcitypes.RequestQuery) *abcitypes.ResponseQuery {
	if req.Prove {
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeBadRequest, Log: proofs.ErrBadQuery{Path: req.Path, Reason: "the check state is not committed: no proof"}.Error()}
	}
	if req.Height != 0 {
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeBadRequest, Log: proofs.ErrBadQuery{Path: req.Path, Reason: "the check state has no height to choose: ask with height 0"}.Error()}
	}
	return nil
}

// dryRun answers proofs.PathDryRun from the check state, under the check lock.
func (a *Application) dryRun(req *abcitypes.RequestQuery) *abcitypes.ResponseQuery {
	if bad := checkStateRequest(req); bad != nil {
		return bad
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.check == nil {
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeVersionMissing, Log: "no check state before InitChain"}
	}
	var ans proofs.DryRunAnswer
	at, err := app.JudgeTime(a.check)
	var res app.TxResult
	if err == nil {
		res, err = app.DryRun(a.check, req.Data, at)
	}
	if err != nil {
		ans = proofs.DryRunAnswer{Codespace: CodespaceInternal, Code: CheckCodeInternal, Log: err.Error()}
	} else {
		ans = proofs.DryRunAnswer{Code: uint32(res.Code), Log: res.Log, Fee: res.Charged, MaxFee: res.MaxCharged}
	}
	value, err := json.Marshal(ans)
	if err != nil {
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeInternal, Log: err.Error()}
	}
	return &abcitypes.ResponseQuery{Value: value, Log: fmt.Sprintf("dry run: code %d, fee %d, at most %d (check state, unproven)", ans.Code, ans.Fee, ans.MaxFee)}
}

// pendingNonce answers proofs.PathPendingNonce from the check state, under the check lock.
func (a *Application) pendingNonce(req *abcitypes.RequestQuery) *abcitypes.ResponseQuery {
	if bad := checkStateRequest(req); bad != nil {
		return bad
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.check == nil {
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeVersionMissing, Log: "no check state before InitChain"}
	}
	var (
		nonce uint64
		err   error
	)
	switch len(req.Data) {
	case protocol.AddressLen:
		var addr protocol.Address
		copy(addr[:], req.Data)
		var st drive.AddressState
		st, _, err = drive.GetAddress(a.check, addr)
		nonce = st.Nonce.Last
	case protocol.IdentityIDLen:
		var id protocol.IdentityID
		copy(id[:], req.Data)
		var st protocol.NonceState
		st, err = drive.GetIdentityNonce(a.check, id)
		nonce = st.Last
	default:
		reason := fmt.Sprintf("want a %d-byte address or a %d-byte identity id", protocol.AddressLen, protocol.IdentityIDLen)
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeBadRequest, Log: proofs.ErrBadQuery{Path: req.Path, Reason: reason}.Error()}
	}
	if err != nil {
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeInternal, Log: err.Error()}
	}
	return &abcitypes.ResponseQuery{
		Key:   req.Data,
		Value: binary.BigEndian.AppendUint64(nil, nonce),
		Log:   fmt.Sprintf("last pending nonce %d (check state, unproven)", nonce),
	}
}
