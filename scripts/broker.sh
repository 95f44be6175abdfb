#!/usr/bin/env bash
# Local RabbitMQ for rungs development and tests.
#
#   scripts/broker.sh [up]     start a loopback-only broker of its own (idempotent)
#   scripts/broker.sh down     stop the node this script started
#   scripts/broker.sh restart  down + up, keeping data (durable queues survive)
#   scripts/broker.sh status   say whether a broker answers (exit 1 if not)
#   scripts/broker.sh env      print RUNGS_URL / RUNGS_MGMT_URL export lines
#   scripts/broker.sh ctl ...  run rabbitmqctl against the node, e.g. `ctl list_queues`
#   RUNGS_RABBITMQ=4.0 scripts/broker.sh python DIR FILE ARGS...
#                              run FILE with the trixie root's python3 and
#                              Celery 5.5 (python3-celery, installed into the
#                              root once), DIR bind-mounted at its own path:
#                              tests run a real Celery worker and producer
#
# The node runs as the invoking user straight from the package's
# /usr/lib/rabbitmq/bin (not the Debian /usr/sbin wrappers, which su to the
# `rabbitmq` user), with HOME set to the state dir so that the server and
# rabbitmqctl share the Erlang cookie in $RUNGS_BROKER_DIR/.erlang.cookie.
#
# The script only ever uses, stops or restarts a node it started itself:
# one whose pid file in the state dir names a live node and whose management
# API answers with this node's name. A broker it did not start (a user's own
# RabbitMQ, a container) is left alone, even on the script's ports; that is
# also why its default ports are not RabbitMQ's 5672 and 15672. To test
# against such a broker on purpose, set RUNGS_URL and RUNGS_MGMT_URL for
# scripts/test.sh instead.
#
# Parameters (environment), so several nodes can live side by side:
#   RUNGS_BROKER_DIR    state dir          (default /var/tmp/rungs-test-3.10)
#   RUNGS_NODENAME      Erlang node name   (default rungs310@localhost)
#   RUNGS_AMQP_PORT     AMQP port          (default 5710)
#   RUNGS_MGMT_PORT     management port    (default 15710)
#   RUNGS_DIST_PORT     Erlang dist port   (default AMQP port + 20000)
#   RUNGS_ERLANG_COOKIE cookie for a new state dir (default: Debian's
#                       /var/lib/rabbitmq/.erlang.cookie if readable, else random)
#   RUNGS_BROKER_TIMEOUT  start-up timeout in seconds (default 120)
#   RUNGS_DLX_PREFETCH  the quorum dead-letter worker's prefetch
#                       (rabbit's dead_letter_worker_consumer_prefetch, set
#                       only in advanced.config; RabbitMQ's default is 32):
#                       how many messages each quorum rung's worker holds
#                       unconfirmed. Unset: no advanced.config is written
#                       (one this script wrote before is removed)
#   RUNGS_RECEIPT_TIMESTAMPS  1: turn on the broker's timestamp interceptor
#                       (message_interceptors.incoming.set_header_timestamp,
#                       RabbitMQ 3.12 and later, so 4.0 and 4.3 here): every
#                       message gets timestamp_in_ms, what rungs bridge
#                       --from-receipt counts delays from. Unset: off
#   RUNGS_MIN_OPEN_FILES  open files the node must be allowed (default 10000;
#                       the suite's parallel connections failed at 1024)
#   RABBITMQ_BIN_DIR    where rabbitmq-server/rabbitmqctl live
#   RUNGS_RABBITMQ      which RabbitMQ: 3.10 (default: this machine's
#                       Debian bookworm package), 4.0 (Debian trixie's
#                       4.0.5 with Erlang 27) or 4.3 (Debian forky's 4.3.x
#                       with Erlang 29), the last two run from a Debian root
#   RUNGS_TRIXIE_ROOT   where the trixie root lives (default /var/tmp/rungs-trixie)
#   RUNGS_FORKY_ROOT    where the forky root lives  (default /var/tmp/rungs-forky)
#   RUNGS_DEBIAN_MIRROR Debian mirror for those roots (default: this machine's apt source)
#
# RabbitMQ 4.x needs a newer Erlang than bookworm has. So for 4.0 and 4.3
# the script builds (once, cached; ~40 s for trixie, ~2 min for forky) a
# minimal Debian root with debootstrap holding that release's
# rabbitmq-server, and runs the node chrooted into it, inside a private
# mount namespace that bind-mounts the state dir at the same path, so paths,
# pid file and logs read the same from outside. Their defaults differ so
# that all versions can run side by side:
#   4.0: AMQP 5700, management 15700, node rabbit4@localhost,  state /var/tmp/rungs-broker-4.0
#   4.3: AMQP 5800, management 15800, node rabbit43@localhost, state /var/tmp/rungs-broker-4.3
#
# TLS (opt-in; without RUNGS_TLS_CERT_DIR nothing changes). The plain
# listeners stay, so that this script can still probe the node:
#   RUNGS_TLS_CERT_DIR  dir with ca.pem, server.pem, server-key.pem (PEM);
#                       adds an AMQPS and an HTTPS management listener
#   RUNGS_AMQPS_PORT    AMQPS port         (default AMQP port + 1)
#   RUNGS_MGMT_TLS_PORT HTTPS management   (default management port + 1)
#   RUNGS_TLS_VERIFY    verify_peer (default) or verify_none
#   RUNGS_TLS_FAIL_IF_NO_PEER_CERT  true (default: mutual TLS) or false
set -euo pipefail

