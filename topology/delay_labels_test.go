package topology

import (
	"slices"
	"testing"
	"time"
)

func TestDelayLabels(t *testing.T) {
	secs := func(d time.Duration) string { return d.Truncate(time.Second).String() }
	for _, tc := range []struct {
		queues []DelayQueue
		want   []string
	}{
		{nil, nil},
		{[]DelayQueue{{TTL: time.Second}, {TTL: 5 * time.Second}, {TTL: time.Second}}, []string{"1s", "5s"}},
		{[]DelayQueue{{TTL: 1500 * time.Millisecond}, {TTL: time.Second}}, []string{"1s"}},
		{[]DelayQueue{{TTL: time.Second}, {PerMessage: true}, {PerMessage: true, TTL: time.Minute}}, []string{"1s", "per message"}},
	} {
		if got := (DelayGroup{Queues: tc.queues}).DelayLabels(secs, "per message"); !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.queues, got, tc.want)
		}
	}
}
