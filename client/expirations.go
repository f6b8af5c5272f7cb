package client

import (
	"context"

	"github.com/ttld-dev/ttld/drive"
	"github.com/ttld-dev/ttld/proofs"
)

// ExpirationsState is the documents expirations tree's entries at Height that expire at
// or before UntilMs, oldest first: with UntilMs the block time of that state, the
// backlog the cleanup has not reached yet.
type ExpirationsState struct {
	Entries     []drive.ExpirationEntry
	UntilMs     uint64
	BlockTimeMs uint64 // the time of the block whose state was read
	Height      int64
	Verified    bool
}

// Expirations reads the expirations tree's entries expiring at or before untilMs (0:
// the block time of the state read, the cleanup's backlog) at height (0: the latest),
// following the answer over as many reads as it takes; with prove, each read is
// checked complete against the signed header after it.
func (c *Client) Expirations(ctx context.Context, untilMs uint64, height int64, prove bool) (ExpirationsState, error) {
	first, h, err := c.single(ctx, proofs.PathKey, drive.LastBlockKey(), height, prove)
	if err != nil {
		return ExpirationsState{}, err
	}
	last, ok, err := drive.GetLastBlock(proofs.SingleKV(drive.LastBlockKey(), first))
	if err != nil || !ok {
		return ExpirationsState{}, corrupt(err)
	}
	out := ExpirationsState{UntilMs: untilMs, BlockTimeMs: last.TimeMs, Height: h, Verified: prove}
	if untilMs == 0 {
		out.UntilMs = last.TimeMs
	}
	entries, _, err := c.rangeRead(ctx, proofs.PathExpirations, proofs.ExpirationsData(out.UntilMs, nil), h, prove, func(last proofs.KV) ([]byte, error) {
		e, ok := drive.DecodeExpirationEntry(last.Key, last.Value)
		if !ok {
			return nil, ErrCorruptValue{Key: last.Key, Err: errNotExpirationEntry}
		}
		return proofs.ExpirationsData(out.UntilMs, &e), nil
	})
	if err != nil {
		return ExpirationsState{}, err
	}
	for _, kv := range entries {
		e, ok := drive.DecodeExpirationEntry(kv.Key, kv.Value)
		if !ok {
			return ExpirationsState{}, ErrCorruptValue{Key: kv.Key, Err: errNotExpirationEntry}
		}
		out.Entries = append(out.Entries, e)
	}
	return out, nil
}
