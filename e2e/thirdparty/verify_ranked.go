package thirdparty

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	cmtcrypto "github.com/cometbft/cometbft/proto/tendermint/crypto"
)

// LastBlockKey is the key of the last executed block: 104 || 'l' -> height u64 ||
// block time ms u64, the time a window is resolved and judged at.
var LastBlockKey = []byte{104, 'l'}

// gridField is a time-range index's field as its grid writes it (docs/STATE.md,
// "Time-range windows").
var gridField = map[string]byte{"$createdAt": 1, "$updatedAt": 2, "$transferredAt": 3, "$renewedAt": 4}

// RankedAnswer is the JSON value of a /ranked answer; byte strings are base64 in it.
type RankedAnswer struct {
	ProtocolVersion []byte `json:"protocol_version"`
	Contract        []byte `json:"contract"`
	LastBlock       []byte `json:"last_block"`
	Ranks           struct {
		Entries []byte `json:"entries"`
		More    bool   `json:"more"`
	} `json:"ranks"`
}

// RankedGroup is one group of a ranked page: its count, read from the rank key (the
// inverted count), and its values as index key parts.
type RankedGroup struct {
	Count uint64
	Group []byte
	// Cursor is the part of the rank key after the index name: a next page's "after".
	Cursor []byte
}

// VerifiedRanked is a /ranked answer proven: the window read and its groups, most
// counted first, complete up to the last unless More.
type VerifiedRanked struct {
	Index       string
	WindowStart uint64 // ms
	Groups      []RankedGroup
	More        bool
}

// VerifyRanked checks a /ranked answer to request data under root, as docs/PROOFS.md
// ("Window queries") says: the protocol version, the contract and the last block
// proven present; the window resolved from the query at the last block's time; the
// page proven as a range answer over that window's ranks, cut by the limit.
func VerifyRanked(root, data, value []byte, ops []cmtcrypto.ProofOp) (VerifiedRanked, error) {
	contract, typeName, raw, err := DocumentRequest(data)
	if err != nil {
		return VerifiedRanked{}, err
	}
	var a RankedAnswer
	if err := json.Unmarshal(value, &a); err != nil {
		return VerifiedRanked{}, err
	}
	t, ops, err := answerHead(root, contract, typeName, DocumentsAnswer{ProtocolVersion: a.ProtocolVersion, Contract: a.Contract}, ops)
	if err != nil {
		return VerifiedRanked{}, err
	}
	if len(ops) != 2 || len(a.LastBlock) != 16 {
		return VerifiedRanked{}, errors.New("want the last block record and one range, proven")
	}
	if err := VerifySingle(root, LastBlockKey, a.LastBlock, ops[:1]); err != nil {
		return VerifiedRanked{}, fmt.Errorf("last block: %w", err)
	}
	q, err := parseRanked(t, raw)
	if err != nil {
		return VerifiedRanked{}, err
	}
	start, err := q.window(binary.BigEndian.Uint64(a.LastBlock[8:]))
	if err != nil {
		return VerifiedRanked{}, err
	}
	prefix := RanksPrefix(contract, typeName, q.index, start)
	from := prefix
	if q.after != nil {
		from = append(append(bytes.Clone(prefix), q.after...), 0)
	}
	entries, err := DecodeEntries(a.Ranks.Entries)
	if err != nil {
		return VerifiedRanked{}, err
	}
	// a range answer cut by the limit: more only with a full page
	if len(entries) > q.limit || (a.Ranks.More && len(entries) != q.limit) {
		return VerifiedRanked{}, fmt.Errorf("%d ranks for a limit of %d (more: %t)", len(entries), q.limit, a.Ranks.More)
	}
	if _, err := VerifyRange(root, from, prefixEnd(prefix), a.Ranks.Entries, a.Ranks.More, ops[1:]); err != nil {
		return VerifiedRanked{}, fmt.Errorf("ranks: %w", err)
	}
	out := VerifiedRanked{Index: q.index.Name, WindowStart: start, More: a.Ranks.More}
	for i, e := range entries {
		rank := e.Key[len(prefix):] // VerifyRange kept every key inside the prefix
		if len(rank) <= 8 || !bytes.Equal(e.Value, []byte{0}) {
			return VerifiedRanked{}, fmt.Errorf("rank %d is no ^count || group -> 00", i)
		}
		out.Groups = append(out.Groups, RankedGroup{Count: ^binary.BigEndian.Uint64(rank), Group: rank[8:], Cursor: rank})
	}
	return out, nil
}

