#!/usr/bin/env bash
# make bench-compare: ttld against CometBFT's own kvstore application at saturation,
# one validator each, the same consensus settings, the same load tool.
#
# It builds the cometbft binary at the version go.mod pins (go install, from the module
# proxy, into bin/cometbft-VERSION), then for every workload of BENCH_WORKLOADS runs,
# each on a fresh home and one at a time:
#   - cometbft start --proxy_app=persistent_kvstore (goleveldb on disk) with kvstore
#     key=value transactions of the workload's transaction size;
#   - ttld start with the workload itself (BENCH_SIGNERS signers in genesis);
# both configured by ttld-load configure with the settings printed at the start, bound
# to 127.0.0.1, and sent BENCH_RATE transactions per second on each of
# BENCH_CONNECTIONS connections for BENCH_TIME seconds (then BENCH_DRAIN seconds for
# the mempool to empty). It prints, per workload, each system's committed tx/s, p50
# and p99 commit latency and CPU use, and the ratio ttld/kvstore; it appends the
# per-block throughput to BENCH_CSV, one summary row per run to BENCH_SUMMARY and the
# node's and the load tool's CPU use to BENCH_CPU_CSV.
#
# NB: the default rate is above what either commits: a node reads a connection's
# requests one at a time, so the load tool's writes block on a full socket, and
# tm-load-test gives up on a write blocked for 10 s, which a connection whose buffers
# drain slowly (more than two connections sharing one node's intake) reaches.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node.sh

GO=${GO:-go}
TIME=${BENCH_TIME:-60}
DRAIN=${BENCH_DRAIN:-30}
RATE=${BENCH_RATE:-10000}
# Two connections: ttld verifies each connection's signatures on that connection's
# goroutine (abci.ClientCreator), and more than two ends tm-load-test's run at
# saturation (a write blocked for 10 s). 10,000 signers: a signer may have at most 24
# transactions pending past its last committed nonce, and a saturated mempool holds
# tens of thousands.
CONNECTIONS=${BENCH_CONNECTIONS:-2}
SIGNERS=${BENCH_SIGNERS:-10000}
WORKLOADS=${BENCH_WORKLOADS:-transfers address-transfers documents documents-ttl}
CSV=${BENCH_CSV:-docs/bench/throughput.csv}
SUMMARY=${BENCH_SUMMARY:-docs/bench/compare.csv}
CPU_CSV=${BENCH_CPU_CSV:-docs/bench/cpu.csv}
KVSTORE_PORTS=${BENCH_KVSTORE_PORTS:-37}
TTLD_PORTS=${BENCH_TTLD_PORTS:-38}
# The settings both homes get (ttld-load configure).
# Blocks of at most 4 MiB (28,000 transfers, more than either commits a second):
# CometBFT's 21 MiB let kvstore put 60,000 transactions in a block, whose results
# took its RPC past its 10 s write timeout.
SETTINGS=(
	--timeout-commit "${BENCH_TIMEOUT_COMMIT:-1s}"
	--timeout-propose "${BENCH_TIMEOUT_PROPOSE:-3s}"
	--create-empty-blocks=true
	--mempool-size "${BENCH_MEMPOOL_SIZE:-200000}"
	--mempool-max-txs-bytes "${BENCH_MEMPOOL_BYTES:-1073741824}"
	--block-max-bytes "${BENCH_BLOCK_BYTES:-4194304}"
	--rpc-max-request-batch-size "${BENCH_RPC_BATCH:-10}"
)

for v in TIME DRAIN RATE CONNECTIONS SIGNERS; do
	if ! [[ ${!v} =~ ^[0-9]+$ ]] || ((${!v} < 1)); then
		echo "BENCH_$v=${!v}: want a positive integer" >&2
		exit 2
	fi
done
if ((TIME > 3600 || DRAIN > 600)); then
	echo "BENCH_TIME=$TIME, BENCH_DRAIN=$DRAIN: at most 3600 and 600 seconds" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ttld-bench.XXXXXX")
finish() {
	local status=$?
	stop_node
	if ((status != 0)); then
		echo "homes and node logs kept in $work" >&2
	else
		rm -rf "$work"
	fi
	exit "$status"
}
trap finish EXIT
trap 'exit 130' INT TERM

version=$($GO list -m -f '{{.Version}}' github.com/cometbft/cometbft)
cometbft=bin/cometbft-$version/cometbft
if [[ ! -x $cometbft ]] || [[ $($cometbft version) != "${version#v}" ]]; then
	echo "building cometbft $version (go install, module proxy) into $(dirname "$cometbft")"
	GOBIN=$PWD/$(dirname "$cometbft") timeout 900 "$GO" install "github.com/cometbft/cometbft/cmd/cometbft@$version"
fi

