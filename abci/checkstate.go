package abci

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/protocol"
)

// PathPendingNonce: data = a 20-byte address or a 32-byte identity id; value = the last
// nonce the signer used in the check state (the last saved version plus the mempool's
// accepted transactions), as a big-endian u64; 0 when it has used none. The answer has
// no height (0): the check state is not a saved version.
//
// NB: the check state is never committed, so this answer carries no proof, and a node
// can answer anything: it is a hint for picking the next nonce, not a verified read. A
// client takes the larger of it and the committed nonce.
const PathPendingNonce = "/pending-nonce"

// PathDryRun: data = a signed transaction's bytes; value = a DryRunAnswer in JSON: what
// the transaction would do if a block ran it on the check state now. Nothing is kept and
// nothing is sent. Like PathPendingNonce it is read from the check state, so it has no
// height and no proof.
const PathDryRun = "/dry-run"

// DryRunAnswer is the value of a PathDryRun answer.
type DryRunAnswer struct {
	// Code is the result code the transaction would get (0: accepted).
	Code uint32 `json:"code"`
	// Codespace is CodespaceInternal when the node could not run it.
	Codespace string `json:"codespace,omitempty"`
	Log       string `json:"log,omitempty"`
	// Fee is what it would be charged on the check state.
	Fee uint64 `json:"fee"`
	// MaxFee bounds the fee on any later state, where keys it found absent may hold
	// values: never below what a block charges it.
	MaxFee uint64 `json:"max_fee"`
}

// checkStateRequest refuses what a check-state path cannot answer: a proof or a height.
func checkStateRequest(req *abcitypes.RequestQuery) *abcitypes.ResponseQuery {
	if req.Prove {
		return &abcitypes.ResponseQuery{Code: QueryCodeBadRequest, Log: ErrBadQuery{req.Path, "the check state is not committed: no proof"}.Error()}
	}
	if req.Height != 0 {
		return &abcitypes.ResponseQuery{Code: QueryCodeBadRequest, Log: ErrBadQuery{req.Path, "the check state has no height to choose: ask with height 0"}.Error()}
	}
	return nil
}

// dryRun answers PathDryRun from the check state, under the check lock.
func (a *Application) dryRun(req *abcitypes.RequestQuery) *abcitypes.ResponseQuery {
	if bad := checkStateRequest(req); bad != nil {
		return bad
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.check == nil {
		return &abcitypes.ResponseQuery{Code: QueryCodeVersionMissing, Log: "no check state before InitChain"}
	}
	var ans DryRunAnswer
	at, err := app.JudgeTime(a.check)
	var res app.TxResult
	if err == nil {
		res, err = app.DryRun(a.check, req.Data, at)
	}
	if err != nil {
		ans = DryRunAnswer{Codespace: CodespaceInternal, Code: CheckCodeInternal, Log: err.Error()}
	} else {
		ans = DryRunAnswer{Code: uint32(res.Code), Log: res.Log, Fee: res.Charged, MaxFee: res.MaxCharged}
	}
	value, err := json.Marshal(ans)
	if err != nil {
		return &abcitypes.ResponseQuery{Code: QueryCodeInternal, Log: err.Error()}
	}
	return &abcitypes.ResponseQuery{Value: value, Log: fmt.Sprintf("dry run: code %d, fee %d, at most %d (check state, unproven)", ans.Code, ans.Fee, ans.MaxFee)}
}

// pendingNonce answers PathPendingNonce from the check state, under the check lock.
func (a *Application) pendingNonce(req *abcitypes.RequestQuery) *abcitypes.ResponseQuery {
	if bad := checkStateRequest(req); bad != nil {
		return bad
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.check == nil {
		return &abcitypes.ResponseQuery{Code: QueryCodeVersionMissing, Log: "no check state before InitChain"}
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
		return &abcitypes.ResponseQuery{Code: QueryCodeBadRequest, Log: ErrBadQuery{req.Path, reason}.Error()}
	}
	if err != nil {
		return &abcitypes.ResponseQuery{Code: QueryCodeInternal, Log: err.Error()}
	}
	return &abcitypes.ResponseQuery{
		Key:   req.Data,
		Value: binary.BigEndian.AppendUint64(nil, nonce),
		Log:   fmt.Sprintf("last pending nonce %d (check state, unproven)", nonce),
	}
}
