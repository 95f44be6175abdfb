package bridge

import (
	"context"
	"time"
)

// Watch hands f the bridge's progress every interval until ctx ends, for
// a front end's status line; an interval of 0 or less never does.
func (b *Bridge) Watch(ctx context.Context, every time.Duration, f func(Progress)) {
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f(b.Progress())
		}
	}
}
