package client

import (
	"bytes"
	"context"
	"errors"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	rpcclient "github.com/cometbft/cometbft/rpc/client"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
	"github.com/ttld-dev/ttld/protocol"
)

// AddressState is an address as read at Height (the state after block Height).
type AddressState struct {
	Address protocol.Address
	Balance uint64
	// Nonce is the last nonce the address used; 0 before the first.
	Nonce uint64
	// Skipped are the nonces below Nonce it skipped and may still use, lowest first.
	Skipped []uint64
	// Present: the address holds a record; when false Balance and Nonce are zero.
	Present bool
	Height  int64
	// Verified: the answer's proof was checked against the signed header Height+1.
	Verified bool
}

// IdentityState is an identity as read at Height.
type IdentityState struct {
	drive.Identity
	// Present: the identity exists; when false only ID is set.
	Present  bool
	Height   int64
	Verified bool
}

// BalanceChange is an address's balance after the blocks FromHeight..ToHeight
// (inclusive): a per-block record has FromHeight == ToHeight, a compacted record
// spans the blocks it merged and holds the balance after the last one of them.
type BalanceChange struct {
	FromHeight, ToHeight uint64
	Balance              uint64
}

// AddressChanges are the recorded balance changes of an address since a height, as
// read at Height, oldest first.
type AddressChanges struct {
	Address  protocol.Address
	Since    uint64
	Changes  []BalanceChange
	Height   int64
	Verified bool
}

// query runs one abci_query and fails on a non-zero code, on an answer at another
// height than height when height is not 0 (the latest), and on an info that is neither
// empty nor proofs.InfoMore.
func (c *Client) query(ctx context.Context, path string, data []byte, height int64, prove bool) (abcitypes.ResponseQuery, error) {
	res, err := c.rpc.ABCIQueryWithOptions(ctx, path, data, rpcclient.ABCIQueryOptions{Height: height, Prove: prove})
	if err != nil {
		return abcitypes.ResponseQuery{}, err
	}
	resp := res.Response
	if resp.Code != 0 {
		qerr := ErrQuery{Path: path, Code: resp.Code, Log: resp.Log, Height: height}
		if resp.Code == proofs.QueryCodeVersionMissing && height > 0 {
			if latest, err := c.LatestHeight(ctx); err == nil && height > latest {
				return resp, ErrFutureHeight{Height: height, Latest: latest, Query: qerr}
			}
		}
		return resp, qerr
	}
	if height != 0 && resp.Height != height {
		return resp, ErrWrongHeight{Path: path, Want: height, Got: resp.Height}
	}
	if resp.Info != "" && resp.Info != proofs.InfoMore {
		return resp, ErrUnknownInfo{Path: path, Info: resp.Info}
	}
	return resp, nil
}

// fresh checks the freshness bound (Options.MaxAge) of a verified answer to a query
// asked at height asked: an answer for the latest state (asked 0) whose proving header
// has time headerTime.
func (c *Client) fresh(path string, asked, answered int64, headerTime time.Time) error {
	maxAge := c.opts.MaxAge
	if maxAge == 0 {
		maxAge = proofs.DefaultMaxAge
	}
	if asked != 0 || maxAge < 0 {
		return nil
	}
	if age := time.Since(headerTime); age > maxAge {
		return ErrStale{Path: path, Height: answered, HeaderTime: headerTime, Age: age, MaxAge: maxAge}
	}
	return nil
}

// queryTarget runs one abci_query and checks that the answer is keyed by what path
// and data target: the key, or the start of the range.
func (c *Client) queryTarget(ctx context.Context, path string, data []byte, height int64, prove bool) (proofs.Target, abcitypes.ResponseQuery, error) {
	target, err := proofs.TargetOf(path, data)
	if err != nil {
		return target, abcitypes.ResponseQuery{}, err
	}
	resp, err := c.query(ctx, path, data, height, prove)
	if err != nil {
		return target, resp, err
	}
	want := target.Key
	if target.Range() {
		want = target.Start
	}
	if !bytes.Equal(resp.Key, want) {
		return target, resp, ErrWrongKey{Path: path, Want: want, Got: resp.Key}
	}
	return target, resp, nil
}

// single reads the one key path names, and when prove is set checks the answer's key
// and proof. It returns the value (nil: absent) and the answer's height.
func (c *Client) single(ctx context.Context, path string, data []byte, height int64, prove bool) ([]byte, int64, error) {
	_, resp, err := c.queryTarget(ctx, path, data, height, prove)
	if err != nil {
		return nil, 0, err
	}
	if !prove {
		if len(resp.Value) == 0 {
			return nil, resp.Height, nil
		}
		return resp.Value, resp.Height, nil
	}
	v, err := c.Verifier(ctx)
	if err != nil {
		return nil, 0, err
	}
	r, err := v.VerifyQuery(ctx, resp)
	if err != nil {
		return nil, 0, err
	}
	if err := c.fresh(path, height, r.Height, r.Time); err != nil {
		return nil, 0, err
	}
	if !r.Present {
		return nil, r.Height, nil
	}
	return r.Value, r.Height, nil
}

