package app

import (
	"crypto/ed25519"
	"errors"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/feeschedule"
	"github.com/ttld-dev/ttld/protocol"
)

// payer is the account a transition is charged to, once authenticated.
type payer struct {
	address  *protocol.Address // set for an address signer
	identity *protocol.IdentityID
	balance  uint64
	nonce    protocol.NonceState // the payer's nonce record once the transition's nonce is used
}

// credit is a balance the transition raises, applied after the payer's debit. The
// recipient's state is read (and counted) when the credit is planned, and the credit is
// refused there if it would overflow.
type credit struct {
	address  *protocol.Address // an address credit, or
	identity *protocol.IdentityID
	before   drive.AddressState // the recipient's balance (and an address's nonce) before
	amount   uint64
}

// execution carries one transaction through the pipeline.
type execution struct {
	r      rules
	cache  *drive.Cache
	signed *protocol.Signed
	payer  payer
	sigs   uint64 // signatures verified
	// effects is what the transition staged besides its writes; a refusal drops it with
	// them (discard).
	effects
	// margin is what the fee estimate adds besides the absent reads' margin, for a read
	// that found nothing and whose later value would cost more than that margin covers.
	margin uint64
	// unbounded: what the transition does on a later state depends on something it
	// found absent in a way no margin bounds (a documents batch that found no contract,
	// no document for an action on one, or no recipient for a transfer); the estimate is
	// then the payer's balance,
	// which no later state that only adds what was absent lets the fee pass.
	unbounded bool
}

// effects is the per-transaction state a refusal throws away, reset in one place
// (discard). The estimate's margin and unbounded are not part of it: a paid refusal
// keeps them, since on a later state the transition may get further than it did here
// (refuseUnaffordable drops the margin).
type effects struct {
	// spent is what the transition moves out of the payer's balance besides its fee.
	spent   uint64
	credits []credit
	// changes are the address balances the transaction set, in the order it set them.
	changes []drive.BalanceChange
	events  []protocol.Event
	// stored counts the bytes (keys and values) the transition adds to the state for
	// ever; storageFees prices them into the fee's PerpetualStorage part.
	stored uint64
	// removed counts the stored bytes the transition removed, and refunds what their
	// payers get back; storageFees puts both into the fee result.
	removed uint64
	refunds []feeschedule.Refund
	// lifetime are the writes of documents of types with a ttl, priced by the
	// lifetime they have left (and prepaying their deletion) instead of stored.
	lifetime []drive.LifetimeWrite
	// ephemeral counts the bytes added under ttl'd time-range indexes, billed as
	// processing at the fee table's ephemeral rate.
	ephemeral uint64
}

// verdict is what a transition comes to once priced: its fee, the credits that fee
// charges, and the paid refusal it gets (nil: accepted).
type verdict struct {
	fee     feeschedule.Result
	charged uint64
	refusal error
}

// errUnaffordable: the payer's balance does not cover what the transition spends. The
// execution turns it into the payer's paid insufficient-balance refusal, priced on the
// authentication alone.
var errUnaffordable = errors.New("app: the payer's balance does not cover the amount")

// spend reserves amount of the payer's balance for the transition; a handler calls it
// before it plans any credit, so that what is credited is always what was affordable.
func (e *execution) spend(amount uint64) error {
	if e.payer.balance-e.spent < amount {
		e.spent += amount // reported in the refusal; nothing is written
		return errUnaffordable
	}
	e.spent += amount
	return nil
}

// storage records bytes (keys and values) the transition adds to the state for ever: a
// handler calls it with the size of what it staged. storageFees prices their perpetual
// storage fee with the processing fee.
func (e *execution) storage(bytesAdded uint64) { e.stored += bytesAdded }

// discard drops the transition's staged writes and its effects; what its reads cost
// stays counted.
func (e *execution) discard() {
	ops := e.cache.Operations()
	e.cache.Discard()
	e.cache.Charge(ops)
	e.effects = effects{}
}

// Judge is how CheckTx judges a transaction for the mempool between blocks (docs/TX.md,
// "What accepted means"): as the block that includes it would, whenever that block
// comes.
type Judge struct {
	// LastMs is the last block's time (JudgeTime). The transaction is judged at the
	// earliest time the next block can have, LastMs + 1, as the dry run is.
	LastMs uint64
	// MarginMs is how much later than that the block that includes the transaction
	// may come: a deadline that passes within it counts as passed
	// (protocol.Context.MarginMs).
	MarginMs uint64
	// Verifier checks signatures; nil: protocol.VerifyEd25519.
	Verifier protocol.Verifier
}