HOST=127.0.0.1
VERSION=${RUNGS_RABBITMQ:-3.10}
# The Debian root a 4.x node runs in (empty: this machine's own packages).
ROOT=
SUITE=
case $VERSION in
3.10 | 3 | system)
	VERSION=3.10
	STATE_DIR=${RUNGS_BROKER_DIR:-/var/tmp/rungs-test-3.10}
	NODE=${RUNGS_NODENAME:-rungs310@localhost}
	AMQP_PORT=${RUNGS_AMQP_PORT:-5710}
	MGMT_PORT=${RUNGS_MGMT_PORT:-15710}
	;;
4.0 | 4)
	VERSION=4.0
	STATE_DIR=${RUNGS_BROKER_DIR:-/var/tmp/rungs-broker-4.0}
	NODE=${RUNGS_NODENAME:-rabbit4@localhost}
	AMQP_PORT=${RUNGS_AMQP_PORT:-5700}
	MGMT_PORT=${RUNGS_MGMT_PORT:-15700}
	ROOT=${RUNGS_TRIXIE_ROOT:-/var/tmp/rungs-trixie}
	SUITE=trixie
	;;
4.3)
	STATE_DIR=${RUNGS_BROKER_DIR:-/var/tmp/rungs-broker-4.3}
	NODE=${RUNGS_NODENAME:-rabbit43@localhost}
	AMQP_PORT=${RUNGS_AMQP_PORT:-5800}
	MGMT_PORT=${RUNGS_MGMT_PORT:-15800}
	ROOT=${RUNGS_FORKY_ROOT:-/var/tmp/rungs-forky}
	SUITE=forky
	;;
*)
	printf 'broker: ERROR: RUNGS_RABBITMQ must be 3.10, 4.0 or 4.3, not %s\n' "$VERSION" >&2
	exit 2
	;;
esac
DIST_PORT=${RUNGS_DIST_PORT:-$((AMQP_PORT + 20000))}
TIMEOUT=${RUNGS_BROKER_TIMEOUT:-120}
MIN_OPEN_FILES=${RUNGS_MIN_OPEN_FILES:-10000}
AUTH=$(printf '%s' 'guest:guest' | base64)
TLS_DIR=${RUNGS_TLS_CERT_DIR:-}
AMQPS_PORT=${RUNGS_AMQPS_PORT:-$((AMQP_PORT + 1))}
MGMT_TLS_PORT=${RUNGS_MGMT_TLS_PORT:-$((MGMT_PORT + 1))}
TLS_VERIFY=${RUNGS_TLS_VERIFY:-verify_peer}
TLS_FAIL_NO_CERT=${RUNGS_TLS_FAIL_IF_NO_PEER_CERT:-true}

# Absolute, because a 4.x node sees it through a bind mount at the same path.
STATE_DIR=$(realpath -m "$STATE_DIR")
MNESIA_BASE=$STATE_DIR/mnesia
LOG_DIR=$STATE_DIR/log
LOG_FILE=$LOG_DIR/$NODE.log
STARTUP_LOG=$LOG_DIR/startup.log
PID_FILE=$STATE_DIR/$NODE.pid

