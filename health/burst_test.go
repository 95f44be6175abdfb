package health

import (
	"testing"
	"time"
)

func TestBurstLateness(t *testing.T) {
	for _, c := range []struct {
		name             string
		n, hops          int
		capacity, rate   float64
		wantRate         float64
		wantP50, wantMax time.Duration
	}{
		// 60,000 messages of 3 hops at 18,000 hops/s pass at 6,000/s:
		// published at once, the last leaves 10s after the first is due.
		{"at once", 60_000, 3, 18_000, 0, 6000, 5 * time.Second, 10 * time.Second},
		// Published at 12,000/s they come due over 5s: 5s late at the end.
		{"paced", 60_000, 3, 18_000, 12_000, 6000, 2500 * time.Millisecond, 5 * time.Second},
		// Published slower than the ladder passes them: never late.
		{"keeps up", 60_000, 3, 18_000, 5_000, 6000, 0, 0},
		{"no capacity", 60_000, 3, 0, 0, 0, 0, 0},
		{"no hops", 60_000, 0, 18_000, 0, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := BurstLateness(c.n, c.hops, c.capacity, c.rate)
			if got.Rate != c.wantRate || got.P50 != c.wantP50 || got.Max != c.wantMax {
				t.Errorf("BurstLateness(%d, %d, %v, %v) = rate %v, p50 %s, max %s; want %v, %s, %s",
					c.n, c.hops, c.capacity, c.rate, got.Rate, got.P50, got.Max, c.wantRate, c.wantP50, c.wantMax)
			}
			if got.Late() != (c.wantMax > 0) {
				t.Errorf("Late() = %v with max %s", got.Late(), got.Max)
			}
			if got.P99 < got.P50 || got.P99 > got.Max {
				t.Errorf("p99 %s outside p50 %s .. max %s", got.P99, got.P50, got.Max)
			}
		})
	}
}
