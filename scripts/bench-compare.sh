#!/usr/bin/env bash
# make bench-compare: ttld against CometBFT's own kvstore application at saturation,
# one validator each, the same consensus settings, the same load tool, over every
# combination of client, transaction indexer, signer count and workload.
#
# It builds the cometbft binary at the version go.mod pins (go install, from the module
# proxy, into bin/cometbft-VERSION), then for every workload of BENCH_WORKLOADS, every
# indexer of BENCH_INDEXERS (kv: CometBFT's default, every transaction indexed; null:
# none) and every client of BENCH_CLIENTS runs, each on a fresh home and one at a time:
#   - cometbft start --proxy_app=persistent_kvstore (goleveldb on disk) with kvstore
#     key=value transactions of the workload's transaction size (once: kvstore has no
#     signers);
#   - ttld start with the workload itself, once for every count of BENCH_SIGNER_COUNTS
#     signers in genesis;
# all configured by ttld-load configure with the settings printed at the start, bound
# to 127.0.0.1, and sent transactions for BENCH_TIME seconds by bin/ttld-load run:
#   - ws: BENCH_CONNECTIONS websockets of BENCH_RATE tx/s each (requests in flight
#     without waiting for their answers);
#   - http: BENCH_HTTP_CONNECTIONS keep-alive HTTP connections of at most
#     BENCH_HTTP_RATE tx/s each, every POST after the answer to the one before (a
#     crowd of users, each waiting for its CheckTx answer);
# both broadcast_tx_sync. A transaction the node refuses because its mempool is full is
# sent again after a backoff, for up to BENCH_DRAIN seconds after the sending time; then
# up to BENCH_DRAIN seconds for the mempool to empty. It prints every ttld run beside
# its kvstore run (ttld-load report: committed tx/s, the ratio, p50 and p99 commit
# latency, the node's cores, retries, given up, refused, not committed); it appends the
# per-block throughput to BENCH_CSV, one summary row per run to BENCH_SUMMARY and the
# node's and the load tool's CPU use to BENCH_CPU_CSV. With BENCH_PROFILE set to a
# directory, every ttld node serves pprof on loopback and a CPU profile of the middle
# half of its sending time is written there, named after the run, with the share of it
# the garbage collector took (its mark workers, the allocations' assists and the
# sweeper) printed after the run.
#
# Lists (BENCH_CLIENTS, BENCH_INDEXERS, BENCH_SIGNER_COUNTS, BENCH_WORKLOADS) take
# commas or spaces. The runs: workloads × indexers × clients × (1 + signer counts); by
# default 4 × 2 × 2 × 3 = 48.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node.sh

GO=${GO:-go}
TIME=${BENCH_TIME:-30}
DRAIN=${BENCH_DRAIN:-30}
RATE=${BENCH_RATE:-10000}
# Two websockets: CometBFT reads each websocket's requests one at a time, each after its
# CheckTx, so two connections already keep the node's intake busy; the figures of the
# earlier rounds were taken with them.
CONNECTIONS=${BENCH_CONNECTIONS:-2}
# 32 HTTP connections, one request in flight each: Go's HTTP server serves every
# connection on its own goroutine, so up to 32 broadcasts are in CheckTx or waiting for
# the mempool at once, as from a crowd of wallets; more only adds the load tool's own
# CPU on a 2-core machine, fewer leaves the node's intake idle between answers.
HTTP_CONNECTIONS=${BENCH_HTTP_CONNECTIONS:-32}
HTTP_RATE=${BENCH_HTTP_RATE:-1000}
CLIENTS=${BENCH_CLIENTS:-ws,http}
INDEXERS=${BENCH_INDEXERS:-kv,null}
# 1,000 and 10,000 signers: a signer may have at most 24 transactions pending past its
# last committed nonce, and ten times more signers means ten times more distinct keys
# in the state's reads.
SIGNER_COUNTS=${BENCH_SIGNER_COUNTS:-1000,10000}
WORKLOADS=${BENCH_WORKLOADS:-transfers address-transfers documents documents-ttl}
CSV=${BENCH_CSV:-docs/bench/clients-throughput.csv}
SUMMARY=${BENCH_SUMMARY:-docs/bench/clients.csv}
CPU_CSV=${BENCH_CPU_CSV:-docs/bench/clients-cpu.csv}
KVSTORE_PORTS=${BENCH_KVSTORE_PORTS:-37}
TTLD_PORTS=${BENCH_TTLD_PORTS:-38}
PROFILE=${BENCH_PROFILE:-}
# The settings every home gets (ttld-load configure), but the indexer.
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

