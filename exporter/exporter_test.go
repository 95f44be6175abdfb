package exporter

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// fakeInspector serves a snapshot and counts the requests a scrape makes.
type fakeInspector struct {
	mu        sync.Mutex
	snap      topology.Snapshot
	err       error
	snapshots int
	stats     int
	vhosts    int
	// caps are the saved drain capacities; capReads counts their reads.
	caps     map[string]broker.DrainCapacity
	capReads int
}

func (f *fakeInspector) DrainCapacities(context.Context) (map[string]broker.DrainCapacity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.capReads++
	if f.caps == nil {
		return nil, broker.ErrNotFound
	}
	return f.caps, nil
}

func (f *fakeInspector) Snapshot(_ context.Context, vhost string) (topology.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snapshots++
	if f.err != nil {
		return topology.Snapshot{}, f.err
	}
	s := f.snap
	s.Vhost = vhost
	return s, nil
}

func (f *fakeInspector) Stats(context.Context, string) ([]topology.Queue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stats++
	if f.err != nil {
		return nil, f.err
	}
	return fixture.Queues(f.snap), nil
}

func (f *fakeInspector) Overview(context.Context) (broker.Overview, error) {
	return broker.Overview{}, nil
}

func (f *fakeInspector) Vhosts(context.Context) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.vhosts++
	return []string{"/"}, f.err
}

