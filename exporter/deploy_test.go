package exporter

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/fixture"
	"github.com/rungs-dev/rungs/ops"
)

const (
	rulesFile     = "../deploy/prometheus/rungs-alerts.yml"
	dashboardFile = "../deploy/grafana/rungs-dashboard.json"
)

var metricName = regexp.MustCompile(`\brungs_[a-z_]+\b`)

// exported lists the metric names a scrape of a busy vhost carries.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	// A cluster's: the membership metrics exist only where reported.
	snap := fixture.Busy()
	for i := range snap.Queues {
		s := &snap.Queues[i].Stats
		s.Leader, s.Members, s.Online = "rabbit@a", []string{"rabbit@a", "rabbit@b", "rabbit@c"}, []string{"rabbit@a", "rabbit@b"}
	}
	caps := map[string]broker.DrainCapacity{"quorum": {HopsPerS: 5000}, "classic": {HopsPerS: 5000}}
	// Read twice, the done queues filling in between: a destination's
	// flow is exported only once two readings show it moving.
	now := time.Unix(1_800_000_000, 0)
	f := &fakeInspector{snap: snap, caps: caps}
	x := New(f, Options{Reach: ops.ReachVhost, Vhosts: []string{"/"}, Interval: 5 * time.Second, Now: func() time.Time { return now }})
	scrape(t, x)
	now = now.Add(10 * time.Second)
	f.mu.Lock()
	for i := range f.snap.Queues {
		if strings.HasSuffix(f.snap.Queues[i].Name, ".done") {
			f.snap.Queues[i].Stats.Ready += 10
		}
	}
	f.mu.Unlock()
	body := scrape(t, x)
	names := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "# TYPE ") {
			names[strings.Fields(line)[2]] = true
		}
	}
	if len(names) < 10 {
		t.Fatalf("only %d metrics exported", len(names))
	}
	return names
}

// unknown returns the rungs_ metrics text names that the exporter does not export.
func unknown(text string, names map[string]bool) []string {
	var bad []string
	for _, m := range metricName.FindAllString(text, -1) {
		if !names[m] {
			bad = append(bad, m)
		}
	}
	sort.Strings(bad)
	return bad
}

func TestAlertRulesCheckAndUseExportedMetrics(t *testing.T) {
	promtool := needTool(t, "promtool")
	if out, err := exec.Command(promtool, "check", "rules", rulesFile).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	text, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if bad := unknown(string(text), exported(t)); len(bad) > 0 {
		t.Errorf("the rules use metrics the exporter does not export: %v", bad)
	}
	for _, alert := range []string{"RungsRungStalled", "RungsLadderBacklogged", "RungsLadderBacklogOverCapacity", "RungsUnroutableGrowing", "RungsLadderDrift"} {
		if !strings.Contains(string(text), "alert: "+alert+"\n") {
			t.Errorf("no %s alert", alert)
		}
	}
}

// TestDashboardUsesExportedMetrics parses the Grafana dashboard and checks
// that every panel queries something and only metrics the exporter exports.
func TestDashboardUsesExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			ID      int    `json:"id"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	names := exported(t)
	if len(dash.Panels) == 0 {
		t.Fatal("no panels")
	}
	ids := map[int]bool{}
	for _, p := range dash.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, tg := range p.Targets {
			if len(metricName.FindAllString(tg.Expr, -1)) == 0 {
				t.Errorf("panel %q: %q uses no rungs metric", p.Title, tg.Expr)
			}
			if bad := unknown(tg.Expr, names); len(bad) > 0 {
				t.Errorf("panel %q: %q uses metrics the exporter does not export: %v", p.Title, tg.Expr, bad)
			}
			if strings.Count(tg.Expr, "(") != strings.Count(tg.Expr, ")") || strings.Count(tg.Expr, "{") != strings.Count(tg.Expr, "}") {
				t.Errorf("panel %q: unbalanced %q", p.Title, tg.Expr)
			}
		}
	}
	for _, v := range dash.Templating.List {
		if q, ok := v.Query.(string); ok {
			if bad := unknown(q, names); len(bad) > 0 {
				t.Errorf("variable %s: %v", v.Name, bad)
			}
		}
	}
}