# run_one SYSTEM WORKLOAD: a fresh home, its node, one load run, the node stopped.
run_one() {
	local system=$1 workload=$2 home=$work/$1-$2 ports rpc args
	if [[ $system == kvstore ]]; then
		ports=$KVSTORE_PORTS
		"$cometbft" init --home "$home" >/dev/null 2>&1
	else
		ports=$TTLD_PORTS
		bin/ttld init --home "$home" >/dev/null
		bin/ttld-load genesis --home "$home" --signers "$SIGNERS" >/dev/null
	fi
	bin/ttld-load configure --home "$home" "${SETTINGS[@]}" >/dev/null
	rpc=http://127.0.0.1:${ports}657
	if [[ $system == kvstore ]]; then
		start_node "$home.log" "$cometbft" start --home "$home" --proxy_app=persistent_kvstore --log_level error \
			--rpc.laddr "tcp://127.0.0.1:${ports}657" --p2p.laddr "tcp://127.0.0.1:${ports}656"
		args=(--workload kvstore --like "$workload")
	else
		start_node "$home.log" bin/ttld start --home "$home" --log-level warn \
			--rpc-laddr "tcp://127.0.0.1:${ports}657" --p2p-laddr "tcp://127.0.0.1:${ports}656" --prometheus-laddr "127.0.0.1:${ports}660" --web-laddr off
		args=(--workload "$workload" --signers "$SIGNERS")
	fi
	wait_rpc "$rpc"
	echo "== $system, $workload (pid $NODE_PID, RPC $rpc)"
	timeout $((TIME + DRAIN + 300)) bin/ttld-load run --node "$rpc" "${args[@]}" \
		--connections "$CONNECTIONS" --rate "$RATE" --time "$TIME" --drain "${DRAIN}s" --node-pid "$NODE_PID" \
		--csv "$CSV" --summary-csv "$work/compare.csv" --cpu-csv "$work/cpu.csv"
	stop_node
}

runs=$(($(wc -w <<<"$WORKLOADS") * 2))
"$cometbft" init --home "$work/probe-kvstore" >/dev/null 2>&1
bin/ttld init --home "$work/probe-ttld" >/dev/null
kvstore_settings=$(bin/ttld-load configure --home "$work/probe-kvstore" "${SETTINGS[@]}" | sed 's/^[^:]*: //')
ttld_settings=$(bin/ttld-load configure --home "$work/probe-ttld" "${SETTINGS[@]}" | sed 's/^[^:]*: //')
if [[ $kvstore_settings != "$ttld_settings" ]]; then
	echo "the two homes read the settings differently: kvstore $kvstore_settings, ttld $ttld_settings" >&2
	exit 1
fi
backend() { sed -n 's/^db_backend = "\(.*\)"$/\1/p' "$1/config/config.toml"; }
echo "cometbft $version kvstore (--proxy_app=persistent_kvstore) against ttld, one validator each, on 127.0.0.1"
echo "storage: kvstore: its state and CometBFT's stores in $(backend "$work/probe-kvstore") on disk; ttld: its state in goleveldb on disk, CometBFT's stores in $(backend "$work/probe-ttld")"
echo "settings, both homes: $ttld_settings"
echo "load: $CONNECTIONS connection(s) × $RATE tx/s for $TIME s, then up to $DRAIN s of drain; $runs runs, about $((runs * (TIME + DRAIN + 20) / 60 + 1)) minutes at most"
echo "workloads: $WORKLOADS"

for workload in $WORKLOADS; do
	for system in kvstore ttld; do
		run_one "$system" "$workload"
	done
done

echo
echo
echo "== summary: committed tx/s (block time), commit latency p50/p99 (ms), node CPU (cores), ratio ttld/kvstore"
awk -F, 'FNR == 1 { file++; next }
file == 1 { k = $1; tps[k, $2] = $3; lat[k, $2] = sprintf("%.0f/%.0f", $4, $5); if (!(k in seen)) { seen[k] = 1; order[++n] = k } }
file == 2 && $3 == "node" { cores[$1, $2] = $6 }
END {
	printf "%-18s %10s %10s %7s %15s %15s %6s %6s\n", "workload", "ttld tx/s", "kv tx/s", "ratio", "ttld p50/p99", "kv p50/p99", "ttld", "kv"
	for (i = 1; i <= n; i++) {
		k = order[i]
		ratio = tps[k, "kvstore"] > 0 ? tps[k, "ttld"] / tps[k, "kvstore"] : 0
		printf "%-18s %10.1f %10.1f %7.3f %15s %15s %6s %6s\n", k, tps[k, "ttld"], tps[k, "kvstore"], ratio, lat[k, "ttld"], lat[k, "kvstore"], cores[k, "ttld"], cores[k, "kvstore"]
	}
}' "$work/compare.csv" "$work/cpu.csv"

# append_csv SRC DST: SRC's rows after DST's (which gets SRC's header when new).
append_csv() {
	mkdir -p "$(dirname "$2")"
	if [[ ! -s $2 ]]; then
		cp "$1" "$2"
	elif [[ $(head -n 1 "$2") == "$(head -n 1 "$1")" ]]; then
		tail -n +2 "$1" >>"$2"
	else
		echo "$2 starts with another header than $(head -n 1 "$1"): not appended" >&2
		return 1
	fi
}
append_csv "$work/compare.csv" "$SUMMARY"
append_csv "$work/cpu.csv" "$CPU_CSV"
echo "appended: $CSV (per block), $SUMMARY (per run), $CPU_CSV (CPU per process)"
