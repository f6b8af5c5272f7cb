package app

import (
	"crypto/ed25519"
	"strconv"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/feeschedule"
	"github.com/ttld-dev/ttld/protocol"
)

// payer is the account a transition is charged to, once authenticated.
type payer struct {
	address  *protocol.Address // set for an address signer
	identity *protocol.IdentityID
	balance  uint64
	nonce    uint64 // the nonce the transition consumes
}

// execution carries one transaction through the pipeline.
type execution struct {
	r      rules
	cache  *drive.Cache
	signed *protocol.Signed
	payer  payer
	// credits are the balances the transition credits, applied after the payer's debit.
	addressCredits []addressCredit
	changed        map[protocol.Address]uint64 // address balances this tx sets
	events         []Event
	sigs           uint64 // signatures verified
}

// addressCredit is an address balance the transition raises, applied after the payer's
// debit. The recipient's state is read (and counted) when the credit is planned.
type addressCredit struct {
	address protocol.Address
	state   drive.AddressState
	amount  uint64
}

// discard drops the transition's staged writes and events; what its reads cost stays
// counted.
func (e *execution) discard() {
	ops := e.cache.Operations()
	e.cache.Discard()
	e.cache.Charge(ops)
	e.addressCredits = nil
	e.events = nil
}

// CheckTx runs tx against kv (the check state) as the block would. Only a success is
// kept in kv, so later transactions of the same signer build on it: the mempool carries
// what can succeed, and a paid refusal, which the block would charge, is refused here
// without touching the check state.
func CheckTx(kv drive.KV, tx []byte) (TxResult, error) {
	r, err := loadRules(kv)
	if err != nil {
		return TxResult{}, Fault{err}
	}
	staged := drive.NewCache(kv)
	res, err := executeTx(staged, r, tx, map[protocol.Address]uint64{})
	if err != nil || res.Code != protocol.CodeOK {
		return res, err
	}
	return res, staged.Flush()
}

// executeTx runs one transaction over kv. A consensus refusal is a TxResult with its
// code; the error is a Fault.
func executeTx(kv drive.KV, r rules, tx []byte, changed map[protocol.Address]uint64) (TxResult, error) {
	signed, err := protocol.Decode(tx, r.limits)
	if err != nil {
		return refused(err, 0)
	}
	e := &execution{r: r, cache: drive.NewCache(kv), signed: signed, changed: map[protocol.Address]uint64{}}

	// Authenticate: signer exists, signature, nonce. Refusals here are unpaid.
	if err := e.authenticate(); err != nil {
		return refused(err, 0)
	}

	authOps := e.cache.Operations()

	// State validation and the transition's own writes. A paid refusal here is found
	// before anything is written, so its fee is priced on the reads it made.
	stateErr := e.apply()
	if stateErr != nil {
		code, ok := protocol.CodeOf(stateErr)
		if !ok {
			return TxResult{}, Fault{stateErr}
		}
		if !code.Paid() {
			return refused(stateErr, 0)
		}
		e.discard()
	}
	fee := e.r.fees.ProcessingFee(e.cache.Operations().Add(e.payerWriteCost()))
	debit := fee
	if stateErr == nil {
		amount := e.amount()
		if e.payer.balance < fee || e.payer.balance-fee < amount {
			// The amount is not affordable: a paid refusal priced on the
			// authentication alone, if the payer can pay that much.
			stateErr = e.insufficient(amount + fee)
			e.discard()
			fee = e.r.fees.ProcessingFee(authOps.Add(e.payerWriteCost()))
			debit = fee
		} else {
			debit = amount + fee
		}
	}
	if e.payer.balance < fee {
		return refused(protocol.ErrBalanceIsNotEnough{Balance: e.payer.balance, Fee: fee}, 0)
	}
	if err := e.writePayer(e.payer.balance - debit); err != nil {
		return TxResult{}, Fault{err}
	}
	for _, c := range e.addressCredits {
		if err := e.writeAddressCredit(c); err != nil {
			return TxResult{}, Fault{err}
		}
	}
	if err := e.cache.Flush(); err != nil {
		return TxResult{}, Fault{err}
	}
	for a, b := range e.changed {
		changed[a] = b
	}
	res := TxResult{Fee: fee, Events: append(e.events, e.transitionEvent(fee, stateErr))}
	if stateErr != nil {
		res.Code, _ = protocol.CodeOf(stateErr)
		res.Log = stateErr.Error()
	}
	return res, nil
}

