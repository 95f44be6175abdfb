package ops

import (
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/topology"
)

func TestForecastBurst(t *testing.T) {
	l, err := topology.Ladder{Name: "jobs", QueueType: topology.Quorum}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := l.Trace(20*time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	hops := len(tr.Hops)
	measured := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	caps := map[string]broker.DrainCapacity{"quorum": {HopsPerS: float64(6000 * hops), RabbitMQ: "4.3.6", Measured: measured}}

	f, ok := ForecastBurst(360_000, tr, caps, 0)
	if !ok || f.Rate != 6000 || f.Max != time.Minute || f.Paced {
		t.Fatalf("ForecastBurst = %+v, %v; want 6,000/s, the last a minute late, unpaced", f, ok)
	}
	w := f.Warning(360_000, tr)
	for _, want := range []string{"360000 messages of 20s", "up to about 1m late", "about 6k/s", "RabbitMQ 4.3.6, 2026-11-28"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q lacks %q", w, want)
		}
	}
	if f, ok := ForecastBurst(360_000, tr, caps, 12_000); !ok || !f.Paced || f.Max != 30*time.Second {
		t.Errorf("paced at 12,000/s: %+v, %v; want the last 30s late", f, ok)
	}
	// A burst the ladder passes within a second, another kind of rungs,
	// no capacity saved: no warning.
	for name, c := range map[string]struct {
		n    int
		caps map[string]broker.DrainCapacity
	}{
		"small":     {3000, caps},
		"classic":   {360_000, map[string]broker.DrainCapacity{"classic": caps["quorum"]}},
		"none":      {360_000, nil},
		"zero rate": {360_000, map[string]broker.DrainCapacity{"quorum": {}}},
	} {
		if f, ok := ForecastBurst(c.n, tr, c.caps, 0); ok {
			t.Errorf("%s: warned %+v", name, f)
		}
	}
}