log() { printf 'broker: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# --- probes (bash /dev/tcp only: no curl/python dependency) -----------------

# shellcheck disable=SC2016 # $0.. are expanded by the inner bash
port_open() { # port
	timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$HOST" "$1" 2>/dev/null
}

# Prints the HTTP status code of GET http://$HOST:$MGMT_PORT$1 (empty on failure).
# shellcheck disable=SC2016 # $0.. are expanded by the inner bash
http_code() { # path
	timeout 5 bash -c '
		exec 3<>"/dev/tcp/$0/$1" || exit 1
		printf "GET %s HTTP/1.0\r\nHost: %s:%s\r\nAuthorization: Basic %s\r\nConnection: close\r\n\r\n" \
			"$2" "$0" "$1" "$3" >&3
		read -r _ code _ <&3 && printf "%s" "${code//[!0-9]/}"
	' "$HOST" "$MGMT_PORT" "$1" "$AUTH" 2>/dev/null || true
}

answers() {
	[[ $(http_code /api/overview) == 200 ]] && port_open "$AMQP_PORT"
}

# Prints the body of GET http://$HOST:$MGMT_PORT$1 (empty on failure).
# shellcheck disable=SC2016 # $0.. are expanded by the inner bash
http_body() { # path
	timeout 5 bash -c '
		exec 3<>"/dev/tcp/$0/$1" || exit 1
		printf "GET %s HTTP/1.0\r\nHost: %s:%s\r\nAuthorization: Basic %s\r\nConnection: close\r\n\r\n" \
			"$2" "$0" "$1" "$3" >&3
		while IFS= read -r line <&3 && [[ $line != $'"'"'\r'"'"' && -n $line ]]; do :; done
		cat <&3
	' "$HOST" "$MGMT_PORT" "$1" "$AUTH" 2>/dev/null || true
}

# Whether the broker on our ports is the node this script started from this
# state dir: the pid file names a live node, and the management API answers
# with our node's name. A broker that only happens to listen there is not.
ours() {
	node_pid >/dev/null || return 1
	[[ $(http_body /api/overview) == *"\"node\":\"$NODE\""* ]]
}

# Refuses a broker this script did not start, on the ports it would use.
not_ours() {
	die "a broker answers on amqp://$HOST:$AMQP_PORT and http://$HOST:$MGMT_PORT that this script did not start
       (no live node $NODE from $STATE_DIR); it is left alone. Free those ports, or use others
       (RUNGS_AMQP_PORT, RUNGS_MGMT_PORT), or to test against that broker on purpose set
       RUNGS_URL and RUNGS_MGMT_URL for scripts/test.sh."
}

# --- the node -------------------------------------------------------------

find_bin_dir() {
	local d
	if [[ -n $ROOT ]]; then
		# Paths inside the Debian root, where the node runs chrooted.
		d=/usr/lib/rabbitmq/bin
		[[ -f $ROOT/.rungs-ready && -x $ROOT$d/rabbitmq-server ]] && { echo "$d"; return 0; }
		return 1
	fi
	for d in "${RABBITMQ_BIN_DIR:-}" /usr/lib/rabbitmq/bin; do
		[[ -n $d && -x $d/rabbitmq-server && -x $d/rabbitmqctl ]] && { echo "$d"; return 0; }
	done
	# Generic-unix tarball or other installs on PATH (not the Debian su wrappers).
	d=$(command -v rabbitmq-server 2>/dev/null) || return 1
	d=$(dirname "$(readlink -f "$d")")
	[[ -x $d/rabbitmqctl ]] && { echo "$d"; return 0; }
	return 1
}

# Runs a RabbitMQ tool (rabbitmq-server, rabbitmqctl, ...) with this node's environment.
rmq() { # tool args...
	local tool=$1
	shift
	(
		export HOME=$STATE_DIR
		export RABBITMQ_NODENAME=$NODE
		export RABBITMQ_CONF_ENV_FILE=$STATE_DIR/rabbitmq-env.conf
		export RABBITMQ_CONFIG_FILE=$STATE_DIR/rabbitmq.conf
		export RABBITMQ_ADVANCED_CONFIG_FILE=$STATE_DIR/advanced.config
		export RABBITMQ_ENABLED_PLUGINS_FILE=$STATE_DIR/enabled_plugins
		export RABBITMQ_MNESIA_BASE=$MNESIA_BASE
		export RABBITMQ_LOG_BASE=$LOG_DIR
		export RABBITMQ_LOGS=$LOG_FILE
		export RABBITMQ_PID_FILE=$PID_FILE
		export RABBITMQ_DIST_PORT=$DIST_PORT
		export RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
		export ERL_EPMD_ADDRESS=$HOST
		export ERL_CRASH_DUMP=$LOG_DIR/erl_crash.dump
		if [[ -n $ROOT ]]; then
			in_root "$BIN_DIR/$tool" "$@"
		fi
		exec "$BIN_DIR/$tool" "$@"
	)
}

# Runs a command chrooted into the Debian root, in a private mount namespace
# in which the state dir is bind-mounted at its own path and /proc is
# mounted. The mounts live and die with the namespace: nothing is left
# mounted on the host when the node or rabbitmqctl exits.
# shellcheck disable=SC2016 # $0.. are expanded by the inner bash
in_root() { # command args...
	export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8
	exec unshare --mount --propagation private -- "$BASH" -c '
		root=$0 state=$1
		shift
		mkdir -p "$root$state" &&
			mount --bind "$state" "$root$state" &&
			mount -t proc proc "$root/proc" || exit 1
		exec chroot "$root" "$@"
	' "$ROOT" "$STATE_DIR" "$@"
}

# Prints the Debian mirror this machine's apt uses, if it names one, so
# that the Debian root comes from the same place; debootstrap's own
# default otherwise.
apt_mirror() {
	local f line
	for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
		[[ -r $f ]] || continue
		while read -r line; do
			case $line in
			URIs:*/debian | URIs:*/debian/) echo "${line#URIs: }"; return 0 ;;
			"deb "*/debian\ *) line=${line#deb }; line=${line#\[*\] }; echo "${line%% *}"; return 0 ;;
			esac
		done <"$f"
	done
}

