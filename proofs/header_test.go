package proofs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/crypto/ed25519"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmtversion "github.com/cometbft/cometbft/proto/tendermint/version"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/cometbft/cometbft/version"
)

const testChainID = "ttld-test"

var blockTime = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// validators is a real validator set with the ed25519 keys of its members, in the
// set's order (the order commit signatures follow).
type validators struct {
	set *cmttypes.ValidatorSet
	pvs []cmttypes.PrivValidator
}

// newValidators makes n validators of the given power from fixed secrets, so runs are
// reproducible; seed picks another set of keys.
func newValidators(t *testing.T, seed string, powers ...int64) validators {
	t.Helper()
	byAddr := map[string]cmttypes.PrivValidator{}
	var vals []*cmttypes.Validator
	for i, p := range powers {
		pv := cmttypes.NewMockPVWithParams(ed25519.GenPrivKeyFromSecret([]byte(fmt.Sprintf("%s-%d", seed, i))), false, false)
		v := pv.ExtractIntoValidator(p)
		byAddr[string(v.Address)] = pv
		vals = append(vals, v)
	}
	set := cmttypes.NewValidatorSet(vals)
	out := validators{set: set}
	for _, v := range set.Validators {
		out.pvs = append(out.pvs, byAddr[string(v.Address)])
	}
	return out
}