func refused(err error, fee uint64) (TxResult, error) {
	code, ok := protocol.CodeOf(err)
	if !ok {
		return TxResult{}, Fault{err}
	}
	return TxResult{Code: code, Log: err.Error(), Fee: fee}, nil
}

func (e *execution) authenticate() error {
	s := e.signed
	switch t := s.Transition.(type) {
	case protocol.AddressSigned:
		addr := protocol.AddressOf(t.SignerKey())
		st, ok, err := drive.GetAddress(e.cache, addr)
		if err != nil {
			return err
		}
		if !ok {
			return protocol.ErrAddressNotFound{Address: addr}
		}
		if err := e.verify(t.SignerKey()); err != nil {
			return err
		}
		if reason := protocol.CheckNonce(st.Nonce, t.GetNonce(), e.r.limits.MaxNonceGap); reason != 0 {
			return protocol.ErrInvalidAddressNonce{Address: addr, Last: st.Nonce, Got: t.GetNonce(), Reason: reason}
		}
		e.payer = payer{address: &addr, balance: st.Balance, nonce: t.GetNonce()}
	case protocol.IdentitySigned:
		id, index := t.SignerIdentity()
		balance, ok, err := drive.GetIdentityBalance(e.cache, id)
		if err != nil {
			return err
		}
		if !ok {
			return protocol.ErrIdentityNotFound{ID: id}
		}
		pub, err := drive.GetIdentityKey(e.cache, id, index)
		if err != nil {
			return err
		}
		if pub == nil {
			return protocol.ErrMissingPublicKey{ID: id, KeyIndex: index}
		}
		if err := e.verify(pub); err != nil {
			return err
		}
		last, err := drive.GetIdentityNonce(e.cache, id)
		if err != nil {
			return err
		}
		if reason := protocol.CheckNonce(last, t.GetNonce(), e.r.limits.MaxNonceGap); reason != 0 {
			return protocol.ErrInvalidIdentityNonce{ID: id, Last: last, Got: t.GetNonce(), Reason: reason}
		}
		e.payer = payer{identity: &id, balance: balance, nonce: t.GetNonce()}
	default:
		return faultf("transition %s has no signer kind", s.Type())
	}
	return nil
}

// verify checks the signature; it is counted as one signature verification.
func (e *execution) verify(pub ed25519.PublicKey) error {
	if err := e.signed.VerifySignature(e.r.chainID, pub); err != nil {
		return err
	}
	e.sigs++
	return nil
}

// amount is what the transition moves out of the payer's balance besides the fee.
func (e *execution) amount() uint64 {
	switch t := e.signed.Transition.(type) {
	case *protocol.IdentityCreate:
		return t.Amount
	case *protocol.IdentityTopUp:
		return t.Amount
	case *protocol.IdentityCreditTransfer:
		return t.Amount
	case *protocol.IdentityCreditTransferToAddress:
		return t.Amount
	case *protocol.AddressFundsTransfer:
		return t.Amount
	}
	return 0
}

func (e *execution) insufficient(needed uint64) error {
	if e.payer.address != nil {
		return protocol.ErrAddressInsufficientBalance{Address: *e.payer.address, Balance: e.payer.balance, Needed: needed}
	}
	return protocol.ErrIdentityInsufficientBalance{ID: *e.payer.identity, Balance: e.payer.balance, Needed: needed}
}

