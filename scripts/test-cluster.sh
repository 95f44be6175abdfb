#!/usr/bin/env bash
# The cluster suite: a three-node RabbitMQ cluster on loopback of the test's
# own (scripts/cluster.sh, started and stopped by the test), a quorum ladder
# on it, and a node lost while messages are in flight. It takes a few
# minutes, so it is not part of scripts/test.sh; CI runs both.
# Extra arguments go to `go test`, e.g.  scripts/test-cluster.sh -v
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "go vet -tags cluster ./e2e"
go vet -tags cluster ./e2e

# One cluster per RabbitMQ version, as scripts/test.sh runs the suite.
export RUNGS_REQUIRE_BROKER=1
read -r -a versions <<<"${RUNGS_RABBITMQ_VERSIONS:-3.10 4.0 4.3}"
for v in "${versions[@]}"; do
	step "RabbitMQ $v: go test -tags cluster -run TestCluster ./e2e $*"
	# The cluster is made of scripts/broker.sh nodes: make sure this version
	# is installed (this also brings up its local broker if none answers).
	RUNGS_RABBITMQ=$v bash scripts/broker.sh up
	# Three clusters one after another, each booted and stopped by its
	# test: 15m leaves room for a slow machine (e2e/cluster_test.go says
	# why they do not run side by side).
	RUNGS_RABBITMQ=$v go test -count=1 -timeout 15m -tags cluster -run '^TestCluster' ./e2e "$@"
done

step "ok"