func hash32(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// signedHeader builds header height of chainID carrying appHash and naming vals, and
// the commit of it signed by all of vals for signChainID.
func (vals validators) signedHeader(t *testing.T, chainID, signChainID string, height int64, appHash []byte) *cmttypes.SignedHeader {
	t.Helper()
	header := &cmttypes.Header{
		Version:            cmtversion.Consensus{Block: version.BlockProtocol},
		ChainID:            chainID,
		Height:             height,
		Time:               blockTime.Add(time.Duration(height) * time.Second),
		LastBlockID:        cmttypes.BlockID{Hash: hash32(fmt.Sprint("block", height-1)), PartSetHeader: cmttypes.PartSetHeader{Total: 1, Hash: hash32("parts")}},
		LastCommitHash:     hash32("last commit"),
		DataHash:           hash32("data"),
		ValidatorsHash:     vals.set.Hash(),
		NextValidatorsHash: vals.set.Hash(),
		ConsensusHash:      hash32("consensus"),
		AppHash:            appHash,
		LastResultsHash:    hash32("results"),
		EvidenceHash:       hash32("evidence"),
		ProposerAddress:    vals.set.Validators[0].Address,
	}
	blockID := cmttypes.BlockID{Hash: header.Hash(), PartSetHeader: cmttypes.PartSetHeader{Total: 1, Hash: hash32("parts")}}
	voteSet := cmttypes.NewVoteSet(signChainID, height, 0, cmtproto.PrecommitType, vals.set)
	ext, err := cmttypes.MakeExtCommit(blockID, height, 0, voteSet, vals.pvs, blockTime, false)
	if err != nil {
		t.Fatal(err)
	}
	return &cmttypes.SignedHeader{Header: header, Commit: ext.ToCommit()}
}

// fakeNode serves signed headers and validator sets the way the CometBFT RPC does:
// an unknown height is an error, validators come in pages of at most maxPerPage.
type fakeNode struct {
	mu         sync.Mutex
	headers    map[int64]*cmttypes.SignedHeader
	validators map[int64][]*cmttypes.Validator
	maxPerPage int
	// hiddenUntil: Commit fails for a height until it has been asked this many times.
	hiddenUntil  int
	commitCalls  int
	pagesFetched int
}

func newFakeNode() *fakeNode {
	return &fakeNode{headers: map[int64]*cmttypes.SignedHeader{}, validators: map[int64][]*cmttypes.Validator{}, maxPerPage: 2}
}

// add publishes sh at its height with the validator set vals.
func (f *fakeNode) add(sh *cmttypes.SignedHeader, vals *cmttypes.ValidatorSet) {
	f.headers[sh.Height] = sh
	f.validators[sh.Height] = vals.Copy().Validators
}

func (f *fakeNode) Commit(_ context.Context, height *int64) (*coretypes.ResultCommit, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commitCalls++
	sh, ok := f.headers[*height]
	if !ok || f.commitCalls <= f.hiddenUntil {
		return nil, fmt.Errorf("height %d must be less than or equal to the current blockchain height", *height)
	}
	return coretypes.NewResultCommit(sh.Header, sh.Commit, true), nil
}

func (f *fakeNode) Validators(_ context.Context, height *int64, page, perPage *int) (*coretypes.ResultValidators, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	vals, ok := f.validators[*height]
	if !ok {
		return nil, fmt.Errorf("no validators at height %d", *height)
	}
	per := min(*perPage, f.maxPerPage)
	from := (*page - 1) * per
	if from < 0 || from >= len(vals) {
		return nil, fmt.Errorf("page %d out of range", *page)
	}
	f.pagesFetched++
	return &coretypes.ResultValidators{BlockHeight: *height, Validators: vals[from:min(from+per, len(vals))], Count: min(per, len(vals)-from), Total: len(vals)}, nil
}

// chainFixture: two saved tree versions (states after blocks 1 and 2) and headers 2
// and 3 carrying their roots, signed by five validators.
type chainFixture struct {
	v1, v2 testTree
	vals   validators
	node   *fakeNode
}

func newChainFixture(t *testing.T) chainFixture {
	t.Helper()
	v1, v2 := twoVersions(t)
	vals := newValidators(t, "main", 10, 10, 10, 10, 5)
	node := newFakeNode()
	node.add(vals.signedHeader(t, testChainID, testChainID, 2, v1.root), vals.set)
	node.add(vals.signedHeader(t, testChainID, testChainID, 3, v2.root), vals.set)
	return chainFixture{v1: v1, v2: v2, vals: vals, node: node}
}

func (c chainFixture) verifier() *Verifier {
	return &Verifier{Client: c.node, ChainID: testChainID, Wait: 500 * time.Millisecond}
}

func TestAppHashAfter(t *testing.T) {
	c := newChainFixture(t)
	ctx := context.Background()

	v := c.verifier()
	got, err := v.AppHashAfter(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, c.v1.root) {
		t.Fatalf("AppHashAfter(1) = %X, want the root of version 1 %X", got, c.v1.root)
	}
	if want := 3; c.node.pagesFetched != want {
		t.Fatalf("fetched %d validator pages, want %d (5 validators, 2 a page)", c.node.pagesFetched, want)
	}
	if got, err := v.AppHashAfter(ctx, 2); err != nil || !bytes.Equal(got, c.v2.root) {
		t.Fatalf("AppHashAfter(2) = %X, %v, want the root of version 2 %X", got, err, c.v2.root)
	}

	trusted := c.verifier()
	trusted.Trusted = c.vals.set
	c.node.pagesFetched = 0
	if got, err := trusted.AppHashAfter(ctx, 1); err != nil || !bytes.Equal(got, c.v1.root) {
		t.Fatalf("AppHashAfter(1) with a trusted set = %X, %v", got, err)
	}
	if c.node.pagesFetched != 0 {
		t.Fatalf("a verifier with a trusted set fetched %d validator pages", c.node.pagesFetched)
	}
}

// TestAppHashAfterWaitsForTheHeader: header h+1 may not exist yet when the answer for
// state h arrives; the verifier polls until it does.
func TestAppHashAfterWaitsForTheHeader(t *testing.T) {
	t.Parallel()
	c := newChainFixture(t)
	c.node.hiddenUntil = 3
	v := c.verifier()
	v.Wait = 5 * time.Second
	got, err := v.AppHashAfter(context.Background(), 1)
	if err != nil || !bytes.Equal(got, c.v1.root) {
		t.Fatalf("AppHashAfter(1) = %X, %v", got, err)
	}
	if c.node.commitCalls != 4 {
		t.Fatalf("asked for the commit %d times, want 4", c.node.commitCalls)
	}
}

func TestAppHashAfterRejects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, c chainFixture, v *Verifier)
		check func(t *testing.T, err error)
	}{
		{
			name:  "wrong chain id",
			setup: func(t *testing.T, c chainFixture, v *Verifier) { v.ChainID = "other-chain" },
			check: func(t *testing.T, err error) {
				var e ErrChainIDMismatch
				if !errors.As(err, &e) || e.Want != "other-chain" || e.Got != testChainID {
					t.Fatalf("error %v, want ErrChainIDMismatch{other-chain, %s}", err, testChainID)
				}
			},
		},
		{
			name: "too little voting power signed",
			setup: func(t *testing.T, c chainFixture, v *Verifier) {
				// keep 25 of 45: not more than 2/3
				sh := c.node.headers[2]
				for i := 2; i < len(sh.Commit.Signatures); i++ {
					sh.Commit.Signatures[i] = cmttypes.NewCommitSigAbsent()
				}
			},
			check: func(t *testing.T, err error) {
				var e ErrCommitNotSigned
				var power cmttypes.ErrNotEnoughVotingPowerSigned
				if !errors.As(err, &e) || e.Height != 2 || !errors.As(err, &power) || power.Got != 20 || power.Needed != 30 {
					t.Fatalf("error %v, want ErrCommitNotSigned{Height: 2} wrapping ErrNotEnoughVotingPowerSigned{20, 30}", err)
				}
			},
		},
		{
			name: "a forged signature",
			setup: func(t *testing.T, c chainFixture, v *Verifier) {
				c.node.headers[2].Commit.Signatures[0].Signature[5] ^= 1
			},
			check: func(t *testing.T, err error) {
				var e ErrCommitNotSigned
				if !errors.As(err, &e) {
					t.Fatalf("error %v, want ErrCommitNotSigned", err)
				}
			},
		},
		{
			name: "signed for another chain",
			setup: func(t *testing.T, c chainFixture, v *Verifier) {
				c.node.add(c.vals.signedHeader(t, testChainID, "other-chain", 2, c.v1.root), c.vals.set)
			},
			check: func(t *testing.T, err error) {
				var e ErrCommitNotSigned
				if !errors.As(err, &e) {
					t.Fatalf("error %v, want ErrCommitNotSigned", err)
				}
			},
		},
		{
			name: "trusted validators do not match the header",
			setup: func(t *testing.T, c chainFixture, v *Verifier) {
				v.Trusted = newValidators(t, "genesis", 10, 10, 10, 10, 5).set
			},
			check: func(t *testing.T, err error) {
				var e ErrValidatorsHashMismatch
				if !errors.As(err, &e) || e.Height != 2 || !bytes.Equal(e.Want, newChainFixture(t).vals.set.Hash()) {
					t.Fatalf("error %v, want ErrValidatorsHashMismatch{Height: 2, Want: the header's}", err)
				}
			},
		},
		{
			name: "served validators do not match the header",
			setup: func(t *testing.T, c chainFixture, v *Verifier) {
				c.node.validators[2] = newValidators(t, "impostor", 10, 10, 10, 10, 5).set.Validators
			},
			check: func(t *testing.T, err error) {
				var e ErrValidatorsHashMismatch
				if !errors.As(err, &e) || e.Height != 2 {
					t.Fatalf("error %v, want ErrValidatorsHashMismatch{Height: 2}", err)
				}
			},
		},
		{
			name: "a header signed by a validator set it does not name",
			setup: func(t *testing.T, c chainFixture, v *Verifier) {
				// the impostors sign a header naming the real set; the node serves
				// the real set: hashes match, signatures do not.
				impostors := newValidators(t, "impostor", 10, 10, 10, 10, 5)
				sh := c.vals.signedHeader(t, testChainID, testChainID, 2, hash32("forged state"))
				forged := impostors.signedHeader(t, testChainID, testChainID, 2, hash32("forged state"))
				sh.Header.ValidatorsHash = c.vals.set.Hash()
				forged.Commit.BlockID.Hash = sh.Hash()
				c.node.headers[2] = &cmttypes.SignedHeader{Header: sh.Header, Commit: forged.Commit}
			},
			check: func(t *testing.T, err error) {
				var e ErrCommitNotSigned
				if !errors.As(err, &e) {
					t.Fatalf("error %v, want ErrCommitNotSigned", err)
				}
			},
		},
		{
			name: "a validator served twice",
			setup: func(t *testing.T, c chainFixture, v *Verifier) {
				vals := c.node.validators[2]
				c.node.validators[2] = append(vals[:len(vals)-1:len(vals)-1], vals[0])
			},
			check: func(t *testing.T, err error) {
				var e ErrInvalidValidators
				if !errors.As(err, &e) || e.Height != 2 {
					t.Fatalf("error %v, want ErrInvalidValidators{Height: 2}", err)
				}
			},
		},
		{
			name: "a commit for another block",
			setup: func(t *testing.T, c chainFixture, v *Verifier) {
				other := c.vals.signedHeader(t, testChainID, testChainID, 2, hash32("another state"))
				c.node.headers[2] = &cmttypes.SignedHeader{Header: c.node.headers[2].Header, Commit: other.Commit}
			},
			check: func(t *testing.T, err error) {
				var e ErrCommitMismatch
				if !errors.As(err, &e) || e.Height != 2 || bytes.Equal(e.HeaderHash, e.CommitHash) {
					t.Fatalf("error %v, want ErrCommitMismatch{Height: 2}", err)
				}
			},
		},
		{
			name: "a header of another height",
			setup: func(t *testing.T, c chainFixture, v *Verifier) {
				c.node.headers[2] = c.node.headers[3]
			},
			check: func(t *testing.T, err error) {
				var e ErrHeightMismatch
				if !errors.As(err, &e) || e.Want != 2 || e.Got != 3 {
					t.Fatalf("error %v, want ErrHeightMismatch{2, 3}", err)
				}
			},
		},
		{
			name: "a header that never comes",
			setup: func(t *testing.T, c chainFixture, v *Verifier) {
				delete(c.node.headers, 2)
				v.Wait = 300 * time.Millisecond
			},
			check: func(t *testing.T, err error) {
				var e ErrHeaderUnavailable
				if !errors.As(err, &e) || e.Height != 2 || e.Err == nil {
					t.Fatalf("error %v, want ErrHeaderUnavailable{Height: 2}", err)
				}
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newChainFixture(t)
			v := f.verifier()
			c.setup(t, f, v)
			got, err := v.AppHashAfter(ctx, 1)
			if err == nil {
				t.Fatalf("AppHashAfter(1) = %X, want an error", got)
			}
			c.check(t, err)
		})
	}
	var ih ErrInvalidHeight
	if _, err := newChainFixture(t).verifier().AppHashAfter(ctx, -1); !errors.As(err, &ih) {
		t.Fatalf("AppHashAfter(-1) = %v, want ErrInvalidHeight", err)
	}
}

