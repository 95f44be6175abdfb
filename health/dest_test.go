package health

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// destReading is one reading of a destination: its depth and what its
// consumers took so far; gone leaves the queue out of the reading.
type destReading struct {
	depth, taken int64
	gone         bool
}

// observeDest feeds the readings, step apart, to Flows: the queue "work"
// beside a rung that is always listed.
func observeDest(rs []destReading, step time.Duration) Flows {
	var f Flows
	at := time.Unix(1000, 0)
	for _, r := range rs {
		qs := []topology.Queue{{Name: "l.rung.00"}}
		if !r.gone {
			qs = append(qs, topology.Queue{Name: "work", Stats: topology.QueueStats{Ready: r.depth, Taken: r.taken}})
		}
		f = f.Observe(qs, at)
		at = at.Add(step)
	}
	return f
}

// ramp is n+1 readings whose depth and taken count change by dDepth and
// dTaken at each.
func ramp(depth, dDepth, dTaken int64, n int) []destReading {
	var rs []destReading
	for i := int64(0); i <= int64(n); i++ {
		rs = append(rs, destReading{depth: depth + i*dDepth, taken: i * dTaken})
	}
	return rs
}

func TestDestFlow(t *testing.T) {
	for _, tc := range []struct {
		name      string
		readings  []destReading
		ok        bool
		in, taken float64
		trend     string
		text      string
	}{
		// Readings 5s apart over 30s: 50 more held and 100 taken at each.
		{name: "depth rising, consumers taking", readings: ramp(0, 50, 100, 6), ok: true, in: 30, taken: 20, trend: "grows",
			text: "backlog grows 10/s: 30/s in, 20/s drained"},
		// No consumer: no counters at all, what arrived is what it gained.
		{name: "no consumers", readings: ramp(0, 100, 0, 6), ok: true, in: 20, taken: 0, trend: "grows",
			text: "backlog grows 20/s: 20/s in, 0/s drained"},
		// Consumers outpace the ladder: the finish at the net rate.
		{name: "shrinking", readings: ramp(600, -50, 100, 6), ok: true, in: 10, taken: 20, trend: "shrinks",
			text: "backlog shrinks 10/s: 10/s in, 20/s drained, empty in ~30s"},
		{name: "holding", readings: ramp(40, 0, 100, 6), ok: true, in: 20, taken: 20, trend: "holds",
			text: "backlog holds: 20/s in, 20/s drained"},
		// Within an interval's worth of the flow over the span: noise.
		{name: "holding within the noise", readings: ramp(40, 10, 100, 6), ok: true, in: 22, taken: 20, trend: "holds",
			text: "backlog holds: 22/s in, 20/s drained"},
		{name: "one reading", readings: ramp(0, 50, 100, 0)},
		{name: "nothing moving", readings: ramp(70, 0, 0, 6)},
		{name: "destination gone", readings: append(ramp(0, 50, 100, 6), destReading{gone: true})},
		// Back after it was gone: measured from its return, its counters
		// starting again from 0 (a new queue).
		{name: "gone and back", readings: append(append(ramp(0, 50, 100, 3), destReading{gone: true}), ramp(0, 25, 50, 4)...),
			ok: true, in: 15, taken: 10, trend: "grows", text: "backlog grows 5/s: 15/s in, 10/s drained"},
		// A counter that falls was reset: that step's taken is unknown and
		// left out, the rest count.
		{name: "counter reset", readings: []destReading{{0, 0, false}, {50, 100, false}, {100, 10, false}, {150, 110, false}}, ok: true,
			in: 350.0 / 15, taken: 200.0 / 15, trend: "grows", text: "backlog grows 10/s: 23/s in, 13/s drained"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := observeDest(tc.readings, 5*time.Second).Dest("work")
			if ok != tc.ok {
				t.Fatalf("measured %v (%+v), want %v", ok, d, tc.ok)
			}
			if !ok {
				return
			}
			if math.Abs(d.In-tc.in) > 1e-9 || math.Abs(d.Taken-tc.taken) > 1e-9 || d.Trend() != tc.trend {
				t.Errorf("in %.3f/s, taken %.3f/s, %s; want %.3f, %.3f, %s", d.In, d.Taken, d.Trend(), tc.in, tc.taken, tc.trend)
			}
			if s := DestFlowText(d); s != tc.text {
				t.Errorf("text %q, want %q", s, tc.text)
			}
		})
	}
}