// rankedQuery is a /ranked query read against its type.
type rankedQuery struct {
	index Index
	// byStart (ms) when newest and oldest are false
	byStart        uint64
	newest, oldest bool
	limit          int
	after          []byte // nil: from the top
}

// parseRanked reads {"window": {"index": I, "byStart": T | "newest": true | "oldest":
// true}, "limit": N, "after": H}: I a ranked time-range index of t, exactly one
// selector, limit 0..100 (0 or absent: 100), after the hex of a rank key's part after
// the index name (a count of 8 bytes, then the group).
func parseRanked(t DocType, raw []byte) (rankedQuery, error) {
	var q struct {
		Window *struct {
			Index   string  `json:"index"`
			ByStart *uint64 `json:"byStart"`
			Newest  bool    `json:"newest"`
			Oldest  bool    `json:"oldest"`
		} `json:"window"`
		Limit *int    `json:"limit"`
		After *string `json:"after"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil {
		return rankedQuery{}, err
	}
	if q.Window == nil {
		return rankedQuery{}, errors.New("a ranked query names its window")
	}
	out := rankedQuery{newest: q.Window.Newest, oldest: q.Window.Oldest, limit: MaxLimit}
	found := false
	for _, ix := range t.Indexes {
		if ix.Name == q.Window.Index {
			out.index, found = ix, true
		}
	}
	if !found || out.index.TimeRange == nil || !out.index.Ranked {
		return rankedQuery{}, fmt.Errorf("no ranked time-range index %q", q.Window.Index)
	}
	selectors := 0
	for _, set := range []bool{q.Window.ByStart != nil, out.newest, out.oldest} {
		if set {
			selectors++
		}
	}
	if selectors != 1 {
		return rankedQuery{}, errors.New("a window is selected by exactly one of byStart, newest and oldest")
	}
	if q.Window.ByStart != nil {
		out.byStart = *q.Window.ByStart
	}
	if q.Limit != nil && *q.Limit != 0 {
		if *q.Limit < 1 || *q.Limit > MaxLimit {
			return rankedQuery{}, errors.New("limit outside 0..100")
		}
		out.limit = *q.Limit
	}
	if q.After != nil {
		after, err := hex.DecodeString(*q.After)
		if err != nil || len(after) < 8 {
			return rankedQuery{}, errors.New("after is the hex of a rank: 8 bytes of count, then the group")
		}
		out.after = after
	}
	return out, nil
}

// window resolves the window's start (ms) at block time nowMs: windows start at
// (phase + k × step) seconds; byStart must be one and, under a ttl, not past it
// (start + ttl >= now); newest is the last begun at nowMs; oldest, under a ttl only, the
// first start at or after nowMs − ttl.
func (q rankedQuery) window(nowMs uint64) (uint64, error) {
	r := q.index.TimeRange
	step, phase, ttl := r.Step*1000, r.Phase*1000, r.TTL*1000
	switch {
	case q.newest:
		if nowMs < phase {
			return 0, errors.New("no window has begun")
		}
		return phase + (nowMs-phase)/step*step, nil
	case q.oldest:
		if r.TTL == 0 {
			return 0, errors.New("oldest on an index without a ttl")
		}
		if nowMs <= phase+ttl {
			return phase, nil
		}
		return phase + (nowMs-ttl-phase+step-1)/step*step, nil
	}
	if q.byStart < phase || (q.byStart-phase)%step != 0 {
		return 0, fmt.Errorf("%d starts no window", q.byStart)
	}
	if r.TTL != 0 && q.byStart+ttl < nowMs {
		return 0, fmt.Errorf("the window at %d is past its ttl at %d", q.byStart, nowMs)
	}
	return q.byStart, nil
}

// RanksPrefix is the prefix of ranked index ix's ranks in the window starting at
// startMs: TypePrefix || 'w' || grid || start u64 || 'r' || ix_len u8 || ix, the grid
// field u8 || range u32 || step u32 || phase u32 (docs/STATE.md).
func RanksPrefix(contract [32]byte, typeName string, ix Index, startMs uint64) []byte {
	r := ix.TimeRange
	p := append(TypePrefix(contract, typeName), 'w', gridField[r.On])
	for _, n := range []uint64{r.Range, r.Step, r.Phase} {
		p = binary.BigEndian.AppendUint32(p, uint32(n))
	}
	p = binary.BigEndian.AppendUint64(p, startMs)
	return append(append(p, 'r', byte(len(ix.Name))), ix.Name...)
}