# Builds the Debian root for a RabbitMQ 4.x once: debootstrap into a
# temporary dir, then rename, so that an interrupted build is never taken
# for a finished one.
install_root() {
	[[ $(id -u) == 0 ]] || die "RabbitMQ $VERSION runs from a Debian $SUITE root built as root (debootstrap, chroot); run as root or point RUNGS_URL/RUNGS_MGMT_URL at a $VERSION broker"
	mkdir -p "$(dirname "$ROOT")"
	exec 8>"$ROOT.lock"
	flock -w 600 8 || die "could not lock $ROOT.lock"
	if [[ -f $ROOT/.rungs-ready ]]; then
		exec 8>&-
		return 0
	fi
	if ! command -v debootstrap >/dev/null; then
		log "installing debootstrap with apt-get"
		{ apt-get -o DPkg::Lock::Timeout=300 update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends debootstrap; } ||
			die "apt-get install debootstrap failed"
	fi
	local tmp=$ROOT.tmp mirror t0=$SECONDS script=
	mirror=${RUNGS_DEBIAN_MIRROR:-$(apt_mirror)} || true
	# bookworm's debootstrap has no script for forky; sid's is the same
	# (debootstrap takes the script as an optional fourth argument).
	if [[ ! -e /usr/share/debootstrap/scripts/$SUITE ]]; then
		script=/usr/share/debootstrap/scripts/sid
		[[ -e $script ]] || die "debootstrap has no script for $SUITE nor sid"
		# A script argument needs the mirror argument before it.
		[[ -n $mirror ]] || die "no Debian mirror found in this machine's apt sources; set RUNGS_DEBIAN_MIRROR"
	fi
	rm -rf "$tmp"
	log "building a Debian $SUITE root with rabbitmq-server in $ROOT (once; a minute or two)"
	# policy-rc.d inside the root keeps the package's service from starting.
	if ! debootstrap --variant=minbase --include=rabbitmq-server "$SUITE" "$tmp" ${mirror:+"$mirror"} ${script:+"$script"} >"$ROOT.build.log" 2>&1; then
		tail -n 30 "$ROOT.build.log" >&2
		rm -rf "$tmp"
		die "debootstrap of Debian $SUITE failed (log: $ROOT.build.log)"
	fi
	[[ -x $tmp/usr/lib/rabbitmq/bin/rabbitmq-server ]] || die "the $SUITE root has no rabbitmq-server"
	# A minimal forky root has no /etc/hosts, and without one the node cannot
	# resolve localhost ("epmd error for host localhost: nxdomain").
	[[ -s $tmp/etc/hosts ]] || printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$tmp/etc/hosts"
	# The package's own node (if its postinst started one) must not hold our ports.
	pkill -f "$tmp/" 2>/dev/null || true
	rm -rf "$ROOT"
	mv "$tmp" "$ROOT"
	touch "$ROOT/.rungs-ready"
	log "$SUITE root ready in $((SECONDS - t0))s: $(ls "$ROOT/usr/lib/rabbitmq/lib")"
	exec 8>&-
}

ctl() { rmq rabbitmqctl -n "$NODE" "$@"; }

