package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// ReplayCost is what `rungs replay` of N dead letters cost, and what a
// kill -9 in the middle of one did.
type ReplayCost struct {
	N int `json:"n"`
	// KilledAt is how many copies had reached the target when the first
	// replay was killed with SIGKILL; AfterKill* are the queues' depths
	// once the broker had returned its unacknowledged messages.
	KilledAt        int     `json:"killed_at"`
	AfterKillSource int     `json:"after_kill_source"`
	AfterKillTarget int     `json:"after_kill_target"`
	Moved           int     `json:"moved"`
	Seconds         float64 `json:"seconds"`
	PerS            float64 `json:"per_s"`
	Requests        int64   `json:"mgmt_requests"`
	Bytes           int64   `json:"mgmt_bytes"`
	// RSSQuarters is the largest resident memory sampled in each quarter
	// of the second (complete) replay; flat memory keeps them level.
	RSSQuarters [4]int64 `json:"rss_quarters_bytes"`
	MaxRSS      int64    `json:"max_rss_bytes"`
	// MaxHeap is the largest Go heap at the start of a collection, and GCs
	// the collections, from the runtime's gctrace.
	MaxHeap int64 `json:"max_heap_bytes"`
	GCs     int   `json:"gcs"`
	// Every dead letter must be at the target at least once after both
	// runs; duplicates are the copies the kill left on both sides.
	Delivered  int `json:"delivered"`
	Duplicates int `json:"duplicates"`
	Lost       int `json:"lost"`
}

// Queues of the replay part.
const (
	replayExpire = "bench.scale.expire" // TTL 0: dead-letters all it gets
	replayDLQ    = "bench.scale.dlq"
	replayTarget = "bench.scale.replayed"
)

