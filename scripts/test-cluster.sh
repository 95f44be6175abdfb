#!/usr/bin/env bash
# The cluster suite: a three-node RabbitMQ cluster on loopback of the test's
# own (scripts/cluster.sh, started and stopped by the test), a quorum ladder
# on it, and a node lost while messages are in flight. It takes a few
# minutes, so it is not part of scripts/test.sh; CI runs both.
# Extra arguments go to `go test`, e.g.  scripts/test-cluster.sh -v
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "tools"
# The cluster is made of scripts/broker.sh nodes: make sure RabbitMQ is
# installed (this also brings up the local broker if none answers).
bash scripts/broker.sh up

step "go vet -tags cluster ./e2e"
go vet -tags cluster ./e2e

step "go test -tags cluster -run TestCluster ./e2e $*"
export RUNGS_REQUIRE_BROKER=1
go test -count=1 -timeout 15m -tags cluster -run '^TestCluster' ./e2e "$@"

step "ok"
