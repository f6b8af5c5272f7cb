package abci

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"

	abcitypes "github.com/cometbft/cometbft/abci/types"

	"github.com/ttld-dev/ttld/app"
	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// stagedShards is how many independently locked maps the check state stages its
// writes in; signerStripes how many locks the signers' transactions are spread over.
const (
	stagedShards  = 64
	signerStripes = 256
)

// optimisticAttempts is how many times a transaction is run without locks before it
// runs holding every shard: it only fails when another transaction staged a key it
// read in the meantime.
const optimisticAttempts = 3

// checkState is the state CheckTx judges transactions against: the last saved version
// (base: a drive.Memo of it; nothing before the first commit) with the writes of every
// transaction accepted since staged over it. Many goroutines use it at once
// (docs/ARCHITECTURE.md, "The check state and the mempool"):
//
//   - a transaction's decoding, its signature, its reads of the saved version and its
//     fee run on the caller's goroutine, under no lock shared with other signers; the
//     transactions of one signer take turns (signers);
//   - a run records the version of every staged key it read and keeps its writes;
//     settling it locks the shards of those keys alone, checks that none changed, and
//     stages the writes: the transaction is then judged as if it ran alone at that
//     point of a serial order, its position. A run whose reads changed runs again;
//   - a transaction that iterates a range (a documents batch, a contract) runs holding
//     every shard (exclusive): a range's staged keys spread over all of them.
//
// Every answer (acceptance, refusal, dry run) is the answer of one serial order of the
// accepted transactions.
type checkState struct {
	base drive.KV
	// lastMs is the last block's time (app.JudgeTime), which only a block changes:
	// transactions are judged as the next block would, at lastMs+1 at the earliest and
	// up to marginMs later (app.Judge).
	lastMs, marginMs uint64
	// intake reads a transaction's signer and signature check from the check state.
	intake *app.SignatureReader

	seed    maphash.Seed
	shards  [stagedShards]stagedShard
	signers [signerStripes]sync.Mutex
	// applied is the position of the last transaction whose writes were staged.
	applied atomic.Uint64

	// accepted are the transactions the check state holds and what they take of the
	// mempool (carry.go).
	accepted accepted
	// carried are the verdicts of the transactions carried over from the check state
	// before the last block, which CometBFT's recheck asks for (carry.go); nil: none.
	carried *carried
	// settled is set once the recheck after the last block is over and the check state
	// holds only what CometBFT's mempool holds (Application.settledCheck).
	settled atomic.Bool
}

type stagedShard struct {
	mu     sync.RWMutex
	values map[string]stagedValue
}

// stagedValue is a key's value in the check state and the position of the transaction
// that staged it, its version (0: the base's value, never staged).
type stagedValue struct {
	value   []byte // nil: deleted
	version uint64
}

// newCheckState stages over base; seed, if not nil, writes the state's first contents
// (the genesis state, before the first commit). Deadlines are judged marginMs ahead
// (app.Judge), and the accepted transactions may take up to limits of the mempool.
func newCheckState(base drive.KV, seed func(drive.KV) error, marginMs uint64, limits MempoolLimits) (*checkState, error) {
	cs := &checkState{base: base, seed: maphash.MakeSeed(), marginMs: marginMs}
	cs.accepted.init(limits)
	if seed != nil {
		if _, err := cs.exclusive(seed); err != nil {
			return nil, err
		}
	}
	r := checkReader{cs}
	last, err := app.JudgeTime(r)
	if err != nil {
		return nil, err
	}
	cs.lastMs = last
	if cs.intake, err = app.NewSignatureReader(r, last+1); err != nil {
		return nil, err
	}
	return cs, nil
}

// shardOf is the shard a key is staged in.
func (cs *checkState) shardOf(key string) int {
	return int(maphash.String(cs.seed, key) % stagedShards)
}

