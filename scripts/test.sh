#!/usr/bin/env bash
# The whole test suite in one command: local broker, gofmt, go vet, go test.
# Extra arguments go to `go test`, e.g.  scripts/test.sh -run TestLadder -v
#
# Integration tests run against RUNGS_URL / RUNGS_MGMT_URL. If both are already
# set, that broker is used as is; otherwise scripts/broker.sh starts a local one
# (and leaves it running). RUNGS_REQUIRE_BROKER=1 makes the integration tests
# fail instead of skipping when the broker is unreachable.
#
# Then every fuzz target runs for RUNGS_FUZZTIME (default 10s) each; 0 skips.
# The fault and TLS tests start RabbitMQ nodes of their own with broker.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "broker"
if [[ -n ${RUNGS_URL:-} && -n ${RUNGS_MGMT_URL:-} ]]; then
	echo "using RUNGS_URL / RUNGS_MGMT_URL from the environment ($RUNGS_MGMT_URL)"
else
	bash scripts/broker.sh up
	eval "$(bash scripts/broker.sh env)"
fi
export RUNGS_URL RUNGS_MGMT_URL
export RUNGS_REQUIRE_BROKER=1

step "tools"
# The console's end-to-end tests drive the real binary in tmux; the TLS test
# makes its certificates with openssl.
for tool in tmux openssl; do
	command -v "$tool" >/dev/null && continue
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$tool"
	else
		echo "$tool is needed by the end-to-end tests: install it (apt-get install $tool)" >&2
		exit 1
	fi
done
echo "tmux: $(tmux -V); $(openssl version)"

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

step "go test -count=1 ./... $*"
go test -count=1 ./... "$@"

fuzztime=${RUNGS_FUZZTIME:-10s}
if [[ $fuzztime != 0 ]]; then
	# go test -fuzz takes one target of one package per run.
	while IFS=: read -r file fn; do
		target=${fn#func }
		step "fuzz $target ($(dirname "$file"), $fuzztime)"
		go test -run='^$' -fuzz="^$target\$" -fuzztime="$fuzztime" "$(dirname "$file")" </dev/null
	done < <(grep -r --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]*' . | sort)
fi

step "ok"