// CheckTx runs tx against kv (the check state) as the next block would (Judge). Only a
// success is kept in kv, so later transactions of the same signer build on it: the
// mempool carries what can succeed, and a paid refusal, which the block would charge,
// is refused here without touching the check state. A success must leave its payer
// able to pay the largest fee a later block may charge it (its MaxCharged), and that
// fee is what it takes from the payer's balance in kv, so that the payer's next
// transactions are judged on what remains whatever the block charges
// (protocol.ErrMaxFeeNotCovered otherwise). A Fault leaves kv unchanged too.
func CheckTx(kv drive.KV, tx []byte, j Judge) (TxResult, error) {
	r, err := loadRules(kv, j.LastMs+1, j.Verifier)
	if err != nil {
		return TxResult{}, asFault(err)
	}
	r.ctx.MarginMs, r.check = j.MarginMs, true
	res, staged, err := stageTxWith(kv, tx, r)
	if err != nil || res.Code != protocol.CodeOK {
		return res, err
	}
	return res, asFault(staged.Flush())
}

// executeTx runs one transaction over kv. collected is what the fee pool holds with the
// block's earlier fees; the transaction's result comes back with the new sum and the
// address balances it set. A consensus refusal is a TxResult with its code; the error is
// a Fault.
func executeTx(kv drive.KV, r rules, tx []byte, collected uint64) (TxResult, uint64, error) {
	signed, err := protocol.Decode(tx, r.ctx)
	if err != nil {
		res, err := refused(err)
		return res, collected, err
	}
	e := &execution{r: r, cache: drive.NewCache(kv), signed: signed}
	res, err := e.run(collected)
	if err != nil {
		return TxResult{}, collected, asFault(err)
	}
	if res.Code == protocol.CodeOK || res.Code.Paid() {
		collected += res.Charged // run checked that it fits
	}
	return res, collected, nil
}

// run carries the transition through the pipeline: authenticate, apply, price the
// fee, judge affordability, check the charge, charge, flush. What it returns through
// refused is an unpaid refusal, which changes nothing; a paid refusal is charged and
// flushed as a success is. An error is a Fault.
func (e *execution) run(collected uint64) (TxResult, error) {
	// Authenticate: signer exists, signature, nonce. Refusals here are unpaid.
	if err := e.authenticate(); err != nil {
		return refused(err)
	}
	authOps := e.cache.Operations()
	refusal, err := e.apply()
	if err != nil {
		return refused(err)
	}
	v, err := e.price(refusal)
	if err != nil {
		return refused(err)
	}
	if e.unaffordable(v) {
		if v, err = e.refuseUnaffordable(v.fee, authOps); err != nil {
			return refused(err)
		}
	}
	if err := e.payable(v.charged, collected); err != nil {
		return refused(err)
	}
	maxCharged := e.maxCharged(v.charged)
	debit := v.charged
	if e.r.check && v.refusal == nil {
		if e.payer.balance-e.spent < maxCharged {
			return refused(protocol.ErrMaxFeeNotCovered{Payer: e.payerName(), Balance: e.payer.balance, Amount: e.spent, Fee: v.charged, MaxFee: maxCharged})
		}
		debit = maxCharged
	}
	if err := e.charge(debit); err != nil {
		return TxResult{}, err
	}
	if err := e.cache.Flush(); err != nil {
		return TxResult{}, err
	}
	return e.result(v, maxCharged), nil
}

// apply runs the transition's handler: state validation and the transition's own
// writes. refusal is nil for a success; errUnaffordable, with the effects kept for the
// refusal that names them; or a paid refusal, found before anything is written, with
// the effects dropped, so that its fee is priced on the reads it made. stop is an
// unpaid refusal or a Fault, told apart by refused.
func (e *execution) apply() (refusal, stop error) {
	err := handlers[e.signed.Type()](e, e.signed.Transition)
	if err == nil || errors.Is(err, errUnaffordable) {
		return err, nil
	}
	if code, ok := protocol.CodeOf(err); !ok || !code.Paid() {
		return nil, err
	}
	e.discard()
	return err, nil
}

