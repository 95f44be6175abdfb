package bridge

import (
	"context"
	"testing"
	"time"
)

// Watch hands over the progress on each tick until its context ends, and
// never without an interval.
func TestWatch(t *testing.T) {
	b := &Bridge{p: Progress{Received: 7, Parked: map[string]int64{}}}
	b.Watch(context.Background(), 0, func(Progress) { t.Error("called without an interval") })

	ctx, cancel := context.WithCancel(context.Background())
	seen := make(chan Progress, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Watch(ctx, time.Millisecond, func(p Progress) {
			select {
			case seen <- p:
			default:
			}
		})
	}()
	if p := <-seen; p.Received != 7 {
		t.Errorf("progress %+v", p)
	}
	cancel()
	<-done
}
