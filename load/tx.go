package load

import (
	"fmt"

	"github.com/ttld-dev/ttld/protocol"
)

// builder signs the transactions of a ttld workload.
type builder struct {
	workload Workload
	chainID  string
	contract protocol.ContractID // the document workloads' contract
	run      RunID
}

// transition is signer s's transition with nonce n, to recipient where it has one.
func (b builder) transition(s, recipient Signer, n uint64) protocol.Transition {
	switch b.workload {
	case Transfers:
		return &protocol.IdentityCreditTransfer{Identity: s.Identity, Nonce: n, Recipient: recipient.Identity, Amount: 1}
	case AddressTransfers:
		return &protocol.AddressFundsTransfer{PubKey: s.Pub(), Nonce: n, Recipient: recipient.Address, Amount: 1}
	case Documents, DocumentsTTL:
		return documentCreate(b.contract, b.run, s, n)
	}
	panic(fmt.Sprintf("load: workload %s has no ttld transition", b.workload))
}

// tx is the signed transaction of transition(s, recipient, n).
func (b builder) tx(s, recipient Signer, n uint64) []byte {
	return protocol.Sign(b.chainID, b.transition(s, recipient, n), s.Key)
}

// TxSize is the size in bytes of every transaction of ttld workload w: its fields have
// fixed widths (the document data is DocumentDataBytes), so one sample tells.
func TxSize(w Workload) (int, error) {
	if w == KVStore {
		return 0, fmt.Errorf("load: workload %s has no fixed size: give one", w)
	}
	b := builder{workload: w, chainID: "size"}
	return len(b.tx(DeriveSigner(nil, 0), DeriveSigner(nil, 1), 1)), nil
}
