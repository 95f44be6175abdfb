package ops

import (
	"testing"
	"time"
)

func TestPublishPaceHoldsTheRate(t *testing.T) {
	cases := []struct {
		sent    int
		rate    float64
		elapsed time.Duration
		want    time.Duration
	}{
		{sent: 1000, rate: 0, elapsed: 0, want: 0},                      // no cap
		{sent: 0, rate: 100, elapsed: 0, want: 0},                       // the first batch goes at once
		{sent: 50, rate: 100, elapsed: 0, want: 500 * time.Millisecond}, // ahead of the pace
		{sent: 50, rate: 100, elapsed: 200 * time.Millisecond, want: 300 * time.Millisecond},
		{sent: 50, rate: 100, elapsed: time.Second, want: 0}, // behind the pace: go at once
		{sent: 6000, rate: 6000.0 / 60, elapsed: 59 * time.Second, want: time.Second},
	}
	for _, c := range cases {
		if got := paceWait(c.sent, c.rate, c.elapsed); got != c.want {
			t.Errorf("paceWait(%d, %g, %s) = %s, want %s", c.sent, c.rate, c.elapsed, got, c.want)
		}
	}
}