# Installs Debian's python3-celery (trixie: Celery 5.5, kombu 5.5, with
# RabbitMQ native delayed delivery) into the root once.
install_celery() {
	[[ -f $ROOT/.rungs-celery ]] && return 0
	exec 8>"$ROOT.lock"
	flock -w 600 8 || die "could not lock $ROOT.lock"
	if [[ ! -f $ROOT/.rungs-celery ]]; then
		log "installing python3-celery into $ROOT (once)"
		[[ -s $ROOT/etc/resolv.conf ]] || cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
		printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
		chmod +x "$ROOT/usr/sbin/policy-rc.d"
		if ! (STATE_DIR=/tmp in_root env DEBIAN_FRONTEND=noninteractive sh -c \
			'apt-get -o DPkg::Lock::Timeout=300 update -qq && apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends python3-celery' \
			>"$ROOT.celery.log" 2>&1); then
			tail -n 30 "$ROOT.celery.log" >&2
			die "apt-get install python3-celery in $ROOT failed (log: $ROOT.celery.log)"
		fi
		touch "$ROOT/.rungs-celery"
	fi
	exec 8>&-
}

# Prints the pid of our running node, or fails.
node_pid() {
	local pid
	[[ -s $PID_FILE ]] || return 1
	pid=$(<"$PID_FILE")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	grep -qa beam "/proc/$pid/cmdline" 2>/dev/null || return 1
	echo "$pid"
}

write_config() {
	mkdir -p "$MNESIA_BASE" "$LOG_DIR"
	cat >"$STATE_DIR/rabbitmq.conf" <<-EOF
		# Generated by scripts/broker.sh; rewritten on every start.
		listeners.tcp.1 = $HOST:$AMQP_PORT
		management.tcp.ip = $HOST
		management.tcp.port = $MGMT_PORT
		# guest may only connect from loopback (the default, stated for clarity).
		loopback_users.guest = true
		log.console = false
		log.file.level = info
		# collect_statistics_interval stays at the 5000 ms default.
	EOF
	[[ -z $TLS_DIR ]] || write_tls_config
	if [[ ${RUNGS_RECEIPT_TIMESTAMPS:-} == 1 ]]; then
		[[ $VERSION != 3.10 ]] || die "RUNGS_RECEIPT_TIMESTAMPS: RabbitMQ 3.10 has no timestamp interceptor (3.12 added it)"
		cat >>"$STATE_DIR/rabbitmq.conf" <<-EOF
			# RUNGS_RECEIPT_TIMESTAMPS=1: the broker stamps each message's receipt time.
			message_interceptors.incoming.set_header_timestamp.overwrite = true
		EOF
	fi
	write_advanced_config
	echo '[rabbitmq_management].' >"$STATE_DIR/enabled_plugins"
	echo '# Intentionally empty: keeps /etc/rabbitmq/rabbitmq-env.conf out.' >"$STATE_DIR/rabbitmq-env.conf"
	if [[ ! -s $STATE_DIR/.erlang.cookie ]]; then
		local cookie=${RUNGS_ERLANG_COOKIE:-}
		if [[ -z $cookie && -r /var/lib/rabbitmq/.erlang.cookie ]]; then
			# Same cookie as the Debian package, so /usr/sbin/rabbitmqctl -n $NODE works too.
			cookie=$(</var/lib/rabbitmq/.erlang.cookie)
		fi
		if [[ -z $cookie ]]; then
			cookie=$(head -c 256 /dev/urandom | base64 | LC_ALL=C tr -dc '[:upper:]')
			cookie=${cookie:0:20}
		fi
		(umask 077 && printf '%s' "$cookie" >"$STATE_DIR/.erlang.cookie")
	fi
	chmod 400 "$STATE_DIR/.erlang.cookie"
}

# Writes advanced.config for the settings rabbitmq.conf cannot carry
# (RUNGS_DLX_PREFETCH). A file this script did not write is left alone.
ADVANCED_MARK='%% Generated by scripts/broker.sh'
write_advanced_config() {
	local f=$STATE_DIR/advanced.config prefetch=${RUNGS_DLX_PREFETCH:-}
	if [[ -z $prefetch ]]; then
		if [[ -f $f ]] && grep -qF "$ADVANCED_MARK" "$f"; then
			rm -f "$f"
		fi
		return 0
	fi
	[[ $prefetch =~ ^[1-9][0-9]*$ ]] || die "RUNGS_DLX_PREFETCH must be a positive whole number, not $prefetch"
	if [[ -f $f ]] && ! grep -qF "$ADVANCED_MARK" "$f"; then
		die "$f was not written by this script; not replacing it (unset RUNGS_DLX_PREFETCH or remove it)"
	fi
	cat >"$f" <<-EOF
		$ADVANCED_MARK; rewritten on every start.
		[{rabbit, [{dead_letter_worker_consumer_prefetch, $prefetch}]}].
	EOF
}

