package abci

import (
	"encoding/binary"
	"fmt"

	abcitypes "github.com/cometbft/cometbft/abci/types"

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

// pendingNonce answers PathPendingNonce from the check state, under the check lock.
func (a *Application) pendingNonce(req *abcitypes.RequestQuery) *abcitypes.ResponseQuery {
	if req.Prove {
		return &abcitypes.ResponseQuery{Code: QueryCodeBadRequest, Log: ErrBadQuery{req.Path, "the check state is not committed: no proof"}.Error()}
	}
	if req.Height != 0 {
		return &abcitypes.ResponseQuery{Code: QueryCodeBadRequest, Log: ErrBadQuery{req.Path, "the check state has no height to choose: ask with height 0"}.Error()}
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
		nonce = st.Nonce
	case protocol.IdentityIDLen:
		var id protocol.IdentityID
		copy(id[:], req.Data)
		nonce, err = drive.GetIdentityNonce(a.check, id)
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
