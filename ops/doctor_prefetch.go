package ops

import (
	"path"
	"strings"

	"github.com/rungs-dev/rungs/topology"
)

// The quorum dead-letter worker's prefetch. Every hop out of a quorum
// rung is forwarded by that rung's dead-letter worker, which holds at most
// dead_letter_worker_consumer_prefetch messages unconfirmed by the next
// rung (RabbitMQ's default is 32; it is set only in advanced.config). In a
// storm that window, not the node's CPU, is the bound: docs/benchmarks/
// drain.md measured it against 512 on the same node, back to back.
//
// The management API does not show the setting. It does list the
// configuration files each node read, and without an advanced.config the
// setting can only be the default (short of Erlang flags on the command
// line), so that is what doctor reads and says.

// prefetchDefault is RabbitMQ's dead_letter_worker_consumer_prefetch.
const prefetchDefault = 32

// prefetchMeasured is what docs/benchmarks/drain.md measured, in one
// clause: the cost of the default, in messages a second.
const prefetchMeasured = "100,000 messages of 20s on 4.3.6 drained at 2,220/s with 32 against 8,544/s with 512, " +
	"p99 38s against 8s late, 392 against 240 µs of broker CPU a message (back to back on one node, docs/benchmarks/drain.md)"

// prefetchChange is the change doctor names.
const prefetchChange = "[{rabbit, [{dead_letter_worker_consumer_prefetch, 512}]}]. in advanced.config, then a rolling restart"

func checkDeadLetterPrefetch(f DoctorFacts, out *Findings) {
	quorum := f.workerLadder()
	if quorum == "" || f.NodesErr != nil {
		return
	}
	var plain, advanced []string
	for _, n := range f.Nodes {
		if !n.Running || len(n.ConfigFiles) == 0 {
			continue
		}
		if hasAdvancedConfig(n.ConfigFiles) {
			advanced = append(advanced, n.Name)
		} else {
			plain = append(plain, n.Name)
		}
	}
	if len(plain) > 0 {
		out.Add("broker", FindingInfo, "node %s has no advanced.config, so the dead-letter worker of each quorum rung of ladder %s holds at most %d messages unconfirmed (RabbitMQ's default; the management API does not show the setting): a storm drains at that window's pace. %s. To raise it: %s",
			strings.Join(plain, ", "), quorum, prefetchDefault, prefetchMeasured, prefetchChange)
	}
	if len(advanced) > 0 {
		out.Add("broker", FindingInfo, "node %s reads an advanced.config; the management API does not show whether it sets the quorum dead-letter worker's prefetch (default %d; rabbitmqctl eval 'application:get_env(rabbit, dead_letter_worker_consumer_prefetch).' shows it). %s",
			strings.Join(advanced, ", "), prefetchDefault, prefetchMeasured)
	}
}

// workerLadder names a quorum ladder whose hops the dead-letter worker
// forwards: at least once. An at-most-once ladder has no worker, so the
// prefetch does not bound it.
func (f DoctorFacts) workerLadder() string {
	for _, fl := range f.found() {
		if fl.Ladder.QueueType == topology.Quorum && !fl.Ladder.EveryRungAtMostOnce() {
			return fl.Ladder.Name
		}
	}
	return ""
}

func hasAdvancedConfig(files []string) bool {
	for _, f := range files {
		if strings.HasPrefix(path.Base(f), "advanced.config") {
			return true
		}
	}
	return false
}