// price is the fee of the applied transition: processing for the reads and writes it
// made and the payer's and credits' writes still to come, and for a success what its
// writes store (storageFees). An overflow is an unpaid refusal.
func (e *execution) price(refusal error) (verdict, error) {
	fee := e.processing(e.cache.Operations())
	if refusal == nil {
		var err error
		if fee, err = e.storageFees(fee); err != nil {
			return verdict{}, err
		}
	}
	charged, err := fee.Charged()
	if err != nil {
		return verdict{}, protocol.ErrCreditOverflow{Account: "the fee", Balance: fee.Processing, Amount: fee.PerpetualStorage}
	}
	return verdict{fee: fee, charged: charged, refusal: refusal}, nil
}

// storageFees adds to fee the storage a successful transition's writes pay for: the
// perpetual storage of the bytes it stored, the refunds of the bytes it removed, the
// lifetime storage of its ttl'd documents (lifetimeFees) and its ephemeral bytes. An
// overflow is an unpaid refusal naming the part that overflowed.
func (e *execution) storageFees(fee feeschedule.Result) (feeschedule.Result, error) {
	storage, err := e.r.fees.PerpetualStorageFee(e.stored)
	if err != nil {
		return fee, protocol.ErrCreditOverflow{Account: "the storage fee", Amount: e.stored}
	}
	fee.PerpetualStorage = storage
	if fee, err = fee.Add(feeschedule.Result{Refunds: e.refunds, RemovedBytes: e.removed}); err != nil {
		return fee, protocol.ErrCreditOverflow{Account: "the refunds", Amount: e.removed}
	}
	lifetime, err := e.lifetimeFees()
	if err == nil {
		fee, err = fee.Add(lifetime)
	}
	if err != nil {
		return fee, protocol.ErrCreditOverflow{Account: "the lifetime storage fee"}
	}
	eph, err := e.r.fees.EphemeralFee(e.ephemeral)
	if err == nil {
		fee, err = fee.Add(feeschedule.Result{Processing: eph})
	}
	if err != nil {
		return fee, protocol.ErrCreditOverflow{Account: "the ephemeral bytes fee", Amount: e.ephemeral}
	}
	return fee, nil
}

// unaffordable: the handler found the amount beyond the payer's balance, or the balance
// does not cover a success's amount and fee.
func (e *execution) unaffordable(v verdict) bool {
	if v.refusal != nil {
		return errors.Is(v.refusal, errUnaffordable)
	}
	return e.payer.balance < e.spent || e.payer.balance-e.spent < v.charged
}

// refuseUnaffordable turns the transition into the paid insufficient-balance refusal,
// priced on the authentication alone (authOps) if the payer can pay that much; it names
// the amount and the whole fee the payer could not pay. The effects go, and so does the
// margin, which priced the transition's own work on a later state; unbounded stays set.
func (e *execution) refuseUnaffordable(whole feeschedule.Result, authOps feeschedule.Operations) (verdict, error) {
	amount := e.spent
	e.discard()
	e.margin = 0
	fee := e.processing(authOps)
	refusal := e.insufficient(whole, amount, fee.Processing)
	charged, err := fee.Charged()
	if err != nil {
		return verdict{}, protocol.ErrCreditOverflow{Account: "the fee", Amount: fee.Processing}
	}
	return verdict{fee: fee, charged: charged, refusal: refusal}, nil
}

// payable refuses, unpaid, a charge the payer's balance or the block's fee pool (which
// holds collected) cannot take.
func (e *execution) payable(charged, collected uint64) error {
	if e.payer.balance < charged {
		return protocol.ErrBalanceIsNotEnough{Balance: e.payer.balance, Fee: charged}
	}
	if collected+charged < collected {
		return protocol.ErrCreditOverflow{Account: "the fee pool", Balance: collected, Amount: charged}
	}
	return nil
}

// charge stages the payer's debit of the amount and the fee, with its nonce, then the
// credits. NB: in that order, after the handler's writes: the cache flushes keys in
// the order they were first staged, and the IAVL root depends on that order.
func (e *execution) charge(charged uint64) error {
	if err := e.writePayer(e.payer.balance - e.spent - charged); err != nil {
		return err
	}
	for _, c := range e.credits {
		if err := e.writeCredit(c); err != nil {
			return err
		}
	}
	return nil
}