# list VALUE: VALUE's items, commas or spaces between them.
list() { tr ',' ' ' <<<"$1"; }
CLIENTS=$(list "$CLIENTS")
INDEXERS=$(list "$INDEXERS")
SIGNER_COUNTS=$(list "$SIGNER_COUNTS")
WORKLOADS=$(list "$WORKLOADS")

for c in $CLIENTS; do
	case $c in ws | http) ;; *)
		echo "BENCH_CLIENTS: $c: want ws or http" >&2
		exit 2
		;;
	esac
done
for i in $INDEXERS; do
	case $i in kv | null) ;; *)
		echo "BENCH_INDEXERS: $i: want kv or null" >&2
		exit 2
		;;
	esac
done
for n in $SIGNER_COUNTS; do
	if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 2)); then
		echo "BENCH_SIGNER_COUNTS: $n: want integers of at least 2" >&2
		exit 2
	fi
done
if [[ -z $CLIENTS || -z $INDEXERS || -z $SIGNER_COUNTS || -z $WORKLOADS ]]; then
	echo "BENCH_CLIENTS, BENCH_INDEXERS, BENCH_SIGNER_COUNTS and BENCH_WORKLOADS each need at least one item" >&2
	exit 2
fi

for v in TIME DRAIN RATE CONNECTIONS HTTP_CONNECTIONS HTTP_RATE; do
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

# run_one SYSTEM WORKLOAD INDEXER CLIENT [SIGNERS]: a fresh home, its node, one load
# run, the node stopped.
run_one() {
	local system=$1 workload=$2 indexer=$3 client=$4 signers=${5:-0} home ports rpc args
	home=$work/$system-$workload-$indexer-$client-$signers
	if [[ $system == kvstore ]]; then
		ports=$KVSTORE_PORTS
		"$cometbft" init --home "$home" >/dev/null 2>&1
	else
		ports=$TTLD_PORTS
		bin/ttld init --home "$home" >/dev/null
		bin/ttld-load genesis --home "$home" --signers "$signers" >/dev/null
	fi
	bin/ttld-load configure --home "$home" "${SETTINGS[@]}" --indexer "$indexer" >/dev/null
	rpc=http://127.0.0.1:${ports}657
	local profile="" profiler=""
	if [[ $system == ttld && -n $PROFILE ]]; then
		profile=$PROFILE/ttld-$workload-$indexer-$client-$signers.pprof
		sed -i "s|^pprof_laddr = .*|pprof_laddr = \"127.0.0.1:${ports}606\"|" "$home/config/config.toml"
	fi
	if [[ $system == kvstore ]]; then
		start_node "$home.log" "$cometbft" start --home "$home" --proxy_app=persistent_kvstore --log_level error \
			--rpc.laddr "tcp://127.0.0.1:${ports}657" --p2p.laddr "tcp://127.0.0.1:${ports}656"
		args=(--workload kvstore --like "$workload")
	else
		start_node "$home.log" bin/ttld start --home "$home" --log-level warn \
			--rpc-laddr "tcp://127.0.0.1:${ports}657" --p2p-laddr "tcp://127.0.0.1:${ports}656" --prometheus-laddr "127.0.0.1:${ports}660" --web-laddr off
		args=(--workload "$workload" --signers "$signers")
	fi
	if [[ $client == http ]]; then
		args+=(--client http --connections "$HTTP_CONNECTIONS" --rate "$HTTP_RATE")
	else
		args+=(--client ws --connections "$CONNECTIONS" --rate "$RATE")
	fi
	wait_rpc "$rpc"
	echo "== $system, $workload, indexer $indexer, $client client$([[ $system == kvstore ]] || echo ", $signers signers") (pid $NODE_PID, RPC $rpc)"
	if [[ -n $profile ]]; then
		(sleep $((TIME / 4)) && curl -sf -o "$profile" "http://127.0.0.1:${ports}606/debug/pprof/profile?seconds=$((TIME / 2 > 0 ? TIME / 2 : 1))") &
		profiler=$!
	fi
	timeout $((TIME + 2 * DRAIN + 300)) bin/ttld-load run --node "$rpc" "${args[@]}" \
		--time "$TIME" --drain "${DRAIN}s" --node-pid "$NODE_PID" \
		--csv "$work/throughput.csv" --summary-csv "$work/compare.csv" --cpu-csv "$work/cpu.csv"
	if [[ -n $profile ]]; then
		wait "$profiler" || echo "no CPU profile of the node" >&2
		echo "CPU profile: $profile; the garbage collector's share: $(gc_share "$profile")"
	fi
	stop_node
	rm -rf "$home"
}

