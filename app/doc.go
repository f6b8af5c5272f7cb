// Package app says when things happen: the block pipeline, a deterministic function of
// (state, block). ExecuteBlock runs, top to bottom (docs/ARCHITECTURE.md, "A block, top
// to bottom"):
//
//  0. a scheduled protocol upgrade at its height (for 14: the ttl trees), then the rules
//     of the block's protocol version;
//  1. the block's context (its height and time, recorded for CheckTx and queries) and
//     its epoch; the first block of a new epoch, however many epochs passed, is the
//     epoch change: the storage distribution pool is paid out over the 2,000 epochs
//     from the new one on, pending refunds are taken back, lifetime pools are spread
//     and expired time-range windows swept, in one batch;
//  2. every transaction: decode, authenticate the signer (signature and nonce), state
//     validation, apply, charge the fee; a refusal gets its code, pays its fee when its
//     code is paid, and changes nothing else;
//  3. the address-balance step: record the balances this block changed, compact the
//     pending records when enough have gathered, and remove expired compacted records
//     within the block's budget (drive.Drain);
//  4. expire_documents (protocol version 14 on): expired documents deleted oldest first
//     under the per-block count and weight budgets (drive.Drain), orphaned entries
//     removed;
//  5. the block's fees into the pools: processing to its epoch's pool, perpetual
//     storage to the storage distribution pool (which the next epoch change pays out:
//     a block never adds to a pool its own epoch change removed), refunds to their
//     owners and pending, and the proposer's block counted;
//  6. the finished epochs not yet paid, oldest first, to their proposers;
//  7. the running total of credits, which every write of the block updated
//     (drive.Ledger), for the caller to check against the supply.
//
// ProposeBlock runs the same pipeline over a proposal's candidates, leaving out every
// transaction refused unpaid: the proposer's block, executed as ExecuteBlock would.
//
// The app hash is then the root of the working tree, which the caller reads. Nothing here
// reads the clock, randomness, the environment, files or the network; the block time is
// an argument.
package app
