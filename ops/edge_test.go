package ops_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker/brokertest"
)

// TestEdgeBesideOthers times the real binaries named in RUNGS_EDGE_BINS
// (comma-separated) on one ladder's operations in a vhost alone, then
// beside RUNGS_EDGE_OTHERS (default 10,000) other queues: what an
// operation that reads by name costs should not follow the vhost. It is
// a measurement, not a check, so it runs only when asked and prints the
// medians of three runs and their ratios; the vhost goes when it ends.
func TestEdgeBesideOthers(t *testing.T) {
	bins := os.Getenv("RUNGS_EDGE_BINS")
	if bins == "" {
		t.Skip("RUNGS_EDGE_BINS names the binaries to time")
	}
	others := 10000
	if s := os.Getenv("RUNGS_EDGE_OTHERS"); s != "" {
		fmt.Sscan(s, &others)
	}
	cfg := brokertest.NewVhost(t)
	paths := strings.Split(bins, ",")
	run := func(bin string, args ...string) (string, error) {
		cmd := exec.Command(bin, append(args, "--vhost", cfg.Vhost)...)
		cmd.Env = append(os.Environ(), "RUNGS_URL="+cfg.URL, "RUNGS_MGMT_URL="+cfg.MgmtURL)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	must := func(args ...string) string {
		out, err := run(paths[0], append(args, "--timeout", "2m")...)
		if err != nil {
			t.Fatalf("rungs %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	apply := []string{"apply", "--ladder", "edge"}
	if qt := os.Getenv("RUNGS_EDGE_QUEUE_TYPE"); qt != "" {
		apply = append(apply, "--queue-type", qt) // a loaded 3.10 nacks into fresh quorum rungs
	}
	must(apply...)
	must("publish", "--ladder", "edge", "--delay", "1h", "--count", "3")
	var tr struct {
		Hops []struct {
			Queue string `json:"queue"`
		} `json:"hops"`
	}
	if err := json.Unmarshal([]byte(must("trace", "1h", "--ladder", "edge", "--json")), &tr); err != nil || len(tr.Hops) == 0 {
		t.Fatalf("trace: %v", err)
	}
	rung := tr.Hops[0].Queue
	must("apply", "--ladder", "edgeq", "--queue-type", "classic")
	cmds := [][]string{
		{"purge", "edgeq.done", "--yes"},
		{"peek", rung, "--force", "--count", "3"},
		{"replay", "--from", "edgeq.done", "--to-ladder", "edge", "--delay", "1m", "--dry-run"},
		{"unstall", "--ladder", "edge", "--yes"},
		{"publish", "--ladder", "edge", "--delay", "1h"},
		{"plan", "--ladder", "edge"},
	}
	if os.Getenv("RUNGS_EDGE_SHORT") != "" {
		cmds = cmds[:4] // the four issue 22 names
	}
	median := func(bin string, args []string) time.Duration {
		var ds []time.Duration
		for range 3 {
			start := time.Now()
			_, _ = run(bin, args...)
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		return ds[1]
	}
	alone := map[string]time.Duration{}
	for _, bin := range paths {
		for _, c := range cmds {
			alone[bin+" "+c[0]] = median(bin, c)
		}
	}
	brokertest.DeclareOthers(t, cfg, "other.", others)
	for _, bin := range paths {
		for _, c := range cmds {
			beside := median(bin, c)
			a := alone[bin+" "+c[0]]
			t.Logf("%-40s %-8s alone %6dms  beside %d: %6dms  %.1fx", bin, c[0], a.Milliseconds(), others, beside.Milliseconds(), float64(beside)/float64(a))
		}
	}
}