# Appends AMQPS and HTTPS management listeners (RUNGS_TLS_CERT_DIR).
write_tls_config() {
	local dir f
	dir=$(readlink -f "$TLS_DIR") || die "RUNGS_TLS_CERT_DIR $TLS_DIR does not exist"
	for f in ca.pem server.pem server-key.pem; do
		[[ -r $dir/$f ]] || die "RUNGS_TLS_CERT_DIR $dir has no readable $f"
	done
	[[ $TLS_VERIFY == verify_peer || $TLS_VERIFY == verify_none ]] ||
		die "RUNGS_TLS_VERIFY must be verify_peer or verify_none, not $TLS_VERIFY"
	[[ $TLS_FAIL_NO_CERT == true || $TLS_FAIL_NO_CERT == false ]] ||
		die "RUNGS_TLS_FAIL_IF_NO_PEER_CERT must be true or false, not $TLS_FAIL_NO_CERT"
	if [[ -n $ROOT ]]; then
		# A chrooted node sees only its root and the state dir.
		mkdir -p "$STATE_DIR/tls"
		cp "$dir/ca.pem" "$dir/server.pem" "$dir/server-key.pem" "$STATE_DIR/tls/"
		dir=$STATE_DIR/tls
	fi
	cat >>"$STATE_DIR/rabbitmq.conf" <<-EOF
		# TLS (RUNGS_TLS_CERT_DIR=$dir)
		listeners.ssl.1 = $HOST:$AMQPS_PORT
		ssl_options.cacertfile = $dir/ca.pem
		ssl_options.certfile = $dir/server.pem
		ssl_options.keyfile = $dir/server-key.pem
		ssl_options.verify = $TLS_VERIFY
		ssl_options.fail_if_no_peer_cert = $TLS_FAIL_NO_CERT
		management.ssl.ip = $HOST
		management.ssl.port = $MGMT_TLS_PORT
		management.ssl.cacertfile = $dir/ca.pem
		management.ssl.certfile = $dir/server.pem
		management.ssl.keyfile = $dir/server-key.pem
		management.ssl.verify = $TLS_VERIFY
		management.ssl.fail_if_no_peer_cert = $TLS_FAIL_NO_CERT
	EOF
}

install_broker() {
	if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
		cat >&2 <<-EOF
			broker: ERROR: no broker answers on $HOST:$AMQP_PORT / $HOST:$MGMT_PORT and RabbitMQ is not installed.
			Do one of:
			  * sudo apt-get install --no-install-recommends rabbitmq-server   (then re-run this script)
			  * docker run -d -p $AMQP_PORT:5672 -p $MGMT_PORT:15672 rabbitmq:3-management
			  * point the tests at an existing broker:
			      export RUNGS_URL=amqp://guest:guest@HOST:5672/ RUNGS_MGMT_URL=http://HOST:15672
		EOF
		exit 1
	fi
	log "rabbitmq-server not installed; installing it with apt-get"
	# Keep the package's own service (rabbit@$(hostname), all interfaces, port 5672)
	# from starting: it would take our ports. Only add a policy if none exists.
	local policy=/usr/sbin/policy-rc.d added_policy=
	if [[ ! -e $policy ]]; then
		trap 'rm -f "$policy"' EXIT
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod +x "$policy"
		added_policy=1
	fi
	local rc=0
	{ apt-get -o DPkg::Lock::Timeout=300 update &&
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends rabbitmq-server; } || rc=$?
	if [[ -n $added_policy ]]; then
		rm -f "$policy"
		trap - EXIT
	fi
	((rc == 0)) || die "apt-get install rabbitmq-server failed (exit $rc)"
}