// maxCharged is the estimate's ceiling (MaxCharged): charged plus the margin of what
// the transition found absent, counted before the cache is flushed, or the payer's
// balance when no margin bounds it.
func (e *execution) maxCharged(charged uint64) uint64 {
	margin := e.cache.Operations().AbsentReads*e.r.fees.AbsentReadMargin(drive.MaxReadValueLen) + e.margin
	maxCharged := charged + margin
	if e.unbounded || maxCharged < charged {
		maxCharged = max(charged, e.payer.balance)
	}
	return maxCharged
}

// result is the charged transition's result: its fee, the balances and events it set
// with the transition event last, and a paid refusal's code and log.
func (e *execution) result(v verdict, maxCharged uint64) TxResult {
	res := TxResult{Fee: v.fee, Charged: v.charged, MaxCharged: maxCharged, Changes: e.changes, Events: append(e.events, e.transitionEvent(v))}
	if v.refusal != nil {
		res.Code, _ = protocol.CodeOf(v.refusal)
		res.Log, res.Err = v.refusal.Error(), v.refusal
	}
	return res
}

// lifetimeFees prices the writes of documents with a ttl (Document Time To Live, "Fees"): every
// byte a write adds, at the price of the lifetime the document has left at the block
// time, and a renewal's the lifetime it adds to the bytes the document had (renewalFee),
// reported under the number of epochs that lifetime spans; a create prepays its
// deletion (base, index levels, document bytes), a change the deletion of the document
// bytes it adds. An overflow is a feeschedule.ErrOverflow.
func (e *execution) lifetimeFees() (feeschedule.Result, error) {
	var out feeschedule.Result
	now := e.r.ctx.BlockTimeMs
	for _, w := range e.lifetime {
		var remaining uint64
		if w.ExpiresAtMs > now {
			remaining = w.ExpiresAtMs - now
		}
		credits, err := e.r.fees.TTLStorageFee(w.Bytes, remaining)
		if err != nil {
			return out, err
		}
		epochs := feeschedule.LifetimeEpochs(remaining, e.r.params.EpochLengthS)
		if w.MarginBytes > 0 {
			margin, err := e.r.fees.TTLStorageFee(w.MarginBytes, remaining)
			if err != nil {
				return out, err
			}
			e.margin += margin
		}
		if w.Renewed > 0 {
			renewal, margin, err := e.renewalFee(w, remaining)
			if err != nil {
				return out, err
			}
			if out, err = out.Add(feeschedule.Result{LifetimeStorage: []feeschedule.LifetimeFee{{Epochs: epochs, Credits: renewal}}}); err != nil {
				return out, err
			}
			e.margin += margin
		}
		var prepay uint64
		if w.Created {
			prepay, err = e.r.fees.DeletionPrepay(w.IndexLevels, w.DocumentBytes)
		} else {
			prepay, err = e.r.fees.ChangeDeletionPrepay(w.DocumentBytes)
		}
		if err != nil {
			return out, err
		}
		part := feeschedule.Result{DeletionPrepay: prepay}
		if credits > 0 {
			part.LifetimeStorage = []feeschedule.LifetimeFee{{Epochs: epochs, Credits: credits}}
		}
		if out, err = out.Add(part); err != nil {
			return out, err
		}
	}
	return out, nil
}

// renewalFee prices renewal write w, which leaves its document remaining ms to live:
// its bytes from the lifetime they had left to remaining (feeschedule.RenewalFee). The
// lifetime they had left shrinks as blocks pass, so the same renewal costs more in a
// later block, up to the price of a lifetime of 0: margin is that difference, what a
// fee estimate adds to stay an upper bound.
func (e *execution) renewalFee(w drive.LifetimeWrite, remaining uint64) (fee, margin uint64, err error) {
	var had uint64
	if w.RenewedFromMs > e.r.ctx.BlockTimeMs {
		had = w.RenewedFromMs - e.r.ctx.BlockTimeMs
	}
	if fee, err = e.r.fees.RenewalFee(w.Renewed, had, remaining); err != nil {
		return 0, 0, err
	}
	latest, err := e.r.fees.RenewalFee(w.Renewed, 0, remaining)
	if err != nil {
		return 0, 0, err
	}
	return fee, latest - fee, nil
}

// refused is the result of an unpaid refusal; an error without a code is a Fault.
func refused(err error) (TxResult, error) {
	code, ok := protocol.CodeOf(err)
	if !ok {
		return TxResult{}, asFault(err)
	}
	return TxResult{Code: code, Log: err.Error(), Err: err}, nil
}

