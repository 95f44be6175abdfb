package bench

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// Bulk publishing parameters shared by the phases that load a ladder with
// many messages (the drain phase here, the lab's scale and beside phases).
const (
	// Publishers publish concurrently, each Batch messages per call, so
	// that one call's wait for its last confirms overlaps the others'
	// sending.
	Publishers = 4
	Batch      = 1000
	// LimitN caps a limit measurement: it measures a rate, and a million
	// more messages would only double the broker's memory.
	LimitN = 100_000
)

// PublishN sends n messages that build makes (i from 0) with Publishers
// concurrent confirmed Publish calls of Batch messages; stamp, if not nil,
// sees each batch just before it is sent. It returns how many were
// confirmed and how long it took.
func PublishN(ctx context.Context, c *broker.Conn, n int, build func(i int) broker.Message, stamp func(msgs []broker.Message)) (int, time.Duration, error) {
	var next, confirmed atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	start := time.Now()
	for p := 0; p < Publishers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := c.Stream()
			defer st.Close()
			for ctx.Err() == nil {
				first := int(next.Add(Batch)) - Batch
				if first >= n {
					return
				}
				msgs := make([]broker.Message, min(Batch, n-first))
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

// LadderShape is a measured ladder's shape as a report states it.
type LadderShape struct {
	Name      string  `json:"name"`
	Layout    string  `json:"layout"`
	Radix     int     `json:"radix"`
	Levels    int     `json:"levels"`
	UnitMS    float64 `json:"unit_ms"`
	QueueType string  `json:"queue_type"`
	Rungs     int     `json:"rungs"`
}

// ShapeOf is how a report names the ladder it measured.
func ShapeOf(l topology.Ladder) LadderShape {
	return LadderShape{Name: l.Name, Layout: l.Layout, Radix: l.Radix, Levels: l.Levels, UnitMS: Millis(l.Unit), QueueType: string(l.QueueType), Rungs: len(l.Rungs())}
}
