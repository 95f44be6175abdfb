#!/usr/bin/env bash
# The whole test suite in one command: local brokers, gofmt, go vet, go test.
# Extra arguments go to `go test`, e.g.  scripts/test.sh -run TestLadder -v
#
# The broker-backed suite runs once per RabbitMQ version users run:
# RUNGS_RABBITMQ_VERSIONS (default "3.10 4.0 4.3"); scripts/broker.sh brings up
# each version's node (3.10 from this machine's Debian package, 4.0 and 4.3 from a
# Debian trixie or forky root) and leaves it running. Those are nodes the
# script starts itself, on ports of their own (3.10: 5710, 4.0: 5700, 4.3:
# 5800): a RabbitMQ of the machine's own on 5672 is never touched, and a
# broker the script did not start is refused, not used. Each pass exports
# RUNGS_RABBITMQ, RUNGS_URL and RUNGS_MGMT_URL, so the tests that start
# nodes of their own start the same version.
#
# To run the suite against a broker of your own on purpose, set RUNGS_URL
# and RUNGS_MGMT_URL: that one broker is used as is, in one pass. The
# script says what the tests create there and checks first that its nodes
# allow the open files the tests need (RUNGS_MIN_OPEN_FILES, default 10000:
# a node allowing 1,024 failed fifteen tests on connection timeouts).
# RUNGS_REQUIRE_BROKER=1 makes the integration tests fail instead of skipping
# when the broker is unreachable.
#
# Each `go test` run has RUNGS_TEST_TIMEOUT (default 15m) as its -timeout,
# instead of Go's 10m: e2e, the slowest package, took 312-430 s a pass on a
# quiet machine when its tests ran one after another; on RabbitMQ 4.0 on the
# two-core machine at load 20-30, 1051 s one after another and 367 s side by
# side, as they now run. A hang still fails with every goroutine's stack,
# well before a CI job's own limit.
#
# Then every fuzz target runs for RUNGS_FUZZTIME (default 20000x, an
# execution count; a duration such as 10s works too) each; 0 skips.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

export RUNGS_REQUIRE_BROKER=1
timeout=${RUNGS_TEST_TIMEOUT:-15m}

# GoReleaser, checked after the tests, is a Go module built from source: a
# first install compiles for about 4.5 min on the 2-core machine, and the
# CI machine is always a first. It starts now, in the background, so that it
# compiles while the brokers' Debian roots and the tools' packages download
# and unpack, which wait on the network and the disk rather than the CPU. It
# is waited for before the first test pass, which it would slow. v2.15.1 is
# the newest release whose go.mod this toolchain (go 1.26) builds and whose
# dependencies the module proxy serves (v2.16+ need go-msix, refused there).
goreleaser_version=v2.15.1
gobin=${RUNGS_TOOLS_DIR:-/var/tmp/rungs-tools}/bin
goreleaser_log=$(mktemp)
prewarm_log=$(mktemp)
# The install's exit status, written when it ends: the chain below goes on
# to the compiles, so the script cannot wait for the install by pid.
installed=$(mktemp -u)
need_install=false
"$gobin/goreleaser" --version 2>/dev/null | grep -q "GitVersion: *$goreleaser_version\$" || need_install=true

