# Starting and stopping the throwaway nodes of scripts/load.sh and
# scripts/bench-compare.sh (sourced by both, which set -euo pipefail).
#
# start_node LOG CMD...   runs CMD in the background, output to LOG; sets NODE_PID
# wait_rpc URL            waits (30 s at most) for the node's RPC to answer /status
# stop_node               SIGTERM to NODE_PID, SIGKILL if it has not stopped in 20 s
#
# The caller's EXIT trap calls stop_node, so a node never outlives its script.

NODE_PID=""
NODE_LOG=""

start_node() {
	NODE_LOG=$1
	shift
	"$@" >"$NODE_LOG" 2>&1 &
	NODE_PID=$!
}

wait_rpc() {
	local url=$1 i
	for i in $(seq 1 60); do
		if ! kill -0 "$NODE_PID" 2>/dev/null; then
			echo "the node exited before its RPC answered; the end of $NODE_LOG:" >&2
			tail -n 20 "$NODE_LOG" >&2
			return 1
		fi
		if curl -fsS --max-time 2 "$url/status" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.5
	done
	echo "no answer from $url/status in 30 s; the end of $NODE_LOG:" >&2
	tail -n 20 "$NODE_LOG" >&2
	return 1
}

stop_node() {
	local pid=$NODE_PID i
	NODE_PID=""
	[[ -n $pid ]] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		for i in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "node $pid did not stop within 20 s of SIGTERM: killing it" >&2
			kill -KILL "$pid"
		fi
	fi
	wait "$pid" 2>/dev/null || true
}
