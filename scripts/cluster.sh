#!/usr/bin/env bash
# A three-node RabbitMQ cluster on loopback, for the cluster tests and for
# trying rungs against a real cluster on one machine.
#
#   scripts/cluster.sh [up]        start the nodes (scripts/broker.sh) and join them
#   scripts/cluster.sh down        stop every node (data kept)
#   scripts/cluster.sh clean       down, then remove the state directories
#   scripts/cluster.sh status      each node, and the cluster as node 1 sees it
#   scripts/cluster.sh env         RUNGS_URL / RUNGS_MGMT_URL for node 1, all URLs
#   scripts/cluster.sh stop N      stop node N only (the others keep the cluster)
#   scripts/cluster.sh kill N      SIGKILL node N's Erlang VM, as a crash would
#   scripts/cluster.sh start N     start node N again; it rejoins by itself
#   scripts/cluster.sh ctl N ARGS  rabbitmqctl against node N
#
# Each node is a scripts/broker.sh node with a name, a state directory and
# ports of its own; they share one Erlang cookie. Parameters (environment):
#   RUNGS_CLUSTER_DIR         state root (default /var/tmp/rungs-cluster); node N uses DIR/nN
#   RUNGS_CLUSTER_NODE        node name prefix (default rungs-c: rungs-c1@localhost ...)
#   RUNGS_CLUSTER_AMQP_PORTS  AMQP ports, one per node (default "5681 5682 5683")
#   RUNGS_CLUSTER_MGMT_PORTS  management ports (default "15681 15682 15683")
#   RUNGS_CLUSTER_DIST_PORTS  Erlang distribution ports (default "25681 25682 25683")
set -euo pipefail

