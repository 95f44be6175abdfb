package broker

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/topology"
)

// readFixture parses a definitions export from the shared testdata.
func readFixture(t *testing.T, name string) topology.Snapshot {
	t.Helper()
	data, err := os.ReadFile("../testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := ParseDefinitions(data, "/")
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// The fixtures are what Celery and NServiceBus leave on a broker (declared
// as their public sources do, exported by RabbitMQ 3.10.8; see
// testdata/foreign-fixtures.sh). Discovery must find each ladder with its
// real shape and destinations, report no drift, and route a delay over the
// fixture's own bindings exactly as the trace says.
func TestForeignFixturesAreDiscovered(t *testing.T) {
	type want struct {
		layout, qtype, targets string
		dest                   string // a destination to route a delay to
	}
	cases := map[string]map[string]want{
		"celery-definitions.json": {
			"celery":         {"celery", "quorum", "celery,emails", "emails"},
			"billing_celery": {"celery", "classic", "invoices", "invoices"},
		},
		"nsb1-definitions.json": {
			"nsb":    {"nsb1", "classic", "Billing,Sales", "Sales"},
			"nsb.v2": {"nsb", "quorum", "Sales", "Sales"},
		},
	}
	for file, ladders := range cases {
		t.Run(file, func(t *testing.T) {
			snap := readFixture(t, file)
			found := topology.Discover(snap)
			if len(found) != len(ladders) {
				t.Fatalf("found %d ladders: %+v", len(found), found)
			}
			g := topology.NewGraph(snap)
			for _, f := range found {
				l := f.Ladder
				w, ok := ladders[l.Name]
				if !ok || l.Layout != w.layout || string(l.QueueType) != w.qtype || strings.Join(l.Targets, ",") != w.targets {
					t.Errorf("found %s: %s %s targets %v; want %+v", l.Name, l.Layout, l.QueueType, l.Targets, w)
				}
				if l.Unit != time.Second || l.Levels != 28 || len(f.Drift) != 0 {
					t.Errorf("%s: unit %v, %d levels, drift %v", l.Name, l.Unit, l.Levels, f.Drift)
				}
				tr, err := l.Trace(90*time.Second, w.dest)
				if err != nil {
					t.Fatal(err)
				}
				steps, err := g.Walk(tr.Exchange, tr.Key, tr.BCC...)
				if err != nil || len(steps) != len(tr.Hops)+1 || steps[len(steps)-1].Queue != w.dest {
					t.Fatalf("%s: %s walks %v, %v; trace %s", l.Name, tr.Key, steps, err, tr)
				}
				for i, h := range tr.Hops {
					if steps[i].Queue != h.Queue || steps[i].TTL != h.TTL {
						t.Fatalf("%s: hop %d simulated %s, traced %s", l.Name, i, steps[i].Queue, h.Queue)
					}
				}
			}
		})
	}
}

// A plan written as definitions and read back is the plan: nothing is lost
// or changed in the format, for every layout.
func TestPlanDefinitionsRoundTrip(t *testing.T) {
	for _, l := range []topology.Ladder{
		{Name: "jobs", Levels: 6, Radix: 2, Unit: 10 * time.Millisecond, QueueType: topology.Quorum, Targets: []string{"work"}},
		{Name: "hex", Targets: []string{"work"}}, // the default: radix 16, 7 levels
		{Name: "seed", Layout: "suffix", Levels: 4},
		{Layout: "nsb", Targets: []string{"Sales"}},
		{Layout: "nsb1"},
		{Layout: "celery", Name: "app_celery", Targets: []string{"celery"}},
	} {
		l, err := l.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(PlanDefinitions(l.Plan(), "v/1"))
		if err != nil {
			t.Fatal(err)
		}
		snap, err := ParseDefinitions(data, "v/1")
		if err != nil {
			t.Fatal(err)
		}
		if d := topology.Diff(l.Plan(), snap); len(d) != 0 {
			t.Errorf("%s: round trip drifts: %v", l, d)
		}
		if other, _ := ParseDefinitions(data, "/"); len(other.Queues) != 0 {
			t.Errorf("%s: objects of vhost v/1 read into /", l)
		}
	}
}