// rangeRead reads every entry of the range path names, at one height: the first page
// at height (0: the latest), later pages pinned to the height the first answered.
// next gives the data that continues after the last entry of a cut page. When prove is
// set, every page is proven complete against the signed header after that height.
func (c *Client) rangeRead(ctx context.Context, path string, data []byte, height int64, prove bool, next func(last proofs.KV) ([]byte, error)) ([]proofs.KV, int64, error) {
	var all []proofs.KV
	var v *proofs.Verifier
	if prove {
		var err error
		if v, err = c.Verifier(ctx); err != nil {
			return nil, 0, err
		}
	}
	for {
		target, resp, err := c.queryTarget(ctx, path, data, height, prove)
		if err != nil {
			return nil, 0, err
		}
		var entries []proofs.KV
		var more bool
		if prove {
			r, err := v.VerifyRangeQuery(ctx, resp, target.Start, target.End)
			if err != nil {
				return nil, 0, err
			}
			if err := c.fresh(path, height, r.Height, r.Time); err != nil {
				return nil, 0, err
			}
			entries, more = r.Entries, r.More
		} else {
			if entries, err = proofs.DecodeEntries(resp.Value); err != nil {
				return nil, 0, err
			}
			more = resp.Info == proofs.InfoMore
		}
		// later pages are pinned to the height the first page answered at
		height = resp.Height
		all = append(all, entries...)
		if !more {
			return all, height, nil
		}
		if len(entries) == 0 {
			return nil, 0, ErrInconsistentAnswer{Path: path, Reason: "a cut page without entries"}
		}
		if data, err = next(entries[len(entries)-1]); err != nil {
			return nil, 0, err
		}
	}
}

// Address reads address a at height (0: the latest saved state); with prove, the
// answer (presence or absence) is checked against the signed header after it.
func (c *Client) Address(ctx context.Context, a protocol.Address, height int64, prove bool) (AddressState, error) {
	value, h, err := c.single(ctx, proofs.PathAddress, a[:], height, prove)
	if err != nil {
		return AddressState{}, err
	}
	out := AddressState{Address: a, Height: h, Verified: prove}
	if value == nil {
		return out, nil
	}
	st, err := drive.DecodeAddressState(value)
	if err != nil {
		return AddressState{}, ErrCorruptValue{Key: drive.AddressKey(a), Err: err}
	}
	out.Balance, out.Nonce, out.Skipped, out.Present = st.Balance, st.Nonce.Last, st.Nonce.Skipped(), true
	return out, nil
}

// Identity reads identity id (every key under its prefix) at height; with prove, the
// answer is checked complete against the signed header after it, so an absent
// identity is proven absent.
func (c *Client) Identity(ctx context.Context, id protocol.IdentityID, height int64, prove bool) (IdentityState, error) {
	entries, h, err := c.rangeRead(ctx, proofs.PathIdentity, id[:], height, prove, func(proofs.KV) ([]byte, error) {
		return nil, ErrInconsistentAnswer{Path: proofs.PathIdentity, Reason: "an identity answer cut short"}
	})
	if err != nil {
		return IdentityState{}, err
	}
	raw := make([][2][]byte, len(entries))
	for i, e := range entries {
		raw[i] = [2][]byte{e.Key, e.Value}
	}
	idn, ok, err := drive.DecodeIdentity(id, raw)
	if err != nil {
		return IdentityState{}, ErrCorruptValue{Key: drive.IdentityPrefix(id), Err: err}
	}
	return IdentityState{Identity: idn, Present: ok, Height: h, Verified: prove}, nil
}

// Reasons of an ErrCorruptValue for a range entry whose key is not of its range's kind.
var (
	errNotCompactedKey = errors.New("not a compacted record key")
	errNotBlockKey     = errors.New("not a block record key")
)

// AddressChanges reads the recorded balance changes of address a since height since:
// the compacted records that end at or after it, then the per-block records at or
// after it, both read at the same height (the first answer's). With prove, both
// answers are checked complete.
func (c *Client) AddressChanges(ctx context.Context, a protocol.Address, since uint64, height int64, prove bool) (AddressChanges, error) {
	out := AddressChanges{Address: a, Since: since, Verified: prove}
	sinceData := proofs.SinceData(since)

	compacted, h, err := c.rangeRead(ctx, proofs.PathAddressChangesCompacted, sinceData, height, prove, func(last proofs.KV) ([]byte, error) {
		_, to, ok := drive.ParseCompactedChangesKey(last.Key)
		if !ok {
			return nil, ErrCorruptValue{Key: last.Key, Err: errNotCompactedKey}
		}
		return proofs.SinceData(to + 1), nil
	})
	if err != nil {
		return AddressChanges{}, err
	}
	for _, e := range compacted {
		from, to, ok := drive.ParseCompactedChangesKey(e.Key)
		if !ok {
			return AddressChanges{}, ErrCorruptValue{Key: e.Key, Err: errNotCompactedKey}
		}
		if err := out.add(e, from, to); err != nil {
			return AddressChanges{}, err
		}
	}

	blocks, _, err := c.rangeRead(ctx, proofs.PathAddressChangesBlocks, sinceData, h, prove, func(last proofs.KV) ([]byte, error) {
		at, ok := drive.ParseBlockChangesKey(last.Key)
		if !ok {
			return nil, ErrCorruptValue{Key: last.Key, Err: errNotBlockKey}
		}
		return proofs.SinceData(at + 1), nil
	})
	if err != nil {
		return AddressChanges{}, err
	}
	for _, e := range blocks {
		at, ok := drive.ParseBlockChangesKey(e.Key)
		if !ok {
			return AddressChanges{}, ErrCorruptValue{Key: e.Key, Err: errNotBlockKey}
		}
		if err := out.add(e, at, at); err != nil {
			return AddressChanges{}, err
		}
	}
	out.Height = h
	return out, nil
}

// add appends the change of out.Address in record e, if it has one.
func (out *AddressChanges) add(e proofs.KV, from, to uint64) error {
	changes, err := drive.DecodeBalanceChanges(e.Value)
	if err != nil {
		return ErrCorruptValue{Key: e.Key, Err: err}
	}
	for _, ch := range changes {
		if ch.Address == out.Address {
			out.Changes = append(out.Changes, BalanceChange{FromHeight: from, ToHeight: to, Balance: ch.Balance})
		}
	}
	return nil
}
