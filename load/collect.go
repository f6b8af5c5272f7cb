package load

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	abcitypes "github.com/cometbft/cometbft/abci/types"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	"github.com/cometbft/cometbft/test/loadtime/payload"
	cmttypes "github.com/cometbft/cometbft/types"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Block is what a run keeps of one block: its time and its transactions of the run.
type Block struct {
	Height int64
	Time   time.Time
	// Committed and Refused count the run's transactions in the block that executed
	// with code 0 and with another code.
	Committed, Refused int
	// Payloads are loadtime payloads, one for each Committed transaction, carrying the
	// time it was sent: what the loadtime report reads in place of the transaction.
	Payloads []cmttypes.Tx
}

// BlockSource is the part of CometBFT's RPC client Collect reads blocks with;
// rpc/client/http.HTTP satisfies it.
type BlockSource interface {
	Block(ctx context.Context, height *int64) (*coretypes.ResultBlock, error)
	BlockResults(ctx context.Context, height *int64) (*coretypes.ResultBlockResults, error)
}

// Payloads are the fields of a run's loadtime payloads besides the send time: the
// run id and the load's shape, which the report keeps with its latencies.
type Payloads struct {
	Run         RunID
	Connections uint64
	// Rate is transactions per second per connection.
	Rate uint64
	// Size is the size of the run's transactions (each payload is padded to it).
	Size uint64
}

// encode is the payload of a transaction sent at sent.
//
// NB: transfers have no free field to carry a payload, so a payload stands in for its
// transaction in the blocks handed to the report. The payload is made here, at
// collection, from the send time the client recorded by hash, rather than by the
// client when it sends: the same bytes, without keeping a padded payload in memory
// for every transaction sent.
func (p Payloads) encode(sent time.Time) (cmttypes.Tx, error) {
	run := p.Run
	b, err := payload.NewBytes(&payload.Payload{Connections: p.Connections, Rate: p.Rate, Size: p.Size, Id: run[:], Time: timestamppb.New(sent)})
	if err != nil {
		return nil, fmt.Errorf("load: loadtime payload: %w", err)
	}
	return b, nil
}

// MapBlock keeps of block what the run needs: every transaction whose hash sent
// holds (the send times, Unix nanoseconds) is counted as committed or refused by its
// result, and a committed one is replaced by its payload; the others are left out.
func MapBlock(block *cmttypes.Block, results []*abcitypes.ExecTxResult, sent map[[32]byte]int64, p Payloads) (Block, error) {
	if len(results) != len(block.Txs) {
		return Block{}, fmt.Errorf("load: block %d has %d transactions and %d results", block.Height, len(block.Txs), len(results))
	}
	out := Block{Height: block.Height, Time: block.Time}
	for i, tx := range block.Txs {
		at, ours := sent[sha256.Sum256(tx)]
		switch {
		case !ours:
		case results[i].Code != abcitypes.CodeTypeOK:
			out.Refused++
		default:
			pl, err := p.encode(time.Unix(0, at))
			if err != nil {
				return Block{}, err
			}
			out.Committed++
			out.Payloads = append(out.Payloads, pl)
		}
	}
	return out, nil
}

// Collect reads blocks from..to (inclusive) and their results from src and maps each
// (MapBlock).
func Collect(ctx context.Context, src BlockSource, from, to int64, sent map[[32]byte]int64, p Payloads) ([]Block, error) {
	out := make([]Block, 0, max(0, to-from+1))
	for h := from; h <= to; h++ {
		b, err := src.Block(ctx, &h)
		if err != nil {
			return nil, fmt.Errorf("load: block %d: %w", h, err)
		}
		r, err := src.BlockResults(ctx, &h)
		if err != nil {
			return nil, fmt.Errorf("load: results of block %d: %w", h, err)
		}
		m, err := MapBlock(b.Block, r.TxsResults, sent, p)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}
