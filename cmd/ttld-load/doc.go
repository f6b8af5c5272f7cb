// Command ttld-load drives a ttld node, or CometBFT's kvstore, over websockets or
// keep-alive HTTP connections (CometBFT's JSON-RPC clients) and reports what it
// committed (CometBFT's test/loadtime report):
//
//	ttld-load genesis --home H     fund N seed-derived signers in a new home's genesis
//	ttld-load configure --home H   the consensus, mempool and RPC settings of a home
//	ttld-load setup                register a document workload's contract
//	ttld-load run                  send a workload, then report throughput and latency
//	ttld-load report               every ttld run beside its kvstore run, with the ratio
//
// It only connects to the node it is given; it listens on nothing.
package main
