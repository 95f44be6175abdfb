#!/usr/bin/env bash
# The README's pictures of the console, made from a real console run against
# a real broker, so they can be made again whenever a view changes:
#
#   scripts/screenshot.sh        writes docs/images/console.png, trace.png and scheduled.png
#
# It brings up RabbitMQ 4.3 (scripts/broker.sh), builds rungs, declares the
# demo ladder in a vhost of its own (rungs-screenshot, deleted again), puts
# messages in flight, runs the console in tmux at 100x30, captures the pane
# with its colours and renders it with charmbracelet/freeze, installed once
# with `go install` into /var/tmp/rungs-tools/bin (RUNGS_TOOLS_DIR). Each
# picture is taken once the console shows what its caption says (the trace
# pane's hops and BCC keys, the scheduled messages), not after a fixed wait.
# freeze's own font (JetBrains Mono, drawn by its built-in renderer) has no
# ↻ (the refresh mark) and drew it as a box; with rsvg-convert on the PATH
# freeze hands it the SVG instead, and fontconfig draws DejaVu Sans Mono,
# which has every glyph the console uses (Debian's librsvg2-bin and
# fonts-dejavu-core, installed here when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

freeze_version=v0.2.2
gobin=${RUNGS_TOOLS_DIR:-/var/tmp/rungs-tools}/bin
if ! [[ -x $gobin/freeze ]]; then
	GOBIN=$gobin go install "github.com/charmbracelet/freeze@$freeze_version"
fi
command -v tmux >/dev/null || { echo "screenshot: tmux is needed (apt-get install tmux)" >&2; exit 1; }
if ! command -v rsvg-convert >/dev/null || ! fc-list 2>/dev/null | grep -q 'DejaVu Sans Mono'; then
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends librsvg2-bin fonts-dejavu-core >/dev/null
	else
		echo "screenshot: rsvg-convert and DejaVu Sans Mono are needed (apt-get install librsvg2-bin fonts-dejavu-core)" >&2
		exit 1
	fi
fi

export RUNGS_RABBITMQ=${RUNGS_RABBITMQ:-4.3}
bash scripts/broker.sh up >/dev/null
eval "$(bash scripts/broker.sh env)"
export RUNGS_URL RUNGS_MGMT_URL
vhost=rungs-screenshot
mgmt() { curl -fsS -u guest:guest -H 'content-type: application/json' -X "$1" "$RUNGS_MGMT_URL/api/$2" ${3:+-d "$3"} >/dev/null; }
mgmt PUT "vhosts/$vhost"
mgmt PUT "permissions/$vhost/guest" '{"configure":".*","write":".*","read":".*"}'
session=rungs-screenshot-$$
cleanup() {
	tmux kill-session -t "$session" 2>/dev/null || true
	mgmt DELETE "vhosts/$vhost" || true
}
trap cleanup EXIT

go build -o bin/rungs .
rungs() { bin/rungs --vhost "$vhost" "$@"; }
rungs apply --ladder demo --unit 1s --max-delay 1h --target demo.work >/dev/null
for d in 5s 20s 45s 90s 3m 7m 15m 40m; do
	rungs publish --ladder demo --delay "$d" --count 3 --body "demo job delayed $d" >/dev/null
done
rungs publish --ladder demo --delay 30s --to demo.work --count 5 --body '{"job":"retry me"}' --header attempt=2 >/dev/null
# The management API refreshes its statistics every 5 s.
sleep 6

shoot() { # NAME WANT KEYS...: type KEYS into the console, wait until it shows WANT, capture, render
	local name=$1 want=$2 i
	shift 2
	for k in "$@"; do
		tmux send-keys -t "$session" "$k"
		sleep 0.5
	done
	# On a busy machine the first readings take a while: wait for the
	# picture's subject (and a refresh after it), up to a minute.
	for ((i = 0; i < 120; i++)); do
		tmux capture-pane -t "$session" -p | grep -qF -- "$want" && break
		sleep 0.5
	done
	((i < 120)) || { echo "screenshot: $name never showed $want:" >&2; tmux capture-pane -t "$session" -p >&2; return 1; }
	sleep "${SETTLE:-2}"
	tmux capture-pane -t "$session" -e -p >"bin/$name.ansi"
	# freeze sizes the window for a few lines unless told: 30 rows of 13 px
	# type at its 1.2 line height, plus padding and the title bar. Its
	# pseudo-terminal now and then fails on a busy machine: try again.
	local try out
	for try in 1 2 3; do
		if out=$("$gobin/freeze" --execute "cat bin/$name.ansi" --window --padding 20 --margin 0 \
			--font.family "DejaVu Sans Mono" --font.size 13 --height 560 --output "docs/images/$name.png" 2>&1); then
			echo "docs/images/$name.png"
			return
		fi
		sleep 1
	done
	echo "screenshot: freeze failed on $name: $out" >&2
	return 1
}

tmux new-session -d -s "$session" -x 100 -y 30 \
	"env TERM=xterm-256color COLORTERM=truecolor bin/rungs --vhost $vhost --ladder demo"
shoot console "demo.rung.02.9"
shoot trace "BCC   i>" t 40m30s Enter
# The scheduled messages, found one by one: esc leaves the trace, s scans.
SETTLE=4 shoot scheduled "exact, from" Escape s
