package cli

import (
	"strings"
	"testing"
	"time"
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
		"phases":       {[]string{"--phases", "punctuality"}, ""},
		"bad phase":    {[]string{"--phases", "throughput,nonesuch"}, `no phase "nonesuch"`},
		"bad bits":     {[]string{"--delay-bits", "30"}, "30 delay bits"},
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
			bf.phases, _ = cmd.Flags().GetStringSlice("phases")
			bf.delayBits, _ = cmd.Flags().GetInt("delay-bits")
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
			case "phases":
				if len(o.Phases) != 1 || o.Phases[0] != "punctuality" {
					t.Fatalf("phases = %v", o.Phases)
				}
			case "defaults":
				if o.Smoke || o.Levels != 24 || o.Unit != time.Millisecond || len(o.Radixes) != 2 || len(o.Layouts) != 3 {
					t.Fatalf("default options %+v", o)
				}
			}
		})
	}
}

// The drain's flags are checked before any broker is met: a clear one-line
// usage error, nothing run.
func TestBenchDrainFlags(t *testing.T) {
	env := map[string]string{"RUNGS_URL": "amqp://guest:guest@127.0.0.1:1/", "RUNGS_MGMT_URL": "http://127.0.0.1:1"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--save"}, "--save goes with --drain"},
		{[]string{"bench", "--capacity", "100"}, "--capacity goes with --drain"},
		{[]string{"bench", "--dead-letter-strategy", "at-most-once"}, "--dead-letter-strategy goes with --drain"},
		{[]string{"bench", "--drain", "10", "--dead-letter-strategy", "sometimes"}, `--dead-letter-strategy "sometimes"`},
		{[]string{"bench", "--drain", "10", "--drain-delay", "soon"}, `--drain-delay "soon"`},
		{[]string{"bench", "--drain", "10", "--capacity", "-1"}, "--capacity -1"},
	} {
		code, _, stderr := run(t, env, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}