# gc_share PROFILE: the share of PROFILE's samples in the garbage collector's mark
# workers, the allocations' mark assists and the background sweeper.
gc_share() {
	"$GO" tool pprof -top -focus 'runtime\.(gcBgMarkWorker|gcAssistAlloc|bgsweep)$' "$1" 2>/dev/null |
		sed -n 's/^Showing nodes accounting for .*, \([0-9.]*%\) of .* total$/\1/p'
}

count() { wc -w <<<"$1"; }
runs=$(($(count "$WORKLOADS") * $(count "$INDEXERS") * $(count "$CLIENTS") * (1 + $(count "$SIGNER_COUNTS"))))
"$cometbft" init --home "$work/probe-kvstore" >/dev/null 2>&1
bin/ttld init --home "$work/probe-ttld" >/dev/null
kvstore_settings=$(bin/ttld-load configure --home "$work/probe-kvstore" "${SETTINGS[@]}" | sed 's/^[^:]*: //')
ttld_settings=$(bin/ttld-load configure --home "$work/probe-ttld" "${SETTINGS[@]}" | sed 's/^[^:]*: //')
if [[ $kvstore_settings != "$ttld_settings" ]]; then
	echo "the two homes read the settings differently: kvstore $kvstore_settings, ttld $ttld_settings" >&2
	exit 1
fi
backend() { sed -n 's/^db_backend = "\(.*\)"$/\1/p' "$1/config/config.toml"; }
echo "cometbft $version kvstore (--proxy_app=persistent_kvstore) against ttld, one validator each, on 127.0.0.1; $(nproc) cores, $(uptime)"
echo "storage: kvstore: its state and CometBFT's stores in $(backend "$work/probe-kvstore") on disk; ttld: its state in goleveldb on disk, CometBFT's stores in $(backend "$work/probe-ttld")"
echo "settings, every home: ${ttld_settings% tx_index.indexer=*}; tx_index.indexer: $INDEXERS"
echo "clients: $CLIENTS (ws: $CONNECTIONS connection(s) × $RATE tx/s; http: $HTTP_CONNECTIONS connections × at most $HTTP_RATE tx/s), broadcast_tx_sync, for $TIME s, then up to $DRAIN s of retries and up to $DRAIN s of drain"
echo "workloads: $WORKLOADS; ttld signers: $SIGNER_COUNTS"
echo "$runs runs, about $((runs * (TIME + 25) / 60 + 1)) minutes, at most $((runs * (TIME + 2 * DRAIN + 30) / 60 + 1))"

for workload in $WORKLOADS; do
	for indexer in $INDEXERS; do
		for client in $CLIENTS; do
			run_one kvstore "$workload" "$indexer" "$client"
			for signers in $SIGNER_COUNTS; do
				run_one ttld "$workload" "$indexer" "$client" "$signers"
			done
		done
	done
done

echo
echo
echo "== every ttld run beside its kvstore run (ratio: ttld/kvstore committed tx/s; cores: the node's over the load, the retries and the drain)"
bin/ttld-load report --summary "$work/compare.csv" --cpu "$work/cpu.csv"

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
append_csv "$work/throughput.csv" "$CSV"
append_csv "$work/compare.csv" "$SUMMARY"
append_csv "$work/cpu.csv" "$CPU_CSV"
echo "appended: $CSV (per block), $SUMMARY (per run), $CPU_CSV (CPU per process)"