// processing prices ops plus the writes still to come: the payer's debit and nonce and
// the planned credits (fixed-width values, so the amounts do not change the price).
func (e *execution) processing(ops feeschedule.Operations) feeschedule.Result {
	ops = ops.Add(feeschedule.Operations{Signatures: e.sigs})
	for _, c := range e.credits {
		if c.address != nil {
			ops = ops.Add(drive.SetCost(drive.AddressKey(*c.address), drive.AddressStateLen))
		} else {
			ops = ops.Add(drive.SetCost(drive.IdentityBalanceKey(*c.identity), drive.U64Len))
		}
	}
	if e.payer.address != nil {
		ops = ops.Add(drive.SetCost(drive.AddressKey(*e.payer.address), drive.AddressStateLen))
	} else {
		id := *e.payer.identity
		ops = ops.Add(drive.SetCost(drive.IdentityBalanceKey(id), drive.U64Len)).Add(drive.SetCost(drive.IdentityNonceKey(id), drive.U64Len))
	}
	return feeschedule.Result{Processing: e.r.fees.ProcessingFee(ops)}
}

func (e *execution) authenticate() error {
	sg := e.signed.Signer()
	switch sg.Kind {
	case protocol.SignerAddress:
		addr := sg.Address()
		st, ok, err := drive.GetAddress(e.cache, addr)
		if err != nil {
			return err
		}
		if !ok {
			return protocol.ErrAddressNotFound{Address: addr}
		}
		if err := e.verify(sg.PubKey); err != nil {
			return err
		}
		nonce, reason := protocol.UseNonce(st.Nonce, e.signed.GetNonce(), e.r.ctx.Limits.MaxNonceGap)
		if reason != 0 {
			return protocol.ErrInvalidAddressNonce{Address: addr, Last: st.Nonce.Last, Got: e.signed.GetNonce(), Reason: reason}
		}
		e.payer = payer{address: &addr, balance: st.Balance, nonce: nonce}
	case protocol.SignerIdentity:
		id := sg.Identity
		balance, ok, err := drive.GetIdentityBalance(e.cache, id)
		if err != nil {
			return err
		}
		if !ok {
			return protocol.ErrIdentityNotFound{ID: id}
		}
		pub, err := drive.GetIdentityKey(e.cache, id, sg.KeyIndex)
		if err != nil {
			return err
		}
		if pub == nil {
			return protocol.ErrMissingPublicKey{ID: id, KeyIndex: sg.KeyIndex}
		}
		if err := e.verify(pub); err != nil {
			return err
		}
		last, err := drive.GetIdentityNonce(e.cache, id)
		if err != nil {
			return err
		}
		nonce, reason := protocol.UseNonce(last, e.signed.GetNonce(), e.r.ctx.Limits.MaxNonceGap)
		if reason != 0 {
			return protocol.ErrInvalidIdentityNonce{ID: id, Last: last.Last, Got: e.signed.GetNonce(), Reason: reason}
		}
		e.payer = payer{identity: &id, balance: balance, nonce: nonce}
	default:
		return faultf("transition %s has signer kind %d", e.signed.Type(), sg.Kind)
	}
	return nil
}

// verify checks the signature; it is counted as one signature verification.
func (e *execution) verify(pub ed25519.PublicKey) error {
	if err := e.signed.VerifySignature(e.r.chainID, pub, e.r.verifier); err != nil {
		return err
	}
	e.sigs++
	return nil
}

// insufficient is the refusal of a payer that cannot pay amount and the whole fee,
// charged charged instead.
func (e *execution) insufficient(whole feeschedule.Result, amount, charged uint64) error {
	parts := feeParts(whole)
	if e.payer.address != nil {
		return protocol.ErrAddressInsufficientBalance{Address: *e.payer.address, Balance: e.payer.balance, Amount: amount, Fee: parts, Charged: charged}
	}
	return protocol.ErrIdentityInsufficientBalance{ID: *e.payer.identity, Balance: e.payer.balance, Amount: amount, Fee: parts, Charged: charged}
}

