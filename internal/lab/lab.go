// Package lab measures rungs itself, from outside, as the lab tool
// (cmd/rungs-lab) runs it: what its commands cost the broker and the
// machine (requests, bytes, time, peak memory), what the console's refresh
// costs, one ladder read beside tens of thousands of other queues, a
// million messages in one ladder and a replay killed with SIGKILL. It
// runs the rungs binary as a subprocess, samples /proc for its memory and
// counts its management requests through a proxy; none of that ships in
// rungs, whose own `rungs bench` (package bench) measures ladders against
// the broker's limit.
package lab

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rungs-dev/rungs/bench"
)

// Header names a lab message carries: its sequence number finds
// duplicates and losses, its delay and due time give lateness.
const (
	hdrSeq   = "x-rungs-lab-seq"
	hdrDelay = "x-rungs-lab-delay-ns"
)

// ms prints a duration in milliseconds, for progress lines.
func ms(d time.Duration) string { return bench.FormatMS(bench.Millis(d)) + "ms" }

// vhostName is a new vhost's name for one phase, unlikely to meet another.
func vhostName(phase string) string {
	return fmt.Sprintf("rungs-lab-%s-%08x", phase, rand.Uint32())
}