# Kills the process group of a launcher started with setsid (it leads its own session).
kill_launcher() { # launcher_pid
	local stat i
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	stat=${stat##*) } # fields after "(comm) ": state ppid pgrp session ...
	read -r _ _ _ sid _ <<<"$stat"
	[[ $sid == "$1" ]] || return 0 # not a session leader: do not guess
	kill -TERM -- "-$1" 2>/dev/null || return 0
	for ((i = 0; i < 20; i++)); do
		kill -0 -- "-$1" 2>/dev/null || return 0
		sleep 0.5
	done
	kill -KILL -- "-$1" 2>/dev/null || true
}

fail_start() { # message log_lines_before launcher_pid
	log "ERROR: $1"
	if [[ -s $LOG_FILE ]]; then
		log "---- $LOG_FILE (last 40 lines of this start) ----"
		tail -n "+$(($2 + 1))" "$LOG_FILE" | tail -n 40 >&2
	fi
	if [[ -s $STARTUP_LOG ]]; then
		log "---- $STARTUP_LOG (last 40 lines) ----"
		tail -n 40 "$STARTUP_LOG" >&2
	fi
	# Do not leave a half-started node behind; the logs above tell why it failed.
	kill_launcher "$3"
	rm -f "$PID_FILE"
	exit 1
}

# Waits until the node is booted, the management API says 200 and AMQP accepts TCP.
# With a launcher pid, fails as soon as the launched server process has exited.
wait_ready() { # start_epoch [launcher_pid]
	local deadline=$(($1 + TIMEOUT)) launcher=${2:-}
	until answers; do
		if [[ -n $launcher ]]; then
			kill -0 "$launcher" 2>/dev/null || { log "the server process exited"; return 1; }
		else
			node_pid >/dev/null || return 1
		fi
		((SECONDS < deadline)) || { log "timed out after ${TIMEOUT}s"; return 1; }
		sleep 0.5
	done
	ctl await_startup --timeout "$TIMEOUT" >/dev/null
}

start_node() {
	local t0=$SECONDS pid launcher log_lines=0
	if port_open "$AMQP_PORT" || port_open "$MGMT_PORT" ||
		{ [[ -n $TLS_DIR ]] && { port_open "$AMQPS_PORT" || port_open "$MGMT_TLS_PORT"; }; }; then
		die "port $AMQP_PORT or $MGMT_PORT${TLS_DIR:+ (or TLS $AMQPS_PORT, $MGMT_TLS_PORT)} on $HOST is taken by something this script did not start;
       it is left alone. Use other ports: RUNGS_AMQP_PORT, RUNGS_MGMT_PORT (and RUNGS_DIST_PORT)."
	fi
	write_config
	rm -f "$PID_FILE"
	[[ -f $LOG_FILE ]] && log_lines=$(wc -l <"$LOG_FILE")
	: >"$STARTUP_LOG"
	log "starting $NODE (AMQP $HOST:$AMQP_PORT, management $HOST:$MGMT_PORT${TLS_DIR:+, AMQPS $HOST:$AMQPS_PORT, HTTPS management $HOST:$MGMT_TLS_PORT}, state $STATE_DIR${RUNGS_DLX_PREFETCH:+, dead-letter worker prefetch $RUNGS_DLX_PREFETCH})"
	# setsid: own session, so the node outlives this script and its caller's
	# process group; -w keeps $! alive as long as the server runs.
	# 9>&- : the server must not inherit our lock.
	setsid -w "$BASH" "$SELF" rmq_start </dev/null >>"$STARTUP_LOG" 2>&1 9>&- &
	launcher=$!
	wait_ready "$t0" "$launcher" || fail_start "$NODE did not become ready (log: $LOG_FILE)" "$log_lines" "$launcher"
	pid=$(node_pid) || true
	# Fresh nodes enable every stable flag, but upgraded data dirs may not have;
	# quorum-queue at-least-once dead-lettering and message TTL need them.
	ctl enable_feature_flag all >/dev/null
	log "ready in $((SECONDS - t0))s (pid ${pid:-?}, log $LOG_FILE)"
}

stop_node() { # [grace seconds for a clean stop, then SIGTERM, then SIGKILL]
	local grace=${1:-60} pid
	if ! pid=$(node_pid); then
		rm -f "$PID_FILE"
		if answers; then
			die "a broker answers on $HOST:$AMQP_PORT but was not started by this script (state dir $STATE_DIR); not stopping it"
		fi
		log "$NODE is not running"
		return 0
	fi
	log "stopping $NODE (pid $pid)"
	# SIGTERM, not `rabbitmqctl stop`: the node handles it with the same
	# graceful init:stop (rabbit_prelaunch_sighandler leaves SIGTERM to
	# Erlang's kernel, which stops the node cleanly), but the shutdown
	# starts now. rabbitmqctl first boots a VM of its own, which took
	# 10 s and more on the two-core CI machine under load; a fault test
	# that stops the broker mid-run saw its paced 10 s replay finish
	# before the broker closed a connection.
	kill -TERM "$pid" 2>/dev/null || true
	local i
	for ((i = 0; i < grace * 4; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.25
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "$NODE did not stop within ${grace}s of SIGTERM; sending SIGKILL to $pid"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	local deadline=$((SECONDS + 30))
	while kill -0 "$pid" 2>/dev/null || port_open "$AMQP_PORT" || port_open "$MGMT_PORT"; do
		((SECONDS < deadline)) || die "ports $AMQP_PORT/$MGMT_PORT still open after stopping $NODE"
		sleep 0.5
	done
	rm -f "$PID_FILE"
	log "stopped"
}

cmd_up() {
	if answers; then
		ours || not_ours
		log "$NODE (started by this script) already answers on amqp://$HOST:$AMQP_PORT and http://$HOST:$MGMT_PORT"
		return 0
	fi
	if ! BIN_DIR=$(find_bin_dir); then
		if [[ -n $ROOT ]]; then
			install_root
		else
			install_broker
		fi
		BIN_DIR=$(find_bin_dir) || die "rabbitmq-server still not found after install"
	fi
	lock
	if answers; then
		ours || not_ours
		log "$NODE already answers"
		return 0
	fi
	local pid
	if pid=$(node_pid); then
		# Still booting, or half-dead: wait for it, otherwise kill it and start afresh.
		log "$NODE is running (pid $pid) but not answering yet; waiting"
		if wait_ready "$SECONDS" 2>/dev/null; then
			log "ready"
			return 0
		fi
		log "$NODE (pid $pid) is not healthy; restarting it"
		stop_node 10
	fi
	start_node
}

cmd_status() {
	local pid
	pid=$(node_pid) || pid=
	if answers; then
		if ! ours; then
			echo "foreign: a broker this script did not start answers on amqp://$HOST:$AMQP_PORT/ + http://$HOST:$MGMT_PORT/ (not $NODE from $STATE_DIR)"
			return 1
		fi
		echo "up: amqp://$HOST:$AMQP_PORT/ http://$HOST:$MGMT_PORT/ (RabbitMQ $VERSION, node $NODE, pid $pid, started by this script)"
		return 0
	fi
	echo "down: nothing answers on amqp://$HOST:$AMQP_PORT/ + http://$HOST:$MGMT_PORT/api/overview${pid:+ (but $NODE pid $pid is alive)}"
	return 1
}

cmd_env() {
	echo "export RUNGS_URL=amqp://guest:guest@$HOST:$AMQP_PORT/"
	echo "export RUNGS_MGMT_URL=http://$HOST:$MGMT_PORT"
}

# Serialises up/down/restart per state dir.
lock() {
	if ! mkdir -p "$STATE_DIR" 2>/dev/null || [[ ! -w $STATE_DIR ]]; then
		die "cannot write state dir $STATE_DIR as $(id -un); set RUNGS_BROKER_DIR"
	fi
	exec 9>"$STATE_DIR/.lock"
	flock -w "$((TIMEOUT + 60))" 9 || die "could not lock $STATE_DIR/.lock"
}

need_bin() { BIN_DIR=$(find_bin_dir) || die "RabbitMQ $VERSION is not installed (run: RUNGS_RABBITMQ=$VERSION $0 up)"; }

# Note: no `a && b` chains below; bash ignores `set -e` inside such functions.
BIN_DIR=
SELF=$(readlink -f "$0")
case ${1:-up} in
up) cmd_up ;;
down)
	need_bin
	lock
	stop_node
	;;
restart)
	need_bin
	lock
	stop_node
	start_node
	;;