// replay makes N real dead letters (messages expired from a queue with a
// dead-letter exchange, so they carry x-death), replays them with `rungs
// replay`, killed with SIGKILL a third of the way, then again to the end,
// and checks that each one reached the target.
func (s *scaleRun) replay(ctx context.Context) error {
	n := s.o.N
	rc := &ReplayCost{N: n}
	s.rep.Replay = rc
	plan := topology.Plan{Queues: []topology.Queue{
		{Name: replayExpire, Durable: true, Args: topology.Args{
			"x-message-ttl": int64(0), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": replayDLQ,
		}},
		typed(replayDLQ, s.l.QueueType), typed(replayTarget, s.l.QueueType),
	}}
	if _, err := s.pub.Apply(ctx, plan); err != nil {
		return err
	}
	defer func() {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		_ = s.pub.Teardown(tctx, plan)
	}()
	got, _, err := bench.PublishN(ctx, s.pub, n, func(i int) broker.Message {
		return broker.Message{RoutingKey: replayExpire, MessageID: strconv.Itoa(i), Body: s.body, Persistent: true, Headers: map[string]any{hdrSeq: int64(i)}}
	}, nil)
	if err != nil || got != n {
		return fmt.Errorf("dead letters: %d of %d confirmed: %v", got, n, err)
	}
	if err := s.waitDepth(ctx, replayDLQ, n); err != nil {
		return err
	}
	s.logf("%d dead letters in %s; replaying them, with a kill -9 a third of the way", n, replayDLQ)

	// Paced to take at least 4 s, so that the kill lands mid-run however
	// small N is; at a large N the pace is above what replay reaches.
	args := []string{"replay", "--from", replayDLQ, "--to-queue", replayTarget, "--yes"}
	killed, err := startMeasured(ctx, s.o.Binary, s.cfg, s.mgmt, append(args, "--rate", strconv.Itoa(max(1, n/4))+"/s")...)
	if err != nil {
		return err
	}
	for {
		if killed.exitedEarly() {
			s.problem("replay: the first run ended before the kill could land: %s", killed.stderrLine())
			break
		}
		d, err := s.depth(ctx, replayTarget)
		if err != nil {
			killed.kill()
			return err
		}
		if d >= max(1, n/3) {
			killed.kill()
			rc.KilledAt = d
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	killed.wait()
	rc.AfterKillSource, rc.AfterKillTarget = s.settle(ctx, n)
	if rc.AfterKillSource+rc.AfterKillTarget < n {
		s.problem("replay: after the kill -9, %d on the source and %d at the target: %d lost", rc.AfterKillSource, rc.AfterKillTarget, n-rc.AfterKillSource-rc.AfterKillTarget)
	}
	s.logf("kill -9 at %d copies: %d on the source, %d at the target", rc.KilledAt, rc.AfterKillSource, rc.AfterKillTarget)

	full, err := startMeasured(ctx, s.o.Binary, s.cfg, s.mgmt, append(args, "--json")...)
	if err != nil {
		return err
	}
	full.wait()
	if full.err != nil {
		s.problem("replay: %v: %s", full.err, full.stderrLine())
	}
	var res struct{ Moved int }
	_ = json.Unmarshal(full.stdout.Bytes(), &res)
	rc.Moved, rc.Seconds = res.Moved, full.took.Seconds()
	if rc.Seconds > 0 {
		rc.PerS = float64(res.Moved) / rc.Seconds
	}
	rc.Requests, rc.Bytes = full.proxy.cost()
	rc.RSSQuarters, rc.MaxRSS = full.quarters(), full.maxRSS()
	rc.MaxHeap, rc.GCs = full.heap()

	chk := newScaleCheck(n, time.Now())
	if err := s.drainQueue(ctx, replayTarget, chk); err != nil {
		return err
	}
	rc.Delivered, rc.Duplicates, rc.Lost = chk.n, chk.dups, n-chk.n
	if rc.Lost > 0 {
		s.problem("replay: %d of %d dead letters never reached %s", rc.Lost, n, replayTarget)
	}
	if left, err := s.depth(ctx, replayDLQ); err != nil || left != 0 {
		s.problem("replay: %d left on %s (%v)", left, replayDLQ, err)
	}
	s.logf("replayed %d in %.1fs (%s msg/s); RSS by quarter %s, max %s; Go heap max %s over %d GCs; %d at the target once, %d duplicates from the kill, %d lost",
		rc.Moved, rc.Seconds, topology.FormatRate(rc.PerS), quarterText(rc.RSSQuarters), topology.FormatBytes(rc.MaxRSS), topology.FormatBytes(rc.MaxHeap), rc.GCs, rc.Delivered, rc.Duplicates, rc.Lost)
	return nil
}

func typed(name string, qt topology.QueueType) topology.Queue {
	q := topology.Queue{Name: name, Durable: true}
	if qt == topology.Quorum {
		q.Args = topology.Args{"x-queue-type": "quorum"}
	}
	return q
}

func quarterText(q [4]int64) string {
	parts := make([]string, len(q))
	for i, v := range q {
		parts[i] = topology.FormatBytes(v)
	}
	return strings.Join(parts, " / ")
}

// waitDepth waits until queue holds want messages, or stops growing.
func (s *scaleRun) waitDepth(ctx context.Context, queue string, want int) error {
	last, since := -1, time.Now()
	for ctx.Err() == nil {
		d, err := s.depth(ctx, queue)
		if err != nil {
			return err
		}
		if d >= want {
			return nil
		}
		if d != last {
			last, since = d, time.Now()
		} else if time.Since(since) > 30*time.Second {
			return fmt.Errorf("%s holds %d of %d messages and stopped growing", queue, d, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return ctx.Err()
}

// depth reads a queue's depth, trying again for a while: on a machine
// loaded enough, the broker drops a connection now and then (a missed
// heartbeat), which says nothing about the replay being measured.
func (s *scaleRun) depth(ctx context.Context, queue string) (int, error) {
	var err error
	for try := 0; try < 10 && ctx.Err() == nil; try++ {
		var d int
		if d, err = s.pub.Depth(ctx, queue); err == nil {
			return d, nil
		}
		time.Sleep(time.Second)
	}
	return 0, err
}

// settle waits until the source and the target have stopped changing (the
// broker returns a killed consumer's messages in a moment) and returns
// their depths. Until they hold n between them it waits longer for them
// to stop: a loaded broker can take seconds to notice the killed
// connection, and a count taken before then reads as a loss.
func (s *scaleRun) settle(ctx context.Context, n int) (source, target int) {
	stable := 0
	for ctx.Err() == nil {
		if stable >= 50 || stable >= 5 && source+target >= n {
			break
		}
		time.Sleep(200 * time.Millisecond)
		a, err1 := s.depth(ctx, replayDLQ)
		b, err2 := s.depth(ctx, replayTarget)
		if err1 != nil || err2 != nil {
			continue
		}
		if a == source && b == target {
			stable++
		} else {
			source, target, stable = a, b, 0
		}
	}
	return source, target
}

// drainQueue consumes every message of queue into chk, until it is empty
// and nothing more arrives for a few seconds.
func (s *scaleRun) drainQueue(ctx context.Context, queue string, chk *scaleCheck) error {
	sub, err := broker.Dial(ctx, s.cfg)
	if err != nil {
		return err
	}
	defer sub.Close()
	in, err := sub.Consume(context.WithoutCancel(ctx), queue, 2000)
	if err != nil {
		return err
	}
	total := 0
	quiet := time.NewTimer(5 * time.Second)
	defer quiet.Stop()
	for {
		select {
		case d, ok := <-in:
			if !ok {
				return fmt.Errorf("consume %s: the channel closed", queue)
			}
			total++
			_ = d.Ack()
			seq, ok := bench.IntHeader(d.Headers, hdrSeq)
			switch {
			case !ok || seq < 0 || seq >= int64(len(chk.seen)):
				chk.bad++
			case chk.seen[seq]:
				chk.dups++
			default:
				chk.seen[seq] = true
				chk.n++
			}
			quiet.Reset(5 * time.Second)
		case <-quiet.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