// The rates are the recent readings': older ones, at another rate, do
// not count.
func TestDestFlowRecentWindow(t *testing.T) {
	rs := ramp(0, 500, 0, 6) // 100/s for 30s, nobody consuming
	for _, r := range ramp(0, 50, 100, 6)[1:] {
		rs = append(rs, destReading{depth: 3000 + r.depth, taken: r.taken})
	}
	d, ok := observeDest(rs, 5*time.Second).Dest("work")
	if !ok || d.Span != RateSpan || d.In != 30 || d.Taken != 20 {
		t.Fatalf("%+v %v: want 30/s in, 20/s taken over %s", d, ok, RateSpan)
	}
}

// The report carries the flows of the queues the ladder delivers to,
// named as destination or done queue, and none of its rungs; without
// readings that show them moving it carries none.
func TestReportDestFlows(t *testing.T) {
	l, err := topology.Ladder{Name: "jobs", Vhost: "/", Unit: time.Second, Levels: 3, Radix: 2, Targets: []string{"jobs.work", "jobs.idle"}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	plan := l.Plan()
	plan.Queues = append(plan.Queues, topology.Queue{Name: "jobs.work"}, topology.Queue{Name: "jobs.idle"})
	var f Flows
	at := time.Unix(1000, 0)
	read := func(i int64) []topology.Queue {
		var qs []topology.Queue
		for _, q := range plan.Queues {
			switch q.Name {
			case "jobs.work":
				q.Stats = topology.QueueStats{Ready: 10 * i, Taken: 40 * i, Consumers: 1}
			case "jobs.done":
				q.Stats = topology.QueueStats{Ready: 5 * i}
			case l.Rungs()[0].Queue:
				q.Stats = topology.QueueStats{Ready: 1000 - 50*i}
			}
			qs = append(qs, q)
		}
		return qs
	}
	snap := func(qs []topology.Queue) topology.Snapshot {
		return topology.Snapshot{Vhost: "/", Queues: qs, Exchanges: plan.Exchanges, Bindings: plan.Bindings}
	}
	report := func() LadderReport {
		return NewReport([]topology.Found{{Ladder: l}}, snap(read(0)), Watch{Flows: f, Now: at}).Ladders[0]
	}
	f = f.Observe(read(0), at)
	if ds := report().Drain.Dests; ds != nil {
		t.Fatalf("one reading: %+v", ds)
	}
	for i := int64(1); i <= 3; i++ {
		at = at.Add(5 * time.Second)
		f = f.Observe(read(i), at)
	}
	ds := report().Drain.Dests
	if len(ds) != 2 {
		t.Fatalf("dests %+v: want jobs.done and jobs.work", ds)
	}
	want := map[string]DestFlow{"jobs.done": {Done: true, In: 1}, "jobs.work": {In: 10, Taken: 8}}
	for _, d := range ds {
		w, ok := want[d.Queue]
		if !ok || d.Done != w.Done || d.In != w.In || d.Taken != w.Taken {
			t.Errorf("%+v, want %+v", d, w)
		}
	}
}

// The recorded drains: nobody consumed from the done queue, and its
// publish rate read 0 throughout, yet its arrivals show, never more
// than it received, and the backlog there is said to grow.
func TestRecordedDestArrivals(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var r Recording
			if err := json.Unmarshal(raw, &r); err != nil {
				t.Fatal(err)
			}
			var most, published int64
			for _, s := range r.Samples {
				v := s.Queues[r.Target]
				most = max(most, v[0]+v[1]+v[2]+v[3])
				published = max(published, v[4])
			}
			if published != 0 {
				t.Fatalf("%s was published to: %d", r.Target, published)
			}
			var peak float64
			grows := false
			if err := r.Replay(DefaultInterval, func(at time.Duration, lr LadderReport) {
				for _, d := range lr.Drain.Dests {
					if d.Queue != r.Target {
						continue
					}
					if d.Taken != 0 || !d.Done {
						t.Errorf("at %s: %+v, nobody consumed from the done queue", at, d)
					}
					if got := d.In * d.Span.Seconds(); got > float64(most)+0.5 {
						t.Errorf("at %s: %.0f arrived over %s, more than the %d it ever held", at, got, d.Span, most)
					}
					peak = max(peak, d.In)
					grows = grows || strings.HasPrefix(DestFlowText(d), "backlog grows ")
				}
			}); err != nil {
				t.Fatal(err)
			}
			if peak <= 0 || !grows {
				t.Errorf("%s received %d, yet the arrivals peaked at %.0f/s (grows said: %v)", r.Target, most, peak, grows)
			}
			t.Logf("%s: %d arrived, at most %.0f/s", r.Target, most, peak)
		})
	}
}