# The release snapshot cross-compiles rungs for six targets: 7 min of
# both cores with a cold build cache (8.3 min of a cold run's 87.6), 30 s
# warm. The same compiles, with GoReleaser's flags (-trimpath,
# CGO_ENABLED=0) so that the snapshot finds them in the build cache, run in
# the background at nice 19 from after GoReleaser's install: they take only
# the CPU the brokers' setup and the test passes leave idle (a test pass
# left ~54 % of the machine idle), so that no test waits on them. Several
# packages at once are compiled and not linked. The targets are
# .goreleaser.yaml's goos and goarch lists; a target missing here is only
# compiled later, by the snapshot itself.
targets() {
	local list
	list() { sed -n "s/^ *$1: *\[\(.*\)\]/\1/p" .goreleaser.yaml | head -1 | tr -d ' ' | tr ',' ' '; }
	for os in $(list goos); do
		for arch in $(list goarch); do
			echo "$os/$arch"
		done
	done
}
{
	rc=0
	if $need_install; then
		GOBIN=$gobin go install "github.com/goreleaser/goreleaser/v2@$goreleaser_version" >"$goreleaser_log" 2>&1 || rc=$?
	fi
	echo "$rc" >"$installed.tmp" && mv "$installed.tmp" "$installed"
	for t in $(targets); do
		export GOOS=${t%/*} GOARCH=${t#*/} CGO_ENABLED=0
		nice -n 19 go build -trimpath $(go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' .) || true
	done
} </dev/null >>"$prewarm_log" 2>&1 &
background=$!
background_started=$SECONDS
cleanup() {
	if [[ -n $background ]]; then
		pkill -P "$background" 2>/dev/null || true
		kill "$background" 2>/dev/null || true
	fi
	rm -f "$goreleaser_log" "$prewarm_log" "$installed" "$installed.tmp"
}
trap cleanup EXIT
goreleaser_installed() {
	local started=$SECONDS
	while [[ ! -e $installed ]] && jobs -rp | grep -qx "$background"; do sleep 1; done
	if [[ ! -e $installed || $(<"$installed") != 0 ]]; then
		echo "installing goreleaser $goreleaser_version failed:" >&2
		cat "$goreleaser_log" >&2
		exit 1
	fi
	if $need_install; then
		echo "goreleaser $goreleaser_version installed in the background (waited $((SECONDS - started)) s for it)"
	fi
}
versions=()
if [[ -n ${RUNGS_URL:-} && -n ${RUNGS_MGMT_URL:-} ]]; then
	step "broker"
	mgmt_shown=$(sed -E 's#//[^/@]*@#//#' <<<"$RUNGS_MGMT_URL")
	echo "using the broker RUNGS_URL and RUNGS_MGMT_URL name ($mgmt_shown), as asked."
	echo "The tests create vhosts named rungs-test-* there, with queues, exchanges, bindings"
	echo "and policies in them, and delete each vhost when its test ends; a killed run can"
	echo "leave some behind (list them with: rabbitmqctl list_vhosts | grep '^rungs-test-')."
	# The management user is the AMQP URL's, as rungs takes it, percent-decoded.
	userinfo=guest:guest
	rest=${RUNGS_URL#*://}
	if [[ $rest == *@* ]]; then
		userinfo=$(printf '%b' "$(sed 's/%\([0-9A-Fa-f][0-9A-Fa-f]\)/\\x\1/g' <<<"${rest%%@*}")")
	fi
	min_files=${RUNGS_MIN_OPEN_FILES:-10000}
	if ! nodes=$(curl -fsS --max-time 20 -u "$userinfo" "${RUNGS_MGMT_URL%/}/api/nodes" 2>&1); then
		echo "cannot read the broker's nodes to check their open-file limit: ${nodes//$userinfo/***}" >&2
		exit 1
	fi
	fds=$(grep -o '"fd_total":[0-9]*' <<<"$nodes" | cut -d: -f2 | sort -n | head -1)
	if [[ -z $fds ]]; then
		echo "warning: the broker does not report its nodes' open-file limit (fd_total); the tests need $min_files" >&2
	elif ((fds < min_files)); then
		echo "the broker's node allows $fds open files; the tests need $min_files (RUNGS_MIN_OPEN_FILES)." >&2
		echo "Raise its limit (LimitNOFILE=65536 in its systemd unit, ulimit -n, docker --ulimit nofile=65536:65536)," >&2
		echo "or unset RUNGS_URL and RUNGS_MGMT_URL to let this script start brokers of its own." >&2
		exit 1
	else
		echo "its nodes allow $fds open files (the tests need $min_files)"
	fi
	versions=(given)
else
	read -r -a versions <<<"${RUNGS_RABBITMQ_VERSIONS:-3.10 4.0 4.3}"
	for v in "${versions[@]}"; do
		step "broker: RabbitMQ $v"
		RUNGS_RABBITMQ=$v bash scripts/broker.sh up
	done
fi

step "tools"
# The console's end-to-end tests drive the real binary in tmux; the TLS test
# makes its certificates with openssl; the exporter's test scrapes it with a
# real Prometheus and checks the example alert rules with promtool (both in
# Debian's prometheus package); the delay inventory's tests publish through
# Symfony Messenger's own AMQP transport (Debian's PHP packages).
missing=()
for tool in tmux openssl prometheus; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
[[ -e /usr/share/php/Symfony/Component/Messenger/Bridge/Amqp/autoload.php ]] && command -v php >/dev/null ||
	missing+=(php-cli php-amqp php-symfony-amqp-messenger)
if ((${#missing[@]} > 0)); then
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		# No package may start a service of its own (the prometheus package
		# would serve on every interface): a policy-rc.d says no, if none exists.
		policy=
		if [[ ! -e /usr/sbin/policy-rc.d ]]; then
			printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
			chmod +x /usr/sbin/policy-rc.d
			policy=/usr/sbin/policy-rc.d
		fi
		rc=0
		{ apt-get -o DPkg::Lock::Timeout=300 update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}"; } || rc=$?
		[[ -z $policy ]] || rm -f "$policy"
		((rc == 0)) || exit "$rc"
	else
		echo "the tests need ${missing[*]}: install them (apt-get install ${missing[*]})" >&2
		exit 1
	fi
fi
echo "tmux: $(tmux -V); $(openssl version); $(prometheus --version 2>&1 | head -1); $(php --version | head -1)"

step "gofmt"
unformatted=$(find . -name '*.go' -not -path '*/testdata/*' -not -path './vendor/*' -not -path '*/.*/*' -print0 |
	xargs -0 -r gofmt -l)
if [[ -n $unformatted ]]; then
	echo "these files need gofmt -w:" >&2
	echo "$unformatted" >&2
	exit 1
fi

step "go vet ./..."
go vet ./...
goreleaser_installed

for v in "${versions[@]}"; do
	if [[ $v != given ]]; then
		eval "$(RUNGS_RABBITMQ=$v bash scripts/broker.sh env)"
		export RUNGS_RABBITMQ=$v RUNGS_URL RUNGS_MGMT_URL
	fi
	step "go test -count=1 ./... $* (RabbitMQ ${RUNGS_RABBITMQ:-at $RUNGS_MGMT_URL})"
	go test -count=1 -timeout "$timeout" ./... "$@"
	# The scale tests (10,000 other queues in a vhost, 100 vhosts of
	# ladders) load the broker enough to slow other tests' management
	# requests past their timeouts, so they run alone, one at a time.
	step "go test -tags scale ./broker ./model (RabbitMQ ${RUNGS_RABBITMQ:-at $RUNGS_MGMT_URL})"
	go test -count=1 -timeout "$timeout" -p 1 -tags scale -run 'BesideTenThousand|TwoHundredLadders' ./broker ./model "$@"
done

step "goreleaser check and snapshot (into dist/)"
# A compile error on some target is the snapshot's to report, with its
# own log, so the background compiles are only waited for.
started=$SECONDS
wait "$background" || true
background=
echo "the targets' background compiles: waited $((SECONDS - started)) s for them, $((started - background_started)) s into the run"
# GoReleaser was installed at the start, into a GOBIN kept between runs and
# re-installed only when the pinned version changes. The snapshot takes ~5
# min with a cold build cache, ~16 s when it is warm (six targets).
"$gobin/goreleaser" check
"$gobin/goreleaser" release --snapshot --clean --skip=publish >dist.log 2>&1 || { tail -40 dist.log >&2; exit 1; }
tail -1 dist.log
rm -f dist.log

# An execution count, not a duration: with a duration, go1.26's fuzz
# coordinator can report "context deadline exceeded" as a failure when the
# time runs out while a worker is busy (go.dev/issue/75804, fixed in Go
# 1.27; it failed FuzzDiscover in a CI run here). 20,000 runs take about
# 3-10 s per target on the 2-core machine.
fuzztime=${RUNGS_FUZZTIME:-20000x}
if [[ $fuzztime != 0 ]]; then
	# go test -fuzz takes one target of one package per run.
	while IFS=: read -r file fn; do
		target=${fn#func }
		step "fuzz $target ($(dirname "$file"), $fuzztime)"
		go test -run='^$' -fuzz="^$target\$" -fuzztime="$fuzztime" "$(dirname "$file")" </dev/null
	done < <(grep -r --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]*' . | sort)
fi

step "ok"