HOST=127.0.0.1
ROOT=${RUNGS_CLUSTER_DIR:-/var/tmp/rungs-cluster}
PREFIX=${RUNGS_CLUSTER_NODE:-rungs-c}
read -r -a AMQP <<<"${RUNGS_CLUSTER_AMQP_PORTS:-5681 5682 5683}"
read -r -a MGMT <<<"${RUNGS_CLUSTER_MGMT_PORTS:-15681 15682 15683}"
read -r -a DIST <<<"${RUNGS_CLUSTER_DIST_PORTS:-25681 25682 25683}"
SIZE=${#AMQP[@]}
BROKER=$(dirname "$(readlink -f "$0")")/broker.sh

log() { printf 'cluster: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

((SIZE >= 1 && ${#MGMT[@]} == SIZE && ${#DIST[@]} == SIZE)) ||
	die "RUNGS_CLUSTER_AMQP_PORTS, _MGMT_PORTS and _DIST_PORTS must list as many ports each"

nodename() { echo "$PREFIX$1@localhost"; }

# Runs scripts/broker.sh for node N (1-based).
node() { # N args...
	local n=$1 i=$(($1 - 1))
	shift
	((n >= 1 && n <= SIZE)) || die "no node $n (1 to $SIZE)"
	RUNGS_NODENAME=$(nodename "$n") RUNGS_BROKER_DIR=$ROOT/n$n \
		RUNGS_AMQP_PORT=${AMQP[$i]} RUNGS_MGMT_PORT=${MGMT[$i]} RUNGS_DIST_PORT=${DIST[$i]} \
		RUNGS_ERLANG_COOKIE=$(cookie) bash "$BROKER" "$@"
}

# The cluster's shared Erlang cookie, made once.
cookie() {
	if [[ ! -s $ROOT/.cookie ]]; then
		mkdir -p "$ROOT"
		local c
		c=$(head -c 512 /dev/urandom | LC_ALL=C tr -dc '[:upper:]')
		(umask 077 && printf '%s' "${c:0:20}" >"$ROOT/.cookie")
	fi
	cat "$ROOT/.cookie"
}

# Lists the running members node N knows, one per line.
members() { # N
	node "$1" ctl cluster_status --formatter json 2>/dev/null |
		grep -o '"running_nodes":\[[^]]*\]' | grep -o '"[^"]*@[^"]*"' | tr -d '"' || true
}

# Runs rabbitmqctl against node N, showing its chatter only if it fails.
quiet() { # N args...
	local out
	out=$(node "$1" ctl "${@:2}" 2>&1) || { printf '%s\n' "$out" >&2; die "rabbitmqctl ${*:2} on node $1 failed"; }
}

cmd_up() {
	cookie >/dev/null
	local n pids=() failed=0
	# The nodes boot side by side: a node that stopped before its peers
	# waits for them to come back when it starts.
	for ((n = 1; n <= SIZE; n++)); do
		node "$n" up &
		pids+=($!)
	done
	for n in "${!pids[@]}"; do
		wait "${pids[$n]}" || { log "node $((n + 1)) did not start"; failed=1; }
	done
	((failed == 0)) || die "not every node started (logs under $ROOT/n*/log)"
	local first
	first=$(nodename 1)
	for ((n = 2; n <= SIZE; n++)); do
		if members 1 | grep -qx "$(nodename "$n")"; then
			continue
		fi
		log "joining $(nodename "$n") to $first"
		quiet "$n" stop_app
		quiet "$n" reset
		quiet "$n" join_cluster "$first"
		quiet "$n" start_app
		quiet "$n" await_startup
	done
	wait_members
	node 1 ctl enable_feature_flag all >/dev/null
	log "cluster of $SIZE up: $(members 1 | tr '\n' ' ')"
}

# Waits until node 1 sees every node running and every node answers.
wait_members() {
	local deadline=$((SECONDS + 120)) n
	until [[ $(members 1 | wc -l) -eq $SIZE ]]; do
		((SECONDS < deadline)) || die "node 1 sees only: $(members 1 | tr '\n' ' ')"
		sleep 1
	done
	for ((n = 1; n <= SIZE; n++)); do
		until node "$n" status >/dev/null 2>&1; do
			((SECONDS < deadline)) || die "node $n does not answer"
			sleep 1
		done
	done
}

cmd_down() {
	local n
	# In reverse: node 1 stops last, so it is the one to start first.
	for ((n = SIZE; n >= 1; n--)); do
		node "$n" down
	done
}

cmd_kill() { # N
	local n=$1 pid pidfile deadline=$((SECONDS + 30))
	((n >= 1 && n <= SIZE)) || die "no node $n (1 to $SIZE)"
	pidfile=$ROOT/n$n/$(nodename "$n").pid
	pid=$(cat "$pidfile" 2>/dev/null) || die "node $n is not running (no $pidfile)"
	grep -qa beam "/proc/$pid/cmdline" 2>/dev/null || die "node $n is not running (pid $pid is no Erlang VM)"
	log "killing $(nodename "$n") (pid $pid)"
	kill -KILL "$pid"
	while kill -0 "$pid" 2>/dev/null; do
		((SECONDS < deadline)) || die "pid $pid survived SIGKILL"
		sleep 0.2
	done
}

cmd_status() {
	local n rc=0
	for ((n = 1; n <= SIZE; n++)); do
		printf '%s: ' "$(nodename "$n")"
		node "$n" status || rc=1
	done
	echo "running members seen by node 1: $(members 1 | tr '\n' ' ')"
	return $rc
}

cmd_env() {
	local n urls=() mgmts=()
	for ((n = 1; n <= SIZE; n++)); do
		urls+=("amqp://guest:guest@$HOST:${AMQP[$((n - 1))]}/")
		mgmts+=("http://$HOST:${MGMT[$((n - 1))]}")
	done
	echo "export RUNGS_URL=${urls[0]}"
	echo "export RUNGS_MGMT_URL=${mgmts[0]}"
	echo "export RUNGS_CLUSTER_URLS='${urls[*]}'"
	echo "export RUNGS_CLUSTER_MGMT_URLS='${mgmts[*]}'"
}

case ${1:-up} in
up) cmd_up ;;
down) cmd_down ;;
clean)
	cmd_down
	rm -rf "$ROOT"
	;;
status) cmd_status ;;
env) cmd_env ;;
stop)
	[[ $# -eq 2 ]] || die "usage: $0 stop N"
	node "$2" down
	;;
kill)
	[[ $# -eq 2 ]] || die "usage: $0 kill N"
	cmd_kill "$2"
	;;
start)
	[[ $# -eq 2 ]] || die "usage: $0 start N"
	node "$2" up
	;;
ctl)
	[[ $# -ge 2 ]] || die "usage: $0 ctl N ARGS..."
	n=$2
	shift 2
	node "$n" ctl "$@"
	;;
*)
	echo "usage: $0 [up|down|clean|status|env|stop N|kill N|start N|ctl N ARGS...]" >&2
	exit 2
	;;
esac