// keyAnswer builds the abci_query answer a node gives for key at version tt.
func keyAnswer(t *testing.T, tt testTree, key string) abci.ResponseQuery {
	t.Helper()
	value, ops, err := Prove(tt.tree, []byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return abci.ResponseQuery{Key: []byte(key), Value: value, ProofOps: ops, Height: tt.tree.Version()}
}

func TestVerifyQuery(t *testing.T) {
	c := newChainFixture(t)
	ctx := context.Background()
	v := c.verifier()

	res, err := v.VerifyQuery(ctx, keyAnswer(t, c.v1, "d"))
	if err != nil {
		t.Fatal(err)
	}
	want := Result{Height: 1, Key: []byte("d"), Value: []byte("4"), Present: true, AppHash: c.v1.root, Time: blockTime.Add(2 * time.Second)}
	if res.Height != want.Height || !bytes.Equal(res.Key, want.Key) || !bytes.Equal(res.Value, want.Value) || !res.Present || !bytes.Equal(res.AppHash, want.AppHash) || !res.Time.Equal(want.Time) {
		t.Fatalf("VerifyQuery = %+v, want %+v", res, want)
	}
	res, err = v.VerifyQuery(ctx, keyAnswer(t, c.v2, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Height != 2 || res.Present || res.Value != nil || !bytes.Equal(res.AppHash, c.v2.root) {
		t.Fatalf("VerifyQuery of f deleted at 2 = %+v, want absent at height 2", res)
	}

	for _, tc := range []struct {
		name   string
		resp   func() abci.ResponseQuery
		expect func(t *testing.T, err error)
	}{
		{"value changed", func() abci.ResponseQuery {
			r := keyAnswer(t, c.v1, "d")
			r.Value = []byte("5")
			return r
		}, expectAs[ErrValueMismatch]},
		{"value given for an absent key", func() abci.ResponseQuery {
			r := keyAnswer(t, c.v1, "c")
			r.Value = []byte("3")
			return r
		}, expectAs[ErrPresenceMismatch]},
		{"value dropped for a present key", func() abci.ResponseQuery {
			r := keyAnswer(t, c.v1, "d")
			r.Value = nil
			return r
		}, expectAs[ErrValueMismatch]},
		{"key changed", func() abci.ResponseQuery {
			r := keyAnswer(t, c.v1, "d")
			r.Key = []byte("b")
			return r
		}, expectAs[ErrKeyMismatch]},
		{"proof byte flipped", func() abci.ResponseQuery {
			r := keyAnswer(t, c.v1, "d")
			r.ProofOps = cloneOps(r.ProofOps)
			r.ProofOps.Ops[0].Data[len(r.ProofOps.Ops[0].Data)-3] ^= 1
			return r
		}, func(t *testing.T, err error) {
			var am ErrAppHashMismatch
			var mp ErrMalformedProof
			if !errors.As(err, &am) && !errors.As(err, &mp) {
				t.Fatalf("error %v, want ErrAppHashMismatch or ErrMalformedProof", err)
			}
		}},
		{"proof of version 2 presented as version 1", func() abci.ResponseQuery {
			r := keyAnswer(t, c.v2, "d")
			r.Height = 1
			return r
		}, func(t *testing.T, err error) {
			var e ErrAppHashMismatch
			if !errors.As(err, &e) || e.Height != 1 || !bytes.Equal(e.Want, c.v1.root) || !bytes.Equal(e.Got, c.v2.root) {
				t.Fatalf("error %v, want ErrAppHashMismatch{1, v1 root, v2 root}", err)
			}
		}},
		{"an absent key of version 2 presented as version 1", func() abci.ResponseQuery {
			r := keyAnswer(t, c.v2, "f")
			r.Height = 1
			return r
		}, expectAs[ErrAppHashMismatch]},
		{"no proof", func() abci.ResponseQuery {
			r := keyAnswer(t, c.v1, "d")
			r.ProofOps = nil
			return r
		}, func(t *testing.T, err error) {
			if !errors.Is(err, ErrNotProven) {
				t.Fatalf("error %v, want ErrNotProven", err)
			}
		}},
		{"failed query", func() abci.ResponseQuery {
			return abci.ResponseQuery{Code: 40101, Log: "document not found", Height: 1}
		}, func(t *testing.T, err error) {
			var e ErrQueryFailed
			if !errors.As(err, &e) || e.Code != 40101 {
				t.Fatalf("error %v, want ErrQueryFailed{Code: 40101}", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := v.VerifyQuery(ctx, tc.resp())
			if err == nil {
				t.Fatalf("VerifyQuery = %+v, want an error", res)
			}
			tc.expect(t, err)
		})
	}
}

func expectAs[E error](t *testing.T, err error) {
	t.Helper()
	var e E
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want %T", err, err, e)
	}
}

func TestVerifyRangeQuery(t *testing.T) {
	c := newChainFixture(t)
	ctx := context.Background()
	v := c.verifier()
	rangeQuery := func(tt testTree, start, end []byte, limit int) abci.ResponseQuery {
		entries, more, ops, err := ProveRange(tt.tree, start, end, limit)
		if err != nil {
			t.Fatal(err)
		}
		resp := abci.ResponseQuery{Value: EncodeEntries(entries), ProofOps: ops, Height: tt.tree.Version()}
		if more { // as the node says a cut answer
			resp.Info = InfoMore
		}
		return resp
	}

	for _, limit := range []int{0, 2} {
		r, err := v.VerifyRangeQuery(ctx, rangeQuery(c.v1, []byte("c"), nil, limit), []byte("c"), nil)
		entries, more, height := r.Entries, r.More, r.Height
		if err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		wantEntries, wantMore := c.v1.refRange([]byte("c"), nil, limit)
		if height != 1 || more != wantMore || !sameEntries(entries, wantEntries) {
			t.Fatalf("limit %d: VerifyRangeQuery = %q more=%t height %d, want %q more=%t height 1", limit, entries, more, height, wantEntries, wantMore)
		}
		if header := c.node.headers[2].Header; !bytes.Equal(r.AppHash, header.AppHash) || !r.Time.Equal(header.Time) {
			t.Fatalf("limit %d: checked against app hash %X at %v, want header 2's %X at %v", limit, r.AppHash, r.Time, header.AppHash, header.Time)
		}
	}

	tampered := rangeQuery(c.v1, []byte("c"), nil, 0)
	entries, err := DecodeEntries(tampered.Value)
	if err != nil {
		t.Fatal(err)
	}
	entries[1].Value = []byte("changed")
	tampered.Value = EncodeEntries(entries)
	if _, err := v.VerifyRangeQuery(ctx, tampered, []byte("c"), nil); err == nil {
		t.Fatal("a range answer with a changed value verifies")
	} else {
		expectAs[ErrValueMismatch](t, err)
	}

	garbled := rangeQuery(c.v1, []byte("c"), nil, 0)
	garbled.Value = append(garbled.Value, 0)
	if _, err := v.VerifyRangeQuery(ctx, garbled, []byte("c"), nil); err == nil {
		t.Fatal("a range answer with trailing bytes verifies")
	} else {
		expectAs[ErrDecodeEntries](t, err)
	}

	if _, err := v.VerifyRangeQuery(ctx, rangeQuery(c.v1, []byte("c"), nil, 0), []byte("a"), nil); err == nil {
		t.Fatal("an answer for start c verifies as the answer for start a")
	} else {
		expectAs[ErrKeyMismatch](t, err)
	}

	// The node's info must say what the proof shows: "more" on a complete answer, or
	// nothing on a cut one, is refused although the entries and proof are honest.
	for _, tc := range []struct {
		limit int
		info  string
	}{{0, InfoMore}, {2, ""}} {
		resp := rangeQuery(c.v1, []byte("c"), nil, tc.limit)
		resp.Info = tc.info
		var mm ErrMoreMismatch
		if _, err := v.VerifyRangeQuery(ctx, resp, []byte("c"), nil); !errors.As(err, &mm) || mm.More == mm.Proven || mm.More != (tc.info == InfoMore) {
			t.Fatalf("limit %d with info %q: %v, want ErrMoreMismatch", tc.limit, tc.info, err)
		}
	}

	stale := rangeQuery(c.v2, []byte("c"), nil, 0)
	stale.Height = 1
	if _, err := v.VerifyRangeQuery(ctx, stale, []byte("c"), nil); err == nil {
		t.Fatal("a range answer of version 2 verifies as version 1")
	} else {
		expectAs[ErrAppHashMismatch](t, err)
	}
}
