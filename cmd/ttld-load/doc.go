// Command ttld-load drives a ttld node, or CometBFT's kvstore, with CometBFT's load
// tooling (tm-load-test, test/loadtime) and reports what it committed:
//
//	ttld-load genesis --home H     fund N seed-derived signers in a new home's genesis
//	ttld-load configure --home H   the consensus, mempool and RPC settings of a home
//	ttld-load setup                register a document workload's contract
//	ttld-load run                  send a workload, then report throughput and latency
//
// It only connects to the node it is given; it listens on nothing.
package main