// checkTx judges tx on the check state and stages it if it succeeds; position is its
// place in the serial order the check state's answers follow: a transaction that
// staged writes is at its position, one that did not comes after the transaction at
// its position and before the next. A new transaction's signature is verified first,
// outside every lock; a recheck's was remembered when it was new.
func (cs *checkState) checkTx(tx []byte, isNew bool, sigs *verifiedSignatures) (res app.TxResult, position uint64, err error) {
	in, err := cs.intake.Intake(tx)
	if err != nil {
		return app.TxResult{}, 0, err
	}
	if in.Checked && isNew {
		sigs.Verify(in.Check.PubKey, in.Check.Message, in.Check.Signature)
	}
	// NB: only a new transaction's deadlines are judged with the margin. One accepted
	// already is judged again, after a block, at the next block's earliest time: the
	// margin would drop it from the mempool, with nobody told, when its deadline nears,
	// though the next block may well include it in time.
	var margin uint64
	if isNew {
		margin = cs.marginMs
	}
	if in.Decoded {
		stripe := &cs.signers[maphash.Bytes(cs.seed, signerKey(in.Signer))%signerStripes]
		stripe.Lock()
		defer stripe.Unlock()
	}
	position, err = cs.judge(func(kv drive.KV) error {
		var err error
		res, err = app.CheckTx(kv, tx, app.Judge{LastMs: cs.lastMs, MarginMs: margin, Verifier: sigs})
		return err
	})
	if err == nil && res.Code == protocol.CodeOK {
		cs.accepted.add(tx, position)
	}
	return res, position, err
}

// signerKey is the account a signer's nonce and balance live under.
func signerKey(sg protocol.Signer) []byte {
	if sg.Kind == protocol.SignerIdentity {
		return sg.Identity[:]
	}
	a := sg.Address()
	return a[:]
}

// judge runs fn on the check state as one transaction, staging what fn writes, and
// returns its position. fn may run more than once; the last run's result is the one.
func (cs *checkState) judge(fn func(drive.KV) error) (position uint64, err error) {
	for attempt := 0; attempt < optimisticAttempts; attempt++ {
		r := &run{cs: cs, reads: map[string]uint64{}, writes: map[string][]byte{}}
		err = fn(r)
		if r.iterated {
			break
		}
		if position, ok := cs.settle(r); ok {
			return position, err
		}
	}
	return cs.exclusive(fn)
}

// settle locks the shards of the keys r read (shared) and wrote (exclusive), in order,
// checks that every key read still has the version r saw, and stages r's writes. ok is
// false when a read changed: nothing is staged.
func (cs *checkState) settle(r *run) (position uint64, ok bool) {
	const (
		read = 1 + iota
		written
	)
	var modes [stagedShards]uint8
	for k := range r.reads {
		modes[cs.shardOf(k)] = read
	}
	for k := range r.writes {
		modes[cs.shardOf(k)] = written
	}
	for i, m := range modes {
		switch m {
		case read:
			cs.shards[i].mu.RLock()
		case written:
			cs.shards[i].mu.Lock()
		}
	}
	defer func() {
		for i, m := range modes {
			switch m {
			case read:
				cs.shards[i].mu.RUnlock()
			case written:
				cs.shards[i].mu.Unlock()
			}
		}
	}()
	for k, version := range r.reads {
		if cs.shards[cs.shardOf(k)].values[k].version != version {
			return 0, false
		}
	}
	return cs.stage(r.writes), true
}

// exclusive runs fn holding every shard, and stages what it writes.
func (cs *checkState) exclusive(fn func(drive.KV) error) (position uint64, err error) {
	for i := range cs.shards {
		cs.shards[i].mu.Lock()
	}
	defer func() {
		for i := range cs.shards {
			cs.shards[i].mu.Unlock()
		}
	}()
	r := &run{cs: cs, locked: true, writes: map[string][]byte{}}
	err = fn(r)
	return cs.stage(r.writes), err
}

// stage writes a settled run's writes at the next position, or returns the last
// position when there are none. The caller holds the shards of the keys written.
func (cs *checkState) stage(writes map[string][]byte) uint64 {
	if len(writes) == 0 {
		return cs.applied.Load()
	}
	position := cs.applied.Add(1)
	for k, v := range writes {
		s := &cs.shards[cs.shardOf(k)]
		if s.values == nil {
			s.values = map[string]stagedValue{}
		}
		s.values[k] = stagedValue{value: v, version: position}
	}
	return position
}

// staged reads key's staged value, taking its shard's lock unless the caller holds it.
func (cs *checkState) staged(key []byte, locked bool) (stagedValue, bool) {
	s := &cs.shards[cs.shardOf(string(key))]
	if !locked {
		s.mu.RLock()
		defer s.mu.RUnlock()
	}
	v, ok := s.values[string(key)]
	return v, ok
}

