// Package testutil holds the waits that tests against a real broker, a
// real terminal or a real clock need. Import it from _test.go files and
// test harnesses only.
//
// A wait here is a generous bound on a correctness wait (the broker's
// statistics catch up every 5 s; a loaded CI machine is slow), never an
// assertion of speed: a check that passes late still passes. Speed is
// measured by benchmarks, as ratios.
package testutil

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// DefaultEvery is the longest pause between two checks. The first checks
// come sooner (10 ms, then doubling), so a condition that is already or
// nearly true costs little, and a long wait does not hammer the broker.
const DefaultEvery = 250 * time.Millisecond

// cleanupMargin is kept back from the test binary's -timeout, so that a
// wait cut short by it still fails with its own message, not a panic
// listing every goroutine.
const cleanupMargin = 5 * time.Second

// Poll is how long a wait may last and how often it looks.
type Poll struct {
	// Within bounds the wait. The test's context (cancelled when the test
	// ends) and the binary's -timeout cut it shorter.
	Within time.Duration
	// Every is the longest pause between two checks (DefaultEvery when
	// zero). Use a second or more for checks that read management
	// statistics, which change only every few seconds.
	Every time.Duration
}

// Eventually calls check until it returns nil, for up to within, and
// otherwise fails the test naming what it waited for and check's last
// error, which should say what was seen ("parked holds 1 message").
func Eventually(t testing.TB, within time.Duration, what string, check func() error) {
	t.Helper()
	Poll{Within: within}.Eventually(t, what, check)
}

// Until calls check until it returns nil, for up to within, and returns
// check's last error (nil once it passed). It does not fail the test: for
// waits whose outcome the caller judges itself.
func Until(t testing.TB, within time.Duration, check func() error) error {
	t.Helper()
	return Poll{Within: within}.Until(t, check)
}

// Eventually is the package's Eventually with p's bounds.
func (p Poll) Eventually(t testing.TB, what string, check func() error) {
	t.Helper()
	start := time.Now()
	if err := p.Until(t, check); err != nil {
		t.Fatalf("waited %s for %s; last seen: %v", time.Since(start).Round(100*time.Millisecond), what, err)
	}
}

// Until is the package's Until with p's bounds.
func (p Poll) Until(t testing.TB, check func() error) error {
	t.Helper()
	ctx, cancel := p.context(t)
	defer cancel()
	every := p.Every
	if every <= 0 {
		every = DefaultEvery
	}
	pause := min(10*time.Millisecond, every)
	for {
		err := check()
		if err == nil {
			return nil
		}
		timer := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			timer.Stop()
			// One last look: the condition may have come true during the pause.
			last := check()
			if last == nil {
				return nil
			}
			if cause := context.Cause(ctx); !errors.Is(cause, errWithin) {
				return fmt.Errorf("%w (cut short: %v)", last, cause)
			}
			return last
		case <-timer.C:
		}
		pause = min(2*pause, every)
	}
}

var (
	errWithin   = errors.New("the wait's bound")
	errDeadline = errors.New("the test binary's -timeout is near")
)

// context ends at the first of: p.Within, the test's end, and the binary's
// -timeout less a margin.
func (p Poll) context(t testing.TB) (context.Context, context.CancelFunc) {
	within, cause := p.Within, errWithin
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok && time.Until(end)-cleanupMargin < within {
			within, cause = time.Until(end)-cleanupMargin, errDeadline
		}
	}
	return context.WithTimeoutCause(t.Context(), max(within, 0), cause)
}
