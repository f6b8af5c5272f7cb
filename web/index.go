package web

import (
	"context"
	"errors"
	"fmt"

	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/ttld-dev/ttld/protocol"
)

// The lists of the view that need a search over the chain's history (an identity's
// contracts and transactions, the contracts, a transaction or a document found by its
// id) come from CometBFT's transaction index (config.toml's [tx_index], kv by default),
// through tx_search. They match CometBFT's tx.hash and these event attributes alone
// (docs/ARCHITECTURE.md, "The web view"), each one of protocol.Searched, the
// attributes the node indexes.
var (
	// searchSigner: the transactions an account (address or identity) signed and was
	// charged for.
	searchSigner = protocol.SearchedAttr{Type: protocol.EventTransition, Key: protocol.AttrSigner}
	// searchContract and searchOwner: the contracts created, and those of an owner.
	searchContract = protocol.SearchedAttr{Type: protocol.EventDataContractCreated, Key: protocol.AttrContract}
	searchOwner    = protocol.SearchedAttr{Type: protocol.EventDataContractCreated, Key: protocol.AttrOwner}
	// searchDocument: the transaction that created a document, which names its
	// contract and type.
	searchDocument = searchAction(protocol.ActionCreate)
	// searchType and searchCode: the transaction list's filters by kind and by
	// result code.
	searchType = protocol.SearchedAttr{Type: protocol.EventTransition, Key: protocol.AttrType}
	searchCode = protocol.SearchedAttr{Type: protocol.EventTransition, Key: protocol.AttrCode}
	// searchRecipient, searchCreated and searchPayout: what an account received, an
	// identity's creation and (a block event) its epochs' payouts.
	searchRecipient = protocol.SearchedAttr{Type: protocol.EventTransfer, Key: protocol.AttrTo}
	searchCreated   = protocol.SearchedAttr{Type: protocol.EventIdentityCreated, Key: protocol.AttrIdentity}
	searchPayout    = protocol.SearchedAttr{Type: protocol.EventEpochPayout, Key: protocol.AttrIdentity}
	// searchExpired: the block that expired a document (a block event).
	searchExpired = protocol.SearchedAttr{Type: protocol.EventDocumentExpired, Key: protocol.AttrID}
	// searchBlockTxs: the blocks that hold transactions (the node's block event).
	searchBlockTxs = protocol.SearchedAttr{Type: protocol.EventBlockTransactions, Key: protocol.AttrCount}
)

// searchAction: the transactions that made action k on a document, by its id: its
// history.
func searchAction(k protocol.DocumentActionKind) protocol.SearchedAttr {
	return protocol.SearchedAttr{Type: protocol.EventDocumentAction(k), Key: protocol.AttrID}
}

// errNoIndex: the node keeps no transaction index, so the lists drawn from it are
// unavailable; the pages say so and show the rest.
var errNoIndex = errors.New("this node keeps no transaction index (config.toml [tx_index] indexer = \"null\"): lists of the chain's history are unavailable")

// MaxSearchPage is how many rows a page asks of the index at most (CometBFT's tx_search
// answers no more than 100).
const MaxSearchPage = 100

// indexing reports whether the node keeps a transaction index. A node's index is set
// for as long as it runs, so the view asks once.
func (s *Server) indexing(ctx context.Context) (bool, error) {
	if v := s.indexed.Load(); v != indexUnknown {
		return v == indexOn, nil
	}
	st, err := s.rpc.Status(ctx)
	if err != nil {
		return false, err
	}
	on := st.NodeInfo.Other.TxIndex == "on"
	if on {
		s.indexed.Store(indexOn)
	} else {
		s.indexed.Store(indexOff)
	}
	return on, nil
}

// What indexing found, once asked.
const (
	indexUnknown int32 = iota
	indexOn
	indexOff
)

// txSearch returns page (from 1) of per transactions that query matches, newest first,
// and how many match; errNoIndex when the node keeps no index, and errNotFound for a
// page past the last.
func (s *Server) txSearch(ctx context.Context, query string, page, per int) ([]*coretypes.ResultTx, int, error) {
	on, err := s.indexing(ctx)
	if err != nil {
		return nil, 0, err
	}
	if !on {
		return nil, 0, errNoIndex
	}
	res, err := s.rpc.TxSearch(ctx, query, false, &page, &per, "desc")
	if err != nil && page > 1 {
		// CometBFT refuses a page past the last; the first page says how many there are.
		first := 1
		if all, ferr := s.rpc.TxSearch(ctx, query, false, &first, &per, "desc"); ferr == nil && page > (all.TotalCount+per-1)/per {
			return nil, all.TotalCount, errNotFound{fmt.Sprintf("page %d (the last is %d)", page, max(1, (all.TotalCount+per-1)/per))}
		}
	}
	if err != nil {
		return nil, 0, err
	}
	return res.Txs, res.TotalCount, nil
}

// findTx is the block of the transaction of hash (upper-case hex), through the index;
// found is false when it holds none.
func (s *Server) findTx(ctx context.Context, hash string) (height int64, found bool, err error) {
	txs, _, err := s.txSearch(ctx, fmt.Sprintf("%s='%s'", cmttypes.TxHashKey, hash), 1, 1)
	if err != nil || len(txs) == 0 {
		return 0, false, err
	}
	return txs[0].Height, true, nil
}
