#!/usr/bin/env bash
# make load: one workload against a throwaway single-validator ttld chain, through
# bin/ttld-load run, then its committed tx/s, commit latency, the retries after a full
# mempool and how many sent transactions were not committed.
#
# It initialises a home in $TMPDIR (ttld init, LOAD_SIGNERS seed-derived signers in
# genesis, ttld-load configure's settings: a 50,000-transaction mempool), starts ttld
# on 127.0.0.1 ports ${LOAD_PORTS}657 (RPC), ${LOAD_PORTS}656 and ${LOAD_PORTS}660,
# sends LOAD_WORKLOAD for LOAD_TIME seconds at LOAD_RATE transactions per second on
# each of LOAD_CONNECTIONS connections of LOAD_CLIENT (ws: websockets; http: keep-alive
# HTTP connections, one request in flight each), prints the figures (appending the per-block
# throughput to LOAD_CSV when set), and stops the node, also on failure or Ctrl-C.
# LOAD_KEEP=1 keeps the home and the node's log (they are kept on failure too).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node.sh

WORKLOAD=${LOAD_WORKLOAD:-transfers}
CLIENT=${LOAD_CLIENT:-ws}
TIME=${LOAD_TIME:-30}
RATE=${LOAD_RATE:-500}
CONNECTIONS=${LOAD_CONNECTIONS:-2}
SIGNERS=${LOAD_SIGNERS:-1000}
CSV=${LOAD_CSV:-}
PORTS=${LOAD_PORTS:-36}
KEEP=${LOAD_KEEP:-0}
DRAIN=30

case $WORKLOAD in
kvstore)
	echo "LOAD_WORKLOAD=kvstore needs CometBFT's kvstore node: make bench-compare runs it" >&2
	exit 2
	;;
esac
if ! [[ $TIME =~ ^[0-9]+$ ]] || ((TIME < 1 || TIME > 3600)); then
	echo "LOAD_TIME=$TIME: want 1 to 3600 seconds" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ttld-load.XXXXXX")
finish() {
	local status=$?
	stop_node
	if [[ $KEEP == 1 || $status != 0 ]]; then
		echo "home and node log kept in $work"
	else
		rm -rf "$work"
	fi
	exit "$status"
}
trap finish EXIT
trap 'exit 130' INT TERM

home=$work/home
rpc=http://127.0.0.1:${PORTS}657
bin/ttld init --home "$home" >/dev/null
bin/ttld-load genesis --home "$home" --signers "$SIGNERS"
bin/ttld-load configure --home "$home"
start_node "$work/node.log" bin/ttld start --home "$home" \
	--rpc-laddr "tcp://127.0.0.1:${PORTS}657" --p2p-laddr "tcp://127.0.0.1:${PORTS}656" --prometheus-laddr "127.0.0.1:${PORTS}660" --web-laddr off
wait_rpc "$rpc"
echo "ttld started (pid $NODE_PID, RPC $rpc, log $work/node.log)"

args=(run --node "$rpc" --client "$CLIENT" --workload "$WORKLOAD" --signers "$SIGNERS" --connections "$CONNECTIONS"
	--rate "$RATE" --time "$TIME" --drain "${DRAIN}s" --node-pid "$NODE_PID")
if [[ -n $CSV ]]; then
	args+=(--csv "$CSV")
fi
timeout $((TIME + 2 * DRAIN + 300)) bin/ttld-load "${args[@]}"