// creditIdentity reads the recipient identity and queues its credit.
func (e *execution) creditIdentity(id protocol.IdentityID, amount uint64) error {
	balance, ok, err := drive.GetIdentityBalance(e.cache, id)
	if err != nil {
		return err
	}
	if !ok {
		return protocol.ErrRecipientIdentityNotFound{ID: id}
	}
	if e.payer.identity != nil && *e.payer.identity == id {
		return faultf("%s credits its own payer: its structure rules must refuse that", e.signed.Type())
	}
	if balance+amount < balance {
		return protocol.ErrCreditOverflow{Account: "identity " + id.String(), Balance: balance, Amount: amount}
	}
	e.credits = append(e.credits, credit{identity: &id, before: drive.AddressState{Balance: balance}, amount: amount})
	e.transferEvent(id.String(), amount)
	return nil
}

// creditAddress reads the recipient address (absent: a new address, nonce 0) and queues
// its credit.
func (e *execution) creditAddress(a protocol.Address, amount uint64) error {
	st, _, err := drive.GetAddress(e.cache, a)
	if err != nil {
		return err
	}
	if e.payer.address != nil && *e.payer.address == a {
		return faultf("%s credits its own payer: its structure rules must refuse that", e.signed.Type())
	}
	if st.Balance+amount < st.Balance {
		return protocol.ErrCreditOverflow{Account: "address " + a.String(), Balance: st.Balance, Amount: amount}
	}
	e.credits = append(e.credits, credit{address: &a, before: st, amount: amount})
	e.transferEvent(a.String(), amount)
	return nil
}

func (e *execution) writeCredit(c credit) error {
	st := c.before
	st.Balance += c.amount // checked when planned
	if c.address != nil {
		e.changes = append(e.changes, drive.BalanceChange{Address: *c.address, Balance: st.Balance})
		return drive.SetAddress(e.cache, *c.address, st)
	}
	return drive.SetIdentityBalance(e.cache, *c.identity, st.Balance)
}

func (e *execution) transferEvent(to string, amount uint64) {
	e.events = append(e.events, protocol.NewTransferEvent(e.payerName(), to, amount))
}

