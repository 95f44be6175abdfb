package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/topology"
)

func TestBenchFlags(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string // a usage error's text, or "" for success
	}{
		"defaults":     {nil, ""},
		"loads":        {[]string{"--loads", "50,max"}, ""},
		"smoke":        {[]string{"--smoke", "--duration", "2s"}, ""},
		"bad load":     {[]string{"--loads", "fast"}, `--loads: "fast"`},
		"bad radix":    {[]string{"--radix", "2,3"}, "--radix 3"},
		"bad duration": {[]string{"--duration", "soon"}, "--duration"},
		"no rounds":    {[]string{"--rounds", "0"}, "--rounds"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := &env{}
			cmd := e.benchCommand()
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			var bf benchFlags
			bf.duration, _ = cmd.Flags().GetString("duration")
			bf.warmup, _ = cmd.Flags().GetString("warmup")
			bf.unit, _ = cmd.Flags().GetString("unit")
			bf.loads, _ = cmd.Flags().GetStringSlice("loads")
			bf.radixes, _ = cmd.Flags().GetIntSlice("radix")
			bf.rounds, _ = cmd.Flags().GetInt("rounds")
			bf.smoke, _ = cmd.Flags().GetBool("smoke")
			o, err := bf.options(cmd)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch name {
			case "loads":
				if len(o.Loads) != 2 || o.Loads[0] != 50 || o.Loads[1] != 0 {
					t.Fatalf("loads = %v", o.Loads)
				}
			case "smoke":
				if !o.Smoke || o.MaxMessages == 0 || o.Duration != 2*time.Second {
					t.Fatalf("smoke options %+v", o)
				}
			case "defaults":
				if o.Smoke || o.Levels != 24 || o.Unit != time.Millisecond || len(o.Radixes) != 2 || len(o.Layouts) != 3 {
					t.Fatalf("default options %+v", o)
				}
			}
		})
	}
}

// TestBenchScale runs the scale phase at a small N against the real broker,
// as users run it (the rungs binary, whose status and replay it measures),
// and checks correctness only: every message delivered once and none
// early, in the ladder apply declares by default on this broker's version,
// and a replay killed with SIGKILL that lost no dead letter. Its timings
// are not assertions.
func TestBenchScale(t *testing.T) {
	t.Parallel()
	env, _ := brokerEnv(t)
	bin, err := buildRungs()
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	cmd := exec.Command(bin, "bench", "--scale", strconv.Itoa(n), "--scale-delays", "1s..3s", "--json")
	cmd.Env = append(os.Environ(), "RUNGS_URL="+env["RUNGS_URL"], "RUNGS_MGMT_URL="+env["RUNGS_MGMT_URL"])
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	t.Log(stderr.String())
	var rep bench.ScaleReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("bench --scale: %v (%v)\n%s", err, runErr, stdout.String())
	}
	for _, p := range rep.Problems {
		t.Error(p)
	}
	if runErr != nil {
		t.Errorf("bench --scale: %v", runErr)
	}
	if rep.Confirmed != n || rep.Delivered != n || rep.Duplicates != 0 || rep.Early != 0 || rep.Lost != 0 {
		t.Errorf("confirmed %d, delivered %d of %d, %d duplicates, %d early, %d lost", rep.Confirmed, rep.Delivered, n, rep.Duplicates, rep.Early, rep.Lost)
	}
	v, ok := topology.ParseVersion(rep.Broker.RabbitMQ)
	if !ok {
		t.Fatalf("broker version %q", rep.Broker.RabbitMQ)
	}
	// Measured: before 3.13 a quorum ladder is prefix (BCC lost on a
	// dead-letter retry), from 3.13.3 direct; both radix 16.
	want := scaleLayoutWant(v)
	if l := rep.Ladder; l.Layout != want || l.QueueType != string(topology.Quorum) || l.Radix != topology.DefaultRadix {
		t.Errorf("RabbitMQ %s: scale ladder %+v, want %s, quorum, radix %d", v, l, want, topology.DefaultRadix)
	}
	if len(rep.Status) != 2 || len(rep.Refresh) != 2 {
		t.Errorf("%d status and %d refresh measurements, want 2 of each", len(rep.Status), len(rep.Refresh))
	}
	for _, c := range append(append([]bench.CommandCost(nil), rep.Status...), rep.Refresh...) {
		if c.Err != "" || c.Requests == 0 || c.Bytes == 0 {
			t.Errorf("read cost %+v", c)
		}
	}
	rc := rep.Replay
	if rc == nil {
		t.Fatal("no replay measured")
	}
	if rc.Lost != 0 || rc.Delivered != n || rc.KilledAt == 0 || rc.AfterKillSource == 0 || rc.AfterKillSource+rc.AfterKillTarget < n {
		t.Errorf("replay %+v", *rc)
	}
}

// scaleLayoutWant is the layout of a new quorum ladder on a broker of
// version v, as measured on 3.10 and 4.0.
func scaleLayoutWant(v topology.Version) string {
	if v.LosesBCCOnDeadLetterRetry() {
		return "prefix"
	}
	return "direct"
}

func TestBenchScaleFlags(t *testing.T) {
	cases := map[string]struct {
		bf   benchFlags
		want string // a usage error's text, or "" for success
	}{
		"good":       {benchFlags{scale: 10, scaleDelays: "2s..1m", size: 64}, ""},
		"no scale":   {benchFlags{scale: 0, scaleDelays: "2s..1m"}, "--scale 0"},
		"no range":   {benchFlags{scale: 10, scaleDelays: "5s"}, "MIN..MAX"},
		"bad delay":  {benchFlags{scale: 10, scaleDelays: "soon..1m"}, "--scale-delays"},
		"min > max":  {benchFlags{scale: 10, scaleDelays: "1m..2s"}, "MIN ≤ MAX"},
		"zero delay": {benchFlags{scale: 10, scaleDelays: "0s..2s"}, "0 < MIN"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := tc.bf.scaleOptions()
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.N != 10 || o.MinDelay != 2*time.Second || o.MaxDelay != time.Minute || o.Size != 64 {
				t.Fatalf("options %+v", o)
			}
		})
	}
}
