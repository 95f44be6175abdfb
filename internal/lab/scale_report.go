package lab

import (
	"fmt"
	"strings"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/topology"
)

// Markdown renders the scale report as docs/benchmarks holds it.
func (r ScaleReport) Markdown() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	l := r.Ladder
	w("## rungs-lab scale %d, RabbitMQ %s, %s\n\n", r.N, r.Broker.RabbitMQ, r.Started.Format("2006-01-02 15:04 UTC"))
	w("- Machine: %s; %d CPUs, %s; load average %s before, %s after\n", r.Machine.CPU, r.Machine.CPUs, r.Machine.Memory, r.Machine.LoadBefore, r.Machine.LoadAfter)
	w("- Broker: RabbitMQ %s, Erlang %s, on the same machine (loopback)\n", r.Broker.RabbitMQ, r.Broker.Erlang)
	w("- Ladder: %s, %s rungs, radix %d, %d levels of %s (%d rungs), as `rungs apply` declares it by default on this broker\n",
		l.Layout, l.QueueType, l.Radix, l.Levels, bench.FormatMS(l.UnitMS)+" ms", l.Rungs)
	w("- Messages: %s, %d-byte bodies, persistent, publisher confirms; delays uniform over %gs to %gs in whole units; one consumer on the done queue (prefetch %d) checks each\n",
		topology.FormatCount(int64(r.N)), r.Size, r.MinDelayS, r.MaxDelayS, bench.Prefetch)
	w("- Run took %s\n\n", bench.FormatSeconds(r.Seconds))

	w("| measure | value |\n|---|---:|\n")
	w("| publish, plain %s queue (the limit, %s messages) | %s msg/s |\n", l.QueueType, topology.FormatCount(int64(r.LimitN)), topology.FormatRate(r.LimitPerS))
	w("| publish into the ladder | %s msg/s (%.1f s) |\n", topology.FormatRate(r.Publish), r.PublishS)
	w("| ladder ÷ limit | **%.2f** |\n", r.Ratio)
	m := r.Memory
	w("| broker memory before / in flight / peak / after | %s / %s / %s / %s |\n", topology.FormatBytes(m.Before), topology.FormatBytes(m.InFlight), topology.FormatBytes(m.Peak), topology.FormatBytes(m.After))
	w("| delivered once / duplicates / early / lost | %s / %d / %d / %d |\n", topology.FormatCount(int64(r.Delivered)), r.Duplicates, r.Early, r.Lost)
	w("| lateness at arrival p50 / p99 / max | %s / %s / %s ms |\n", bench.FormatMS(r.Lateness.P50), bench.FormatMS(r.Lateness.P99), bench.FormatMS(r.Lateness.Max))
	w("| last arrival / last due, after the first publish | %.1f s / %.1f s |\n\n", r.DrainS, r.LastDueS)

	if len(r.Status)+len(r.Refresh) > 0 {
		w("| read while it drains | in flight | ms | requests | response bytes | peak RSS | expired in rungs, awaiting dead-lettering |\n|---|---:|---:|---:|---:|---:|---:|\n")
		row := func(what string, c CommandCost) {
			rss, dlx := "–", "–"
			if c.RSS > 0 {
				rss = topology.FormatBytes(c.RSS)
			}
			if c.RSS == 0 {
				dlx = topology.FormatCount(int64(c.DLXBacklog))
			}
			if c.Err != "" {
				what += " (failed: " + c.Err + ")"
			}
			w("| %s | %s | %.0f | %d | %s | %s | %s |\n", what, topology.FormatCount(int64(c.InFlight)), c.MS, c.Requests, topology.FormatBytes(c.Bytes), rss, dlx)
		}
		for _, c := range r.Status {
			row("`rungs status --ladder`", c)
		}
		for _, c := range r.Refresh {
			row("console refresh", c)
		}
		w("\n")
	}
	if rc := r.Replay; rc != nil {
		w("| `rungs replay` of %s dead letters | value |\n|---|---:|\n", topology.FormatCount(int64(rc.N)))
		w("| kill -9 at | %s copies at the target |\n", topology.FormatCount(int64(rc.KilledAt)))
		w("| after the kill: source / target | %s / %s |\n", topology.FormatCount(int64(rc.AfterKillSource)), topology.FormatCount(int64(rc.AfterKillTarget)))
		w("| second replay: moved, time | %s in %.1f s (%s msg/s) |\n", topology.FormatCount(int64(rc.Moved)), rc.Seconds, topology.FormatRate(rc.PerS))
		w("| its RSS, largest sample per quarter of the run | %s |\n", quarterText(rc.RSSQuarters))
		w("| its peak RSS / largest Go heap (%d GCs) | %s / %s |\n", rc.GCs, topology.FormatBytes(rc.MaxRSS), topology.FormatBytes(rc.MaxHeap))
		w("| its management requests / bytes | %d / %s |\n", rc.Requests, topology.FormatBytes(rc.Bytes))
		w("| at the target once / duplicates / lost | %s / %d / %d |\n\n", topology.FormatCount(int64(rc.Delivered)), rc.Duplicates, rc.Lost)
	}
	bench.WriteProblems(&b, r.Problems, "Every message arrived exactly once and none before its due time; the replay lost none.")
	return b.String()
}
