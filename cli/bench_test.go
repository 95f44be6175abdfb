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