status) cmd_status ;;
env) cmd_env ;;
ctl)
	shift
	need_bin
	ctl "$@"
	;;
python)
	shift
	[[ -n $ROOT ]] || die "python runs from a Debian root: RUNGS_RABBITMQ=4.0 (trixie) or 4.3"
	(($# >= 2)) || die "usage: $0 python DIR FILE ARGS..."
	[[ $(id -u) == 0 ]] || die "python runs chrooted into the Debian root: run as root"
	install_root
	install_celery
	dir=$(cd "$1" && pwd) || die "no directory $1"
	shift
	STATE_DIR=$dir in_root python3 "$@"
	;;
rmq_start) # internal: the detached server process (see start_node)
	need_bin
	cd "$STATE_DIR"
	# The suite's parallel connections need more open files than a shell's
	# usual 1024: raise the soft limit as far as the hard one allows.
	hard=$(ulimit -Hn)
	[[ $hard == unlimited ]] && hard=65536
	ulimit -Sn "$((hard < 65536 ? hard : 65536))" 2>/dev/null || true
	if (($(ulimit -Sn) < MIN_OPEN_FILES)); then
		log "ERROR: the node may open only $(ulimit -Sn) files (hard limit $(ulimit -Hn)); the tests need $MIN_OPEN_FILES (raise it: ulimit -Hn, or LimitNOFILE)"
		exit 1
	fi
	rmq rabbitmq-server
	;;
*)
	echo "usage: $0 [up|down|restart|status|env|ctl ARGS...|python DIR FILE ARGS...]" >&2
	exit 2
	;;
esac; exit # on this line: a launcher whose node outlived an edit of this file must not read on into the edited text
