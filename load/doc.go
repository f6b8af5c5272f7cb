// Package load drives a ttld node (or CometBFT's kvstore, for comparison) through its
// RPC and measures what it commits, with CometBFT's own load report.
//
// The pieces, in the order a run uses them:
//
//   - Signers: ed25519 keys derived from a seed and an index (DeriveSigner), each one a
//     platform address and the key of an identity, so that a generator needs no key
//     files; AddSigners funds them in the genesis of a freshly initialised home.
//   - Configure: the consensus, mempool and RPC settings of a CometBFT home (ttld's or
//     the cometbft binary's), set the same way in both for a side-by-side comparison.
//   - Workloads: identity credit transfers, address funds transfers, document creates
//     with and without a ttl (their contract registered by Setup through the client
//     package), and CometBFT kvstore transactions of the same size.
//   - Factory: every Client it makes (one per connection) owns a disjoint set of
//     signers and their nonces, read from the node first, and records the send time of
//     every transaction by its hash.
//   - Sending (sendAll): each connection's transactions go out over a Transport,
//     websockets (few connections, many requests in flight on each) or keep-alive HTTP
//     (many connections, one request in flight on each: a crowd of users), through
//     CometBFT's JSON-RPC clients; every answer is read, and a transaction a full
//     mempool refused is sent again after a backoff, counted (Sending).
//   - Collect and Report: after the run, the node's blocks and block results are read
//     through the RPC; CometBFT's loadtime report (test/loadtime/report) is handed
//     those blocks with each of the run's code-0 transactions replaced by a loadtime
//     payload (test/loadtime/payload) carrying its send time, and gives the latencies;
//     throughput is counted over the block times of the blocks that hold them.
//
// Run ties them together; Compare pairs the runs a comparison appended, each ttld run
// with its kvstore run. cmd/ttld-load is the command line, scripts/load.sh and
// scripts/bench-compare.sh its drivers.
package load