// merged is a cache over the base holding the staged values in [start, end), then
// writes in it, to iterate them in order with the base's keys. The caller holds every
// shard.
func (cs *checkState) merged(start, end []byte, writes map[string][]byte) (*drive.Cache, error) {
	c := drive.NewCache(cs.base)
	put := func(k string, v []byte) error {
		key := []byte(k)
		if (start != nil && bytes.Compare(key, start) < 0) || (end != nil && bytes.Compare(key, end) >= 0) {
			return nil
		}
		if v == nil {
			return c.Delete(key)
		}
		return c.Set(key, v)
	}
	for i := range cs.shards {
		for k, v := range cs.shards[i].values {
			if err := put(k, v.value); err != nil {
				return nil, err
			}
		}
	}
	for k, v := range writes {
		if err := put(k, v); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// errIterates stops a run without locks at its first iteration: it runs again holding
// every shard.
var errIterates = errors.New("abci: an iteration of the check state runs holding every shard")

// run is one execution of a transaction over the check state: the drive.KV that
// app.CheckTx and app.DryRun read and write. It reads its own writes first, then the
// staged values, then the base, and keeps its writes until it is settled.
type run struct {
	cs *checkState
	// locked: the run holds every shard (exclusive); otherwise it records what it reads
	// and refuses to iterate.
	locked bool
	// reads are the versions of the keys read before the run wrote them (0: the base's).
	reads    map[string]uint64
	writes   map[string][]byte // nil: deleted
	iterated bool
}

func (r *run) Get(key []byte) ([]byte, error) {
	if v, ok := r.writes[string(key)]; ok {
		return v, nil
	}
	sv, ok := r.cs.staged(key, r.locked)
	if !r.locked {
		if _, seen := r.reads[string(key)]; !seen {
			r.reads[string(key)] = sv.version
		}
	}
	if ok {
		return sv.value, nil
	}
	return r.cs.base.Get(key)
}

func (r *run) Set(key, value []byte) error {
	if len(value) == 0 {
		return drive.ErrEmptyValue
	}
	r.writes[string(key)] = append([]byte(nil), value...)
	return nil
}

func (r *run) Delete(key []byte) error {
	r.writes[string(key)] = nil
	return nil
}

func (r *run) Iterate(start, end []byte, fn func(key, value []byte) (bool, error)) error {
	if !r.locked {
		r.iterated = true
		return errIterates
	}
	c, err := r.cs.merged(start, end, r.writes)
	if err != nil {
		return err
	}
	return c.Iterate(start, end, fn)
}

// checkReader reads the check state as it is, one key at a time: what the pending
// nonce, the proposal checks' rules and a transaction's intake read.
type checkReader struct{ cs *checkState }

func (c checkReader) Get(key []byte) ([]byte, error) {
	if sv, ok := c.cs.staged(key, false); ok {
		return sv.value, nil
	}
	return c.cs.base.Get(key)
}

func (checkReader) Set([]byte, []byte) error { return drive.ErrReadOnly }
func (checkReader) Delete([]byte) error      { return drive.ErrReadOnly }

// Iterate reads the range as it is once every shard is held, then calls fn.
func (c checkReader) Iterate(start, end []byte, fn func(key, value []byte) (bool, error)) error {
	for i := range c.cs.shards {
		c.cs.shards[i].mu.RLock()
	}
	m, err := c.cs.merged(start, end, nil)
	for i := range c.cs.shards {
		c.cs.shards[i].mu.RUnlock()
	}
	if err != nil {
		return err
	}
	return m.Iterate(start, end, fn)
}

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

// dryRun answers proofs.PathDryRun from the check state, judged as CheckTx judges a
// transaction but never staged.
func (a *Application) dryRun(req *abcitypes.RequestQuery) *abcitypes.ResponseQuery {
	if bad := checkStateRequest(req); bad != nil {
		return bad
	}
	cs := a.check.Load()
	if cs == nil {
		return &abcitypes.ResponseQuery{Code: proofs.QueryCodeVersionMissing, Log: "no check state before InitChain"}
	}
	var res app.TxResult
	_, err := cs.judge(func(kv drive.KV) error {
		var err error
		res, err = app.DryRun(kv, req.Data, cs.lastMs)
		return err
	})
	var ans proofs.DryRunAnswer
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

// pendingNonce answers proofs.PathPendingNonce from the check state: one key's value.
func (a *Application) pendingNonce(req *abcitypes.RequestQuery) *abcitypes.ResponseQuery {
	if bad := checkStateRequest(req); bad != nil {
		return bad
	}
	cs := a.check.Load()
	if cs == nil {
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
		st, _, err = drive.GetAddress(checkReader{cs}, addr)
		nonce = st.Nonce.Last
	case protocol.IdentityIDLen:
		var id protocol.IdentityID
		copy(id[:], req.Data)
		var st protocol.NonceState
		st, err = drive.GetIdentityNonce(checkReader{cs}, id)
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
