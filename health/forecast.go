package health

import (
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// Forecast works out a ladder's forecast from its rows: their live
// statistics, and the stuck and stalled judgements the rows already carry
// (such a rung's messages get no upper bound). interval is the refresh interval
// (0: DefaultInterval): two of them are the slack for a head age judged
// impossible, as in Stuck. The console, status and the exporter all
// forecast through it.
func Forecast(l topology.Ladder, rows []Row, interval time.Duration) topology.Forecast {
	if interval <= 0 {
		interval = DefaultInterval
	}
	stats := map[string]topology.QueueStats{}
	stuck := map[string]bool{}
	for _, r := range rows {
		if r.Kind == RungRow {
			stats[r.Queue] = r.Stats
			stuck[r.Queue] = r.Stuck || r.Stalled
		}
	}
	return l.Forecast(stats, topology.ForecastOptions{
		Margin: 2 * interval,
		Stuck:  func(q string) bool { return stuck[q] },
	})
}
