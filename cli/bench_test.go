package cli

import (
	"strings"
	"testing"
)

// bench's flags are checked before any broker is met: a clear one-line
// usage error; good ones go on to the broker (here none).
func TestBenchFlags(t *testing.T) {
	env := map[string]string{"RUNGS_URL": "amqp://guest:guest@127.0.0.1:1/", "RUNGS_MGMT_URL": "http://127.0.0.1:1"}
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
			code, _, stderr := run(t, env, append([]string{"bench"}, tc.args...)...)
			if tc.want == "" {
				if code == ExitUsage {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				return
			}
			if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Fatalf("exit %d, stderr %q; want %d and one line with %q", code, stderr, ExitUsage, tc.want)
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
		{[]string{"bench", "--bridge", "0"}, "--bridge 0: want at least 1"},
		{[]string{"bench", "--bridge", "10", "--drain", "10"}, "--bridge and --drain are runs of their own"},
		{[]string{"bench", "--bridge", "10", "--save"}, "--save goes with --drain"},
		{[]string{"bench", "--bridge", "10", "--rounds", "0"}, "--rounds 0"},
	} {
		code, _, stderr := run(t, env, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}