// writePayer stages the payer's new balance and consumed nonce. No credit of the
// transition goes to the payer (structure validation refuses transfers to oneself), so
// the payer's balance is written once.
func (e *execution) writePayer(balance uint64) error {
	if a := e.payer.address; a != nil {
		e.changes = append(e.changes, drive.BalanceChange{Address: *a, Balance: balance})
		return drive.SetAddress(e.cache, *a, drive.AddressState{Balance: balance, Nonce: e.payer.nonce})
	}
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

// transitionEvent reports the priced transition: its fee by parts, which sum to what
// was charged, and the refunds it earned.
func (e *execution) transitionEvent(v verdict) protocol.Event {
	code, _ := protocol.CodeOf(v.refusal)
	// NB: the refunds give back part of what the epochs' pools hold, credits that exist,
	// so their sum fits in a u64 as the running total does; the cap never applies.
	refunds, err := v.fee.RefundTotal()
	if err != nil {
		refunds = ^uint64(0)
	}
	return protocol.TransitionEvent{Type: e.signed.Type(), Signer: e.payerName(), Nonce: e.signed.GetNonce(),
		Fee: feeParts(v.fee), Refunds: refunds, Code: code}.Event()
}

// feeParts is what fee charges, part by part: the lifetime storage parts summed, as
// Charged sums them (a fee whose sum overflows was refused when priced).
func feeParts(fee feeschedule.Result) protocol.FeeParts {
	parts := protocol.FeeParts{Processing: fee.Processing, PerpetualStorage: fee.PerpetualStorage, DeletionPrepay: fee.DeletionPrepay}
	for _, l := range fee.LifetimeStorage {
		parts.LifetimeStorage += l.Credits
	}
	return parts
}

// DryRun runs tx against kv as the next block would at the earliest, 1 ms after the
// last block's time lastMs, and changes nothing: the fee estimate of a transaction
// before it is sent. Its MaxCharged is never below what a block on kv's state, or on a
// later state where keys it found absent have been written, charges, at any later
// time. (Judged at lastMs itself, a document written in the last block would keep an
// index entry on $updatedAt that any later block moves.)
func DryRun(kv drive.KV, tx []byte, lastMs uint64) (TxResult, error) {
	r, err := loadRules(kv, lastMs+1, nil)
	if err != nil {
		return TxResult{}, asFault(err)
	}
	res, _, err := stageTxWith(kv, tx, r)
	return res, err
}

// stageTxWith runs tx over a cache on kv, outside a block, under r, and returns the
// cache holding its writes: CheckTx keeps them on success, DryRun never does.
func stageTxWith(kv drive.KV, tx []byte, r rules) (TxResult, *drive.Cache, error) {
	staged := drive.NewCache(kv)
	pool, err := epochPool(staged, r, r.ctx.BlockTimeMs)
	if err != nil {
		return TxResult{}, nil, asFault(err)
	}
	res, _, err := executeTx(staged, r, tx, pool)
	return res, staged, err
}

// epochPool is what the fee pool of the epoch of a block at atMs holds: what a
// transaction's fee is checked against outside a block.
func epochPool(kv drive.KV, r rules, atMs uint64) (uint64, error) {
	epoch := protocol.EpochIndex(r.params.GenesisTimeMs, r.params.EpochLengthS, atMs)
	return drive.GetU64(kv, drive.EpochFeesKey(epoch))
}

// SignatureChecks returns the signature checks that txs, in a block at atMs on kv's
// state, will make as far as that state tells them before the block runs: the signer's
// key from the transaction, or an identity's key from kv. A node verifies them ahead of
// the block, in parallel, through the Verifier the block then uses, which remembers
// what passed: execution stays sequential and its answers are ed25519's, so nothing
// here can change a block's result. A transaction that does not decode, or whose key kv
// does not hold (an identity the block itself creates), has no check here and is
// verified by the block as usual. The error is a Fault.
func SignatureChecks(kv drive.KV, txs [][]byte, atMs uint64) ([]protocol.SignatureCheck, error) {
	sr, err := NewSignatureReader(kv, atMs)
	if err != nil {
		return nil, err
	}
	checks := make([]protocol.SignatureCheck, 0, len(txs))
	for _, tx := range txs {
		c, ok, err := sr.Check(tx)
		if err != nil {
			return nil, err
		}
		if ok {
			checks = append(checks, c)
		}
	}
	return checks, nil
}

// SignatureReader tells, under the rules in force in a state at a time, what a
// transaction's bytes say before it runs: its signer and, as SignatureChecks does one
// at a time, its signature check. CheckTx reads them before it touches the check
// state, on the goroutine that received the transaction: it verifies the signature
// there, with no lock held, and serializes the transactions of one signer. It is safe
// for concurrent use when its KV is.
type SignatureReader struct {
	kv drive.KV
	r  rules
}

// NewSignatureReader reads the rules in force in kv at atMs. The error is a Fault.
func NewSignatureReader(kv drive.KV, atMs uint64) (*SignatureReader, error) {
	r, err := loadRules(kv, atMs, nil)
	if err != nil {
		return nil, asFault(err)
	}
	return &SignatureReader{kv: kv, r: r}, nil
}

// Intake is what a transaction's bytes and a state say of it before it runs.
type Intake struct {
	// Decoded: the bytes decode under the rules in force, and Signer is the signer.
	Decoded bool
	Signer  protocol.Signer
	// Checked: the state holds the signer's key, and Check is the signature check the
	// transaction makes.
	Checked bool
	Check   protocol.SignatureCheck
}

// Intake reads tx's signer and signature check. The error is a Fault.
func (sr *SignatureReader) Intake(tx []byte) (Intake, error) {
	s, err := protocol.Decode(tx, sr.r.ctx)
	if err != nil {
		return Intake{}, nil
	}
	in := Intake{Decoded: true, Signer: s.Signer()}
	pub := in.Signer.PubKey
	if in.Signer.Kind == protocol.SignerIdentity {
		if pub, err = drive.GetIdentityKey(sr.kv, in.Signer.Identity, in.Signer.KeyIndex); err != nil {
			return in, asFault(err)
		}
	}
	if len(pub) == ed25519.PublicKeySize {
		in.Checked, in.Check = true, s.SignatureCheck(sr.r.chainID, pub)
	}
	return in, nil
}

// Check returns the signature check tx makes, if it decodes and kv holds its signer's
// key. The error is a Fault.
func (sr *SignatureReader) Check(tx []byte) (protocol.SignatureCheck, bool, error) {
	in, err := sr.Intake(tx)
	return in.Check, in.Checked, err
}

// JudgeTime is the block time CheckTx and queries judge time-dependent rules at between
// blocks: the last executed block's time, or the genesis time before the first block.
func JudgeTime(kv drive.KV) (uint64, error) {
	last, ok, err := drive.GetLastBlock(kv)
	if err != nil || ok {
		return last.TimeMs, err
	}
	p, err := drive.GetChainParams(kv)
	return p.GenesisTimeMs, err
}
