package testutil

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatalf records instead of stopping.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
}

func TestEventuallyPassesOnceTheCheckDoes(t *testing.T) {
	calls := 0
	r := &recorder{TB: t}
	Eventually(r, time.Minute, "the third call", func() error {
		if calls++; calls < 3 {
			return fmt.Errorf("call %d", calls)
		}
		return nil
	})
	if r.fatal != "" || calls != 3 {
		t.Errorf("calls %d, failure %q; want 3 calls and no failure", calls, r.fatal)
	}
}

func TestEventuallyReportsTheLastState(t *testing.T) {
	calls := 0
	r := &recorder{TB: t}
	Poll{Within: 50 * time.Millisecond, Every: 5 * time.Millisecond}.Eventually(r, "rung 05 to empty", func() error {
		calls++
		return fmt.Errorf("rung 05 holds %d", calls)
	})
	want := fmt.Sprintf("rung 05 holds %d", calls)
	if !strings.Contains(r.fatal, "for rung 05 to empty; last seen: "+want) || strings.Contains(r.fatal, "cut short") {
		t.Errorf("failure %q: want it to name the wait and %q", r.fatal, want)
	}
}

func TestUntilReturnsTheLastErrorWithoutFailing(t *testing.T) {
	r := &recorder{TB: t}
	stuck := errors.New("stuck")
	if err := Until(r, 20*time.Millisecond, func() error { return stuck }); !errors.Is(err, stuck) {
		t.Errorf("Until = %v, want %v", err, stuck)
	}
	if r.fatal != "" {
		t.Errorf("Until failed the test: %s", r.fatal)
	}
	if err := Until(r, time.Minute, func() error { return nil }); err != nil {
		t.Errorf("Until of a passing check = %v", err)
	}
}

// A wait ends with the test, and says so.
func TestUntilEndsWithTheTestsContext(t *testing.T) {
	var err error
	t.Run("inner", func(inner *testing.T) {
		inner.Cleanup(func() {
			// The context is cancelled before cleanups run.
			err = Until(inner, time.Hour, func() error { return errors.New("never") })
		})
	})
	if err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("Until after the test ended = %v, want it cut short", err)
	}
}