// scrape fetches /metrics as Prometheus would.
func scrape(t *testing.T, x *Exporter) string {
	t.Helper()
	rec := httptest.NewRecorder()
	Handler(x).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// has checks for a sample line: metric name, labels in Prometheus' order
// (sorted by name), value.
func has(t *testing.T, body, line string) {
	t.Helper()
	if !strings.Contains(body, "\n"+line+"\n") {
		t.Errorf("missing %s", line)
	}
}

func TestExporterReportsBusyVhost(t *testing.T) {
	f := &fakeInspector{snap: fixture.Busy()}
	x := New(f, Options{Reach: ops.ReachVhost, Vhosts: []string{"/"}})
	body := scrape(t, x)
	rung := `{ladder="orders",layout="prefix",level="6",queue="orders.rung.06",vhost="/"}`
	has(t, body, `rungs_rung_messages_ready`+rung+` 412`)
	// orders.rung.06 is stuck (its head is older than the ladder holds a
	// message), not stalled: one meaning of each, as in the console. The
	// exporter used to report it as rung_stalled.
	has(t, body, `rungs_rung_stuck`+rung+` 1`)
	has(t, body, `rungs_rung_stalled`+rung+` 0`)
	has(t, body, `rungs_rung_ttl_seconds`+rung+` 64`)
	has(t, body, `rungs_rung_head_age_seconds`+rung+` 2460`)
	has(t, body, `rungs_ladder_messages_unroutable{ladder="orders",layout="prefix",vhost="/"} 3`)
	has(t, body, `rungs_ladder_drift{ladder="orders",layout="prefix",vhost="/"} 1`)
	has(t, body, `rungs_ladder_drift{ladder="billing",layout="suffix",vhost="/"} 0`)
	has(t, body, `rungs_ladder_forecast_unknown_messages{ladder="orders",layout="prefix",vhost="/"} 412`)
	has(t, body, `rungs_up 1`)
	// billing delivers to one queue only: its forecast names it.
	if !strings.Contains(body, `rungs_ladder_forecast_due_messages{bound="max",destination="billing.done",ladder="billing",layout="suffix",vhost="/",within="1m"}`) {
		t.Error("billing's forecast has no destination label")
	}
	if strings.Contains(body, "go_goroutines") {
		t.Error("the registry carries Go runtime metrics")
	}
}

// TestExporterOneRequestPerScrape: after the first snapshot each scrape is
// one statistics request, as in the console, until the queue set changes.
func TestExporterOneRequestPerScrape(t *testing.T) {
	f := &fakeInspector{snap: fixture.Healthy()}
	x := New(f, Options{Reach: ops.ReachVhost, Vhosts: []string{"/"}})
	scrape(t, x)
	if f.snapshots != 1 || f.stats != 0 {
		t.Fatalf("first scrape: %d snapshots, %d stats", f.snapshots, f.stats)
	}
	for i := 0; i < ops.SnapshotEvery-2; i++ {
		scrape(t, x)
	}
	if f.snapshots != 1 || f.stats != ops.SnapshotEvery-2 {
		t.Fatalf("later scrapes: %d snapshots, %d stats", f.snapshots, f.stats)
	}
	// A queue came: the next scrape re-reads the snapshot.
	f.mu.Lock()
	f.snap.Queues = append(f.snap.Queues, topology.Queue{Name: "new"})
	f.mu.Unlock()
	body := scrape(t, x)
	if f.snapshots != 2 {
		t.Errorf("queue set changed, %d snapshots", f.snapshots)
	}
	has(t, body, `rungs_scrape_snapshot{vhost="/"} 1`)
	if f.vhosts != 0 {
		t.Errorf("a fixed vhost was listed %d times", f.vhosts)
	}
}

// TestExporterNoPassword: a failed read says so in rungs_up and one log
// line, neither with the password.
func TestExporterNoPassword(t *testing.T) {
	f := &fakeInspector{snap: fixture.Healthy(), err: errors.New(`Get "http://admin:s3cret-pw@10.0.0.1:15672/api/queues/%2F": connection refused`)}
	var log bytes.Buffer
	x := New(f, Options{Reach: ops.ReachVhost, AllVhosts: true, Log: &log})
	body := scrape(t, x)
	has(t, body, "rungs_up 0")
	if strings.Contains(body+log.String(), "s3cret") {
		t.Errorf("the password leaked:\n%s\n%s", body, log.String())
	}
	if !strings.Contains(log.String(), "connection refused") {
		t.Errorf("log says %q", log.String())
	}
}

func TestExporterVhostErrorKeepsOthers(t *testing.T) {
	f := &fakeInspector{snap: fixture.Healthy()}
	x := New(f, Options{Reach: ops.ReachVhost, Vhosts: []string{"/"}, Log: io.Discard, Now: func() time.Time { return time.Unix(100, 0) }})
	scrape(t, x)
	f.mu.Lock()
	f.err = errors.New("boom")
	f.mu.Unlock()
	body := scrape(t, x)
	has(t, body, `rungs_vhost_up{vhost="/"} 0`)
	has(t, body, "rungs_up 0")
	has(t, body, "rungs_scrape_duration_seconds 0")
}

// A quorum rung whose expired messages are not dead-lettered for longer
// than the stall window is stalled by the console's rule; the exporter
// sees it across scrapes, with the waiting count.
func TestExporterStalledRung(t *testing.T) {
	f := &fakeInspector{snap: fixture.Stalled()}
	now := time.Unix(1_800_000_000, 0)
	x := New(f, Options{Reach: ops.ReachVhost, Vhosts: []string{"/"}, Interval: 5 * time.Second, Now: func() time.Time { return now }})
	rung := `{ladder="jobs",layout="prefix",level="3",queue="jobs.rung.03.1",vhost="/"}`
	body := scrape(t, x)
	has(t, body, `rungs_rung_messages_dlx`+rung+` 536`)
	has(t, body, `rungs_rung_stalled`+rung+` 0`)
	// A minute on: the busy rung's waiting count fell, the others did not.
	now = now.Add(time.Minute)
	f.mu.Lock()
	for i, q := range f.snap.Queues {
		if q.Name == "jobs.rung.02.6" {
			f.snap.Queues[i].Stats.Expired = 9
		}
	}
	f.mu.Unlock()
	body = scrape(t, x)
	has(t, body, `rungs_rung_stalled`+rung+` 1`)
	has(t, body, `rungs_rung_stuck`+rung+` 0`)
	has(t, body, `rungs_rung_stalled{ladder="jobs",layout="prefix",level="2",queue="jobs.rung.02.6",vhost="/"} 0`)
	if !strings.Contains(body, `rungs_ladder_forecast_unknown_messages{ladder="jobs",layout="prefix",vhost="/"} 1474`) {
		t.Errorf("the stalled rungs' messages are not unknown in the forecast:\n%s", grep(body, "forecast_unknown"))
	}
}

func grep(body, s string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// The saved drain capacity is exported for each ladder whose kind of
// rungs it was measured on, read once per round of snapshots, and a
// broker without one exports none (the alert stays silent).
func TestExporterSavedCapacity(t *testing.T) {
	f := &fakeInspector{snap: fixture.Busy(), caps: map[string]broker.DrainCapacity{"quorum": {HopsPerS: 4321}, "classic": {HopsPerS: 4321}}}
	x := New(f, Options{Reach: ops.ReachVhost, Vhosts: []string{"/"}})
	body := scrape(t, x)
	if !strings.Contains(body, "rungs_ladder_drain_capacity_hops_per_second{") || !strings.Contains(body, "} 4321\n") {
		t.Errorf("no saved capacity of 4321 in the scrape:\n%s", grepLines(body, "drain_capacity"))
	}
	for i := 1; i < ops.SnapshotEvery; i++ {
		scrape(t, x)
	}
	if f.capReads != 1 {
		t.Errorf("%d capacity reads in %d scrapes, want 1", f.capReads, ops.SnapshotEvery)
	}
	none := scrape(t, New(&fakeInspector{snap: fixture.Busy()}, Options{Reach: ops.ReachVhost, Vhosts: []string{"/"}}))
	if strings.Contains(none, "rungs_ladder_drain_capacity_hops_per_second{") {
		t.Errorf("a capacity exported where none is saved:\n%s", grepLines(none, "drain_capacity"))
	}
}

func grepLines(body, sub string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A Celery ladder whose emails queue is gone: across scrapes the held
// rung is a lost route, not a stall, with the destination and count.
func TestExporterLostRoute(t *testing.T) {
	f := &fakeInspector{snap: fixture.CeleryLost()}
	now := time.Unix(1_800_000_000, 0)
	x := New(f, Options{Reach: ops.ReachVhost, Vhosts: []string{"/"}, Interval: 5 * time.Second, Now: func() time.Time { return now }})
	scrape(t, x)
	now = now.Add(time.Minute)
	body := scrape(t, x)
	rung := `{ladder="celery",layout="celery",level="2",queue="celery_delayed_2",vhost="/"}`
	has(t, body, `rungs_rung_lost_route`+rung+` 1`)
	has(t, body, `rungs_rung_stalled`+rung+` 0`)
	has(t, body, `rungs_ladder_lost_routes{ladder="celery",layout="celery",vhost="/"} 1`)
	has(t, body, `rungs_ladder_lost_route_messages{destination="emails",ladder="celery",layout="celery",vhost="/"} 200`)
}

// A queue the ladder delivers to, read twice ten seconds apart: 150
// arrived (its depth rose by 100, its consumers took 50), so it grows at
// 10/s: 15/s in, 5/s drained. Before the second reading nothing is known
// and nothing is exported for it.
func TestExporterDestinationFlow(t *testing.T) {
	f := &fakeInspector{snap: fixture.Stalled()}
	now := time.Unix(1_800_000_000, 0)
	x := New(f, Options{Reach: ops.ReachVhost, Vhosts: []string{"/"}, Interval: 5 * time.Second, Now: func() time.Time { return now }})
	done := -1
	for i, q := range f.snap.Queues {
		if q.Name == "jobs.done" {
			done = i
		}
	}
	if done < 0 {
		t.Fatal("the fixture's ladder has no jobs.done")
	}
	if body := scrape(t, x); strings.Contains(body, "rungs_destination_") {
		t.Errorf("a destination flow from one reading:\n%s", grep(body, "rungs_destination_"))
	}
	now = now.Add(10 * time.Second)
	f.mu.Lock()
	f.snap.Queues[done].Stats.Ready += 100
	f.snap.Queues[done].Stats.Taken += 50
	f.mu.Unlock()
	body := scrape(t, x)
	q := `{ladder="jobs",layout="prefix",queue="jobs.done",vhost="/"}`
	has(t, body, `rungs_destination_in_messages_per_second`+q+` 15`)
	has(t, body, `rungs_destination_drained_messages_per_second`+q+` 5`)
	has(t, body, `rungs_destination_backlog_grows`+q+` 1`)
}
