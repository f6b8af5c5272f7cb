// Package app says when things happen: the block pipeline, a deterministic function of
// (state, block). ExecuteBlock runs, top to bottom:
//
//  1. epoch bookkeeping for the block time (joins with the epochs issue);
//  2. every transaction: decode, authenticate the signer (signature and nonce), state
//     validation, apply, charge the processing fee; a refusal gets its code, pays its
//     fee when its code is paid, and changes nothing else;
//  3. the address-balance step: record the balances this block changed, compact the
//     pending records when enough have gathered, and remove expired compacted records,
//     at most MaxAddressBalanceCleanupsPerBlock of them;
//  4. expire_documents (joins with the document time-to-live issue, right after 3);
//  5. the block's fees into the pools.
//
// The app hash is then the root of the working tree, which the caller reads. Nothing here
// reads the clock, randomness, the environment, files or the network; the block time is
// an argument.
package app
