package ops

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

// rungFeed hands the same deliveries to every Scan, as a rung full of
// messages would: the part of a scan that is rungs' own work.
type rungFeed []broker.PeekedMessage

func (f rungFeed) Scan(_ context.Context, queue string, o broker.ScanOptions) (broker.ScanStats, error) {
	for _, m := range f {
		o.Each(m)
	}
	return broker.ScanStats{Queue: queue, Seen: len(f), Stopped: broker.ScanEmpty}, nil
}

// BenchmarkScanPerMessage times what ScanPlan.Run does with each message
// a rung hands over (its due time, the filter, keeping the earliest), with
// no broker: the share of `rungs scheduled`'s rate that is rungs' own.
// The broker's share is measured against its consume rate by
// `rungs-lab scan`.
func BenchmarkScanPerMessage(b *testing.B) {
	l, err := topology.Ladder{Name: "jobs", Layout: "direct", Unit: time.Second, Levels: 7, Radix: 16, Targets: []string{"jobs.work"}}.Normalize()
	if err != nil {
		b.Fatal(err)
	}
	rung := l.Rungs()[len(l.Rungs())-1].Queue
	now := time.Now()
	var feed rungFeed
	for i := range 1000 {
		key, err := l.Key(time.Duration(3600+i)*time.Second, "jobs.work")
		if err != nil {
			b.Fatal(err)
		}
		feed = append(feed, broker.PeekedMessage{Position: i, Delivery: broker.Delivery{
			RoutingKey: key, MessageID: fmt.Sprintf("order-%d", i), Timestamp: now.Add(-time.Minute),
			Headers: map[string]any{topology.HeaderDelayMS: int64(3600+i) * 1000},
			Body:    []byte(`{"order":8812,"kind":"payment-timeout"}`),
		}})
	}
	for _, f := range []Filter{{}, {MessageID: "order-77"}} {
		b.Run(fmt.Sprintf("filter=%q", f.String()), func(b *testing.B) {
			m, err := f.Compile()
			if err != nil {
				b.Fatal(err)
			}
			p := ScanPlan{Ladder: l, Rungs: []ScanRung{{Queue: topology.Queue{Name: rung}}}, Keep: 100, Filter: f, matcher: m}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := p.Run(context.Background(), feed, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(feed)), "ns/msg")
		})
	}
}

// BenchmarkFingerprint times what a scan adds for each message of a rung
// above level 0: the fingerprint it remembers, so that the message is
// counted once if it is met again below.
func BenchmarkFingerprint(b *testing.B) {
	d := broker.Delivery{
		RoutingKey: "0.0.0.0.e.1.0.jobs.work", MessageID: "order-8812", Timestamp: time.Now(),
		Headers: map[string]any{topology.HeaderDelayMS: int64(3600) * 1000},
		Body:    []byte(`{"order":8812,"kind":"payment-timeout"}`),
	}
	rr := &rungRead{head: map[uint64]int{}, keep: headKeep}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		rr.remember(d, i%headKeep)
		i++
	}
}
