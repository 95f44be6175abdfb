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
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker"
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

// publishN sends n messages that build makes (i from 0) with
// scalePublishers concurrent Publish calls of scaleBatch messages, and
// returns how many were confirmed and how long it took.
func publishN(ctx context.Context, c *broker.Conn, n int, build func(i int) broker.Message, stamp func(msgs []broker.Message)) (int, time.Duration, error) {
	var next, confirmed atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	start := time.Now()
	for p := 0; p < scalePublishers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := c.Stream()
			defer st.Close()
			for ctx.Err() == nil {
				first := int(next.Add(scaleBatch)) - scaleBatch
				if first >= n {
					return
				}
				msgs := make([]broker.Message, min(scaleBatch, n-first))
				for i := range msgs {
					msgs[i] = build(first + i)
				}
				if stamp != nil {
					stamp(msgs)
				}
				res, err := st.Publish(ctx, msgs)
				confirmed.Add(int64(res.Confirmed))
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return int(confirmed.Load()), time.Since(start), errors.Join(errs...)
}