// apply validates the transition against state and stages its writes, except the
// payer's debit and address credits, which come after the fee is known.
func (e *execution) apply() error {
	switch t := e.signed.Transition.(type) {
	case *protocol.IdentityCreate:
		id := protocol.NewIdentityID(*e.payer.address, t.Nonce)
		if err := drive.InsertIdentity(e.cache, drive.Identity{ID: id, Balance: t.Amount, Keys: t.Keys}); err != nil {
			return err
		}
		e.events = append(e.events, Event{Type: "identity_created", Attrs: []Attr{
			{"identity", id.String()}, {"funder", e.payer.address.String()}, {"amount", u64(t.Amount)},
		}})
	case *protocol.IdentityTopUp:
		return e.creditIdentity(t.Identity, t.Amount)
	case *protocol.IdentityCreditTransfer:
		return e.creditIdentity(t.Recipient, t.Amount)
	case *protocol.IdentityCreditTransferToAddress:
		return e.planAddressCredit(t.Recipient, t.Amount)
	case *protocol.AddressFundsTransfer:
		return e.planAddressCredit(t.Recipient, t.Amount)
	default:
		return faultf("transition %s has no state rules", t.Type())
	}
	return nil
}

func (e *execution) creditIdentity(id protocol.IdentityID, amount uint64) error {
	balance, ok, err := drive.GetIdentityBalance(e.cache, id)
	if err != nil {
		return err
	}
	if !ok {
		return protocol.ErrRecipientIdentityNotFound{ID: id}
	}
	if balance+amount < balance {
		return faultf("identity %s balance overflows", id)
	}
	if err := drive.SetIdentityBalance(e.cache, id, balance+amount); err != nil {
		return err
	}
	e.transferEvent(id.String(), amount)
	return nil
}

// planAddressCredit reads the recipient address (absent: a new address, nonce 0) and
// queues its credit.
func (e *execution) planAddressCredit(a protocol.Address, amount uint64) error {
	st, _, err := drive.GetAddress(e.cache, a)
	if err != nil {
		return err
	}
	if st.Balance+amount < st.Balance {
		return faultf("address %s balance overflows", a)
	}
	e.addressCredits = append(e.addressCredits, addressCredit{address: a, state: st, amount: amount})
	e.transferEvent(a.String(), amount)
	return nil
}

func (e *execution) writeAddressCredit(c addressCredit) error {
	c.state.Balance += c.amount
	e.changed[c.address] = c.state.Balance
	return drive.SetAddress(e.cache, c.address, c.state)
}

func (e *execution) transferEvent(to string, amount uint64) {
	e.events = append(e.events, Event{Type: "transfer", Attrs: []Attr{
		{"from", e.payerName()}, {"to", to}, {"amount", u64(amount)},
	}})
}

// payerWriteCost is what the payer's debit and nonce write, and the queued address
// credits, count: priced before they are made (the values are fixed-width, so the
// amounts do not change the cost).
func (e *execution) payerWriteCost() feeschedule.Operations {
	ops := feeschedule.Operations{Signatures: e.sigs}
	for _, c := range e.addressCredits {
		ops = ops.Add(drive.SetCost(drive.AddressKey(c.address), 16))
	}
	if e.payer.address != nil {
		return ops.Add(drive.SetCost(drive.AddressKey(*e.payer.address), 16))
	}
	id := *e.payer.identity
	return ops.Add(drive.SetCost(drive.IdentityBalanceKey(id), 8)).Add(drive.SetCost(drive.IdentityNonceKey(id), 8))
}

// writePayer stages the payer's new balance and consumed nonce.
func (e *execution) writePayer(balance uint64) error {
	if a := e.payer.address; a != nil {
		e.changed[*a] = balance
		return drive.SetAddress(e.cache, *a, drive.AddressState{Balance: balance, Nonce: e.payer.nonce})
	}
	// A transfer to itself is refused by structure validation, so no write of the
	// transition touched the payer's balance.
	id := *e.payer.identity
	if err := drive.SetIdentityBalance(e.cache, id, balance); err != nil {
		return err
	}
	return drive.SetIdentityNonce(e.cache, id, e.payer.nonce)
}

func (e *execution) payerName() string {
	if e.payer.address != nil {
		return e.payer.address.String()
	}
	return e.payer.identity.String()
}

func (e *execution) transitionEvent(fee uint64, err error) Event {
	code, _ := protocol.CodeOf(err)
	return Event{Type: "transition", Attrs: []Attr{
		{"type", e.signed.Type().String()},
		{"signer", e.payerName()},
		{"nonce", u64(e.payer.nonce)},
		{"fee", u64(fee)},
		{"code", strconv.FormatUint(uint64(code), 10)},
	}}
}

func u64(n uint64) string { return strconv.FormatUint(n, 10) }
