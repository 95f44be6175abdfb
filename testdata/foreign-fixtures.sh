#!/usr/bin/env bash
# Regenerates testdata/celery-definitions.json and testdata/nsb1-definitions.json.
#
# The objects are declared through the management API exactly as the
# public sources declare them, without any rungs code, then exported by the
# broker itself (GET /api/definitions/VHOST), so that the fixtures are what a
# real Celery or NServiceBus deployment leaves on a broker, not what rungs
# thinks it should look like:
#
#   Celery: kombu.transport.native_delayed_delivery (kombu >= 5.5):
#     declare_native_delayed_delivery_exchanges_and_queues and
#     bind_queue_to_native_delayed_delivery_exchange
#   NServiceBus v1: NServiceBus.Transport.RabbitMQ DelayInfrastructure.Build
#     (transport 4.3 to 6.x) and the routing topologies' BindToDelayInfrastructure
#     (conventional: the endpoint's exchange; direct: the queue); v2 (transport
#     7+) beside it, as NServiceBus leaves both during a migration.
#
# Usage: testdata/foreign-fixtures.sh [MGMT_URL]   (default http://127.0.0.1:15672, guest)
set -euo pipefail
MGMT=${1:-http://127.0.0.1:15672}
AUTH=${RUNGS_FIXTURE_AUTH:-guest:guest}
cd "$(dirname "$0")"

api() { # METHOD PATH [JSON]
	curl -fsS -u "$AUTH" -X "$1" -H 'content-type: application/json' "$MGMT/api/$2" ${3:+-d "$3"} >/dev/null
}
enc() { python3 -c 'import sys,urllib.parse;print(urllib.parse.quote(sys.argv[1],safe=""))' "$1"; }
exchange() { api PUT "exchanges/$V/$(enc "$1")" "{\"type\":\"$2\",\"durable\":true,\"auto_delete\":false,\"internal\":false,\"arguments\":{}}"; }
queue() { api PUT "queues/$V/$(enc "$1")" "{\"durable\":true,\"auto_delete\":false,\"arguments\":$2}"; }
bindq() { api POST "bindings/$V/e/$(enc "$1")/q/$(enc "$2")" "{\"routing_key\":\"$3\",\"arguments\":{}}"; }
binde() { api POST "bindings/$V/e/$(enc "$1")/e/$(enc "$2")" "{\"routing_key\":\"$3\",\"arguments\":{}}"; }

fresh() {
	V=$(enc "$1")
	api DELETE "vhosts/$V" 2>/dev/null || true
	api PUT "vhosts/$V" '{"description":"rungs fixture"}'
	api PUT "permissions/$V/${AUTH%%:*}" '{"configure":".*","write":".*","read":".*"}'
}
# export_to FILE: the broker's own export, sorted so that a regeneration diffs cleanly.
export_to() {
	curl -fsS -u "$AUTH" "$MGMT/api/definitions/$V" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in ("queues", "exchanges"):
    d[k].sort(key=lambda o: o["name"])
d["bindings"].sort(key=lambda b: (b["source"], b["destination_type"], b["destination"], b["routing_key"]))
json.dump(d, sys.stdout, indent=1, sort_keys=True)
print()' >"$1"
	api DELETE "vhosts/$V"
}

# celery_ladder PREFIX QUEUE_TYPE: kombu's declare_native_delayed_delivery_exchanges_and_queues.
celery_ladder() {
	local p=$1 qt=$2 key="1.#" level next args
	name() { if [ -n "$p" ]; then echo "${p}_celery_delayed_$1"; else echo "celery_delayed_$1"; fi; }
	local delivery=${p:+${p}_}celery_delayed_delivery
	for level in $(seq 27 -1 0); do
		exchange "$(name "$level")" topic
		if [ "$level" -gt 0 ]; then next=$(name $((level - 1))); else next=$delivery; fi
		args="{\"x-queue-type\":\"$qt\",\"x-overflow\":\"reject-publish\",\"x-message-ttl\":$(( (1 << level) * 1000 )),\"x-dead-letter-exchange\":\"$next\""
		[ "$qt" = quorum ] && args="$args,\"x-dead-letter-strategy\":\"at-least-once\""
		queue "$(name "$level")" "$args}"
		bindq "$(name "$level")" "$(name "$level")" "$key"
		key="*.$key"
	done
	key="0.#"
	for level in $(seq 27 -1 1); do
		binde "$(name "$level")" "$(name $((level - 1)))" "$key"
		key="*.$key"
	done
	exchange "$delivery" topic
	binde "$(name 0)" "$delivery" "$key"
}
# celery_worker_queue PREFIX NAME QUEUE_TYPE: a worker's Queue(NAME, Exchange(NAME, type=topic),
# routing_key=NAME) and bind_queue_to_native_delayed_delivery_exchange for it.
celery_worker_queue() {
	local delivery=${1:+${1}_}celery_delayed_delivery
	exchange "$2" topic
	queue "$2" "{\"x-queue-type\":\"$3\"}"
	bindq "$2" "$2" "$2"
	binde "$delivery" "$2" "#.$2"
	bindq "$2" "$2" "#.$2"
}

fresh rungs-fixture-celery
celery_ladder "" quorum
celery_worker_queue "" celery quorum
celery_worker_queue "" emails quorum
celery_ladder billing classic
celery_worker_queue billing invoices classic
export_to celery-definitions.json

# nsb_infra BASE ARGS_FOR_LEVEL: DelayInfrastructure.Build of one generation.
nsb_infra() {
	local base=$1 gen=$2 key="1.#" level next args
	lvl() { printf '%s.delay-level-%02d' "$base" "$1"; }
	for level in $(seq 27 -1 0); do
		exchange "$(lvl "$level")" topic
		if [ "$level" -gt 0 ]; then next=$(lvl $((level - 1))); else next=$base.delay-delivery; fi
		if [ "$gen" = v1 ]; then
			args="{\"x-queue-mode\":\"lazy\",\"x-message-ttl\":$(( (1 << level) * 1000 )),\"x-dead-letter-exchange\":\"$next\"}"
		else
			args="{\"x-queue-type\":\"quorum\",\"x-dead-letter-strategy\":\"at-least-once\",\"x-overflow\":\"reject-publish\",\"x-message-ttl\":$(( (1 << level) * 1000 )),\"x-dead-letter-exchange\":\"$next\"}"
		fi
		queue "$(lvl "$level")" "$args"
		bindq "$(lvl "$level")" "$(lvl "$level")" "$key"
		key="*.$key"
	done
	key="0.#"
	for level in $(seq 27 -1 1); do
		binde "$(lvl "$level")" "$(lvl $((level - 1)))" "$key"
		key="*.$key"
	done
	exchange "$base.delay-delivery" topic
	binde "$(lvl 0)" "$base.delay-delivery" "$key"
}

fresh rungs-fixture-nsb1
nsb_infra nsb v1
nsb_infra nsb.v2 v2
# Sales: conventional routing topology (the default): queue, fanout exchange of the same name,
# the exchange bound to the delivery exchange. Billing: direct routing topology, the queue bound.
queue Sales '{}'
exchange Sales fanout
bindq Sales Sales ""
binde nsb.delay-delivery Sales "#.Sales"
binde nsb.v2.delay-delivery Sales "#.Sales"
queue Billing '{}'
bindq nsb.delay-delivery Billing "#.Billing"
export_to nsb1-definitions.json
