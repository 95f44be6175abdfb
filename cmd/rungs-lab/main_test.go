package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker/brokertest"
	"github.com/rungs-dev/rungs/internal/lab"
)

func TestScaleFlags(t *testing.T) {
	cases := map[string]struct {
		sf   scaleFlags
		want string // a usage error's text, or "" for success
	}{
		"good":       {scaleFlags{n: 10, delays: "2s..1m", size: 64}, ""},
		"no scale":   {scaleFlags{n: 0, delays: "2s..1m"}, "-n 0"},
		"no range":   {scaleFlags{n: 10, delays: "5s"}, "MIN..MAX"},
		"bad delay":  {scaleFlags{n: 10, delays: "soon..1m"}, "-delays"},
		"min > max":  {scaleFlags{n: 10, delays: "1m..2s"}, "MIN ≤ MAX"},
		"zero delay": {scaleFlags{n: 10, delays: "0s..2s"}, "0 < MIN"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o, err := tc.sf.options()
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

// Bad input ends with status 2 and one line naming it, before the lab
// builds anything or reads the broker.
func TestBadInput(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"nonesuch"},
		{"scale", "-n", "0"},
		{"scale", "-delays", "5s"},
		{"beside", "-others", "10,0"},
		{"console", "-queues", "x"},
		{"console", "extra"},
	} {
		var stdout, stderr strings.Builder
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 || stdout.Len() != 0 {
			t.Errorf("rungs-lab %q: status %d, stdout %q, want 2 and nothing", args, code, stdout.String())
		}
		if stderr.Len() == 0 {
			t.Errorf("rungs-lab %q: nothing on stderr", args)
		}
	}
}

// The console phase through the lab's command line, as the test command
// runs it: a smoke run against the real broker, its report as JSON.
func TestConsoleCommand(t *testing.T) {
	brokertest.Require(t)
	var stdout, stderr strings.Builder
	code := run(t.Context(), []string{"console", "-smoke", "-queues", "100", "-json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("status %d: %s", code, stderr.String())
	}
	var rep lab.ConsoleReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, stdout.String())
	}
	if rep.Console.Queues != 100 || rep.Console.StatsRequests != 1 || len(rep.Problems) != 0 {
		t.Errorf("report %+v", rep)
	}
}
