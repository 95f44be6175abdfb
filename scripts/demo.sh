#!/usr/bin/env bash
# rungs' main job on a fresh machine, in one command: bring up a local
# RabbitMQ, build rungs, declare a demo ladder with a destination queue,
# put delayed messages in flight, start a demo worker that fails a share of
# its jobs and retries them through the ladder (parking them after four
# attempts), and open the console on it.
#
#   scripts/demo.sh              the console (needs a terminal)
#   scripts/demo.sh --no-console print the ladder's status instead
#
# The demo ladder is "demo" in vhost /: the defaults (direct layout, radix 16,
# quorum queues), a 1s unit, up to 1h; messages go to the default done queue
# (demo.done) or to demo.work.
set -euo pipefail
cd "$(dirname "$0")/.."

console=1
[[ ${1:-} == --no-console ]] && console=0
[[ -t 0 && -t 1 ]] || console=0

# RabbitMQ 4.3, the series new users meet; RUNGS_RABBITMQ=3.10 or 4.0 for
# the older ones (scripts/broker.sh builds 4.x's Debian root once).
export RUNGS_RABBITMQ=${RUNGS_RABBITMQ:-4.3}
bash scripts/broker.sh up
eval "$(bash scripts/broker.sh env)"
export RUNGS_URL RUNGS_MGMT_URL

echo "building rungs"
go build -o bin/rungs .
rungs=bin/rungs

# The demo ladder is rebuilt on each run, so that it has this version's
# shape even where an older rungs left one of another shape (which apply
# would rightly refuse to lay over it).
$rungs teardown --ladder demo --yes >/dev/null 2>&1 || true
$rungs apply --ladder demo --unit 1s --max-delay 1h --target demo.work
# A spread of delays, so every part of the ladder has something to show.
for d in 5s 20s 45s 90s 3m 7m 15m 40m; do
	$rungs publish --ladder demo --delay "$d" --count 3 --body "demo job delayed $d" >/dev/null
done
$rungs publish --ladder demo --delay 30s --to demo.work --count 5 --body '{"job":"retry me"}' --header attempt=2

echo
if [[ $console == 1 ]]; then
	# The worker feeds itself a job a second and fails 40% of attempts:
	# failed jobs climb back into the ladder (5s, 15s, 30s) and, after four
	# attempts, land in demo.work.parked. Its log: bin/demo-worker.log.
	$rungs worker --demo --ladder demo --queue demo.work --feed 1/s --fail 0.4 \
		--steps 5s,15s,30s --attempts 4 >bin/demo-worker.log 2>&1 &
	worker=$!
	trap 'kill $worker 2>/dev/null; wait $worker 2>/dev/null' EXIT
	$rungs --ladder demo
	exit
fi
echo "a demo worker: 12 jobs, 40% of attempts fail, retried after 2s then 4s, parked after 3 attempts"
$rungs worker --demo --ladder demo --queue demo.work --feed 12/s --jobs 12 --fail 0.4 \
	--steps 2s,4s --attempts 3 --seed 7
echo
echo "waiting 6s: the management API refreshes its statistics every 5s"
sleep 6
$rungs status --ladder demo
