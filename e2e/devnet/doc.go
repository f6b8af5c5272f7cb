// Package devnet is the fault test of the four-validator docker-compose network
// (docker-compose.yml at the repository root): it brings the network up from the
// ttld:local image, sends a steady load of transfers to all four nodes while it
// SIGKILLs and restarts one validator, pauses another and cuts a third off the network
// for ten seconds, then checks that the nodes agree on every block and app hash, that
// every transfer reads back with a verified proof from every node, and that ttld replay
// of the stopped nodes' block stores reproduces every app hash. Beside it, the upgrade
// test (upgrade_test.go) and the state sync test (statesync_test.go). Every test
// network commits blocks in tens of milliseconds (ttld testnet --timeout-commit), so
// that the tests wait only where the protocol counts time: epochs of a minute, ttls of
// seconds. The fault test reads epoch 0's payouts, so it lasts the first epoch, a
// minute, and a few seconds.
//
// The test needs a Docker engine, docker-compose (or `docker compose`) and the image,
// so it only builds with the devnet tag: `make e2e-devnet` builds bin/ttld and the
// image, then runs it. It talks to the nodes through their ports on 127.0.0.1 only, and
// runs as its own compose project (ttld-e2e) on its own subnet (172.28.1.0/24) and host
// ports (25657, 25757, 25857, 25957), so a `make devnet-up` network can run beside it.
package devnet
