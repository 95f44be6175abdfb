package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// run executes rungs in-process with an environment of its own.
func run(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, IO{
		In: strings.NewReader(""), Out: &out, Err: &errb,
		Getenv: func(k string) string { return env[k] },
	})
	return code, out.String(), errb.String()
}

// offline points rungs at ports where nothing listens, with a password that
// must never be printed.
var offline = map[string]string{
	"RUNGS_URL":      "amqp://admin:s3cret-pw@127.0.0.1:1/",
	"RUNGS_MGMT_URL": "http://admin:s3cret-pw@127.0.0.1:1",
}

func TestBadInputIsOneLineUsageError(t *testing.T) {
	cases := map[string][]string{
		"delay without unit":   {"trace", "15"},
		"negative delay":       {"trace", "-5s"},
		"garbage delay":        {"trace", "soon"},
		"over the maximum":     {"trace", "1h", "--unit", "1ms", "--levels", "4"},
		"unknown layout":       {"plan", "--layout", "spiral"},
		"bad queue type":       {"plan", "--queue-type", "stream"},
		"bad unit":             {"plan", "--unit", "1us"},
		"bad radix":            {"plan", "--radix", "3"},
		"levels and max":       {"plan", "--levels", "4", "--max-delay", "1h"},
		"suffix destination":   {"trace", "5s", "--layout", "suffix", "--to", "q"},
		"wildcard dest":        {"trace", "5s", "--to", "a.#"},
		"key and delay":        {"trace", "5s", "--routing-key", "0.1"},
		"foreign key":          {"trace", "--routing-key", "banana", "--levels", "4"},
		"count zero":           {"publish", "--delay", "1s", "--count", "0"},
		"zero rate":            {"publish", "--delay", "1s", "--rate", "0"},
		"rate per fortnight":   {"publish", "--delay", "1s", "--rate", "5/fortnight"},
		"bad header":           {"publish", "--delay", "1s", "--header", "novalue"},
		"missing body file":    {"publish", "--delay", "1s", "--body", "@/nonexistent/file"},
		"no delay":             {"publish"},
		"unknown flag":         {"status", "--frobnicate"},
		"unknown command":      {"frobnicate"},
		"purge without queue":  {"purge"},
		"nsb unit":             {"plan", "--layout", "nsb", "--unit", "1ms"},
		"record without drain": {"bench", "--record", "/nonexistent/storm.json"},
		"record unwritable":    {"bench", "--drain", "10", "--record", "/nonexistent/storm.json"},
		"inflow without drain": {"bench", "--inflow", "100/s"},
		"inflow not a rate":    {"bench", "--drain", "10", "--inflow", "fast"},
		"inflow for nothing":   {"bench", "--drain", "10", "--inflow", "100/s", "--inflow-for", "0s"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errs := run(t, offline, args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitUsage, out, errs)
			}
			if n := strings.Count(strings.TrimRight(errs, "\n"), "\n"); n != 0 || !strings.HasPrefix(errs, "rungs: ") {
				t.Errorf("want one line starting with 'rungs: ', got %q", errs)
			}
			if out != "" {
				t.Errorf("printed to stdout on bad input: %q", out)
			}
		})
	}
}

func TestReadOnlyRefusesBeforeConnecting(t *testing.T) {
	for _, args := range [][]string{
		{"apply"}, {"publish", "--delay", "1s"}, {"purge", "q", "--yes"}, {"teardown", "--yes"},
	} {
		code, _, errs := run(t, offline, append(args, "--read-only")...)
		if code == ExitOK || !strings.Contains(errs, "read-only") || strings.Contains(errs, "connection refused") {
			t.Errorf("%v --read-only: exit %d, %q", args, code, errs)
		}
	}
}

func TestPasswordNeverPrinted(t *testing.T) {
	for _, args := range [][]string{
		{"status"}, {"apply"}, {"plan"}, {"discover"}, {"--help"}, {"publish", "--delay", "1s"},
		{"status", "--url", "amqp://admin:s3cret-pw@127.0.0.1:1/"},
		{"status", "--url", "amqp://admin:s3cret-pw@[bad"},
		{"status", "--mgmt-url", "http://admin:s3cret-pw@%zz"},
	} {
		_, out, errs := run(t, offline, args...)
		if strings.Contains(out+errs, "s3cret") {
			t.Errorf("%v printed the password:\n%s%s", args, out, errs)
		}
	}
}

func TestTraceWorksOfflineAndSaysItWasNotChecked(t *testing.T) {
	code, out, _ := run(t, offline, "trace", "5s", "--ladder", "jobs", "--levels", "4", "--radix", "2", "--to", "work")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"key      0.1.0.1.work", "jobs.rung.02", "jobs.rung.00", "→    work", "not checked against the broker"} {
		if !strings.Contains(out, want) {
			t.Errorf("trace output lacks %q:\n%s", want, out)
		}
	}
}

func TestTraceRoundsUpAndDecodesKeys(t *testing.T) {
	_, out, _ := run(t, offline, "trace", "1001ms", "--levels", "4", "--radix", "2")
	if !strings.Contains(out, "delay    2s (1.001s rounded up to the 1s unit)") {
		t.Errorf("rounding not reported:\n%s", out)
	}
	code, out, _ := run(t, offline, "trace", "--routing-key", "1.0.0.1.orders", "--levels", "4", "--radix", "2", "--json")
	if code != ExitOK || !strings.Contains(out, `"delay_ms": 9000`) || !strings.Contains(out, `"destination": "orders"`) {
		t.Errorf("exit %d, decode:\n%s", code, out)
	}
}

func TestPurgeAndTeardownNeedConfirmation(t *testing.T) {
	v := view{IO: IO{In: strings.NewReader("wrong\n"), Interactive: true, Err: &bytes.Buffer{}}}
	if err := v.confirm(false, "purge q", "q"); err == nil {
		t.Error("a wrong typed word confirmed")
	}
	v = view{IO: IO{In: strings.NewReader("q\n"), Interactive: true, Err: &bytes.Buffer{}}}
	if err := v.confirm(false, "purge q", "q"); err != nil {
		t.Errorf("typed confirmation refused: %v", err)
	}
	v = view{IO: IO{In: strings.NewReader("q\n"), Interactive: false, Err: &bytes.Buffer{}}}
	if err := v.confirm(false, "purge q", "q"); err == nil || !strings.Contains(err.Error(), "--yes") {
		t.Errorf("non-interactive purge without --yes: %v", err)
	}
}

func TestVersionAndHelpHaveExamples(t *testing.T) {
	if code, out, _ := run(t, offline, "--version"); code != 0 || !strings.Contains(out, "rungs version") {
		t.Errorf("--version: %d %q", code, out)
	}
	for _, c := range []string{"apply", "plan", "trace", "publish", "status", "discover", "purge", "teardown"} {
		_, out, _ := run(t, offline, c, "--help")
		if !strings.Contains(out, "Examples:") {
			t.Errorf("%s --help has no examples", c)
		}
	}
}

// plan shows what the same range would cost in every radix.
func TestPlanShowsRadixCosts(t *testing.T) {
	_, out, _ := run(t, offline, "plan", "--levels", "12", "--radix", "2")
	for _, want := range []string{"radix  levels  rungs  bindings  mean hops  max hops", "16     3       45"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
	if this := thisLadderRow(out); !strings.HasPrefix(this, "2      12      12 ") {
		t.Errorf("plan marks %q as this ladder, want the radix 2 row:\n%s", this, out)
	}
}

// thisLadderRow is the radix cost table's row marked as the planned ladder.
func thisLadderRow(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "← this ladder") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// Without shape flags, plan describes the default direct ladder: radix 16,
// 7 levels, the range of 28 binary levels (2^28 - 1 units).
func TestPlanDefaultsToRadix16(t *testing.T) {
	code, out, errs := run(t, offline, "plan")
	if code != ExitError || !strings.Contains(errs, "drift not checked") {
		t.Fatalf("offline plan: exit %d, want %d (drift not checked)\n%s%s", code, ExitError, out, errs)
	}
	for _, want := range []string{`direct ladder "rungs" in vhost /: 7 levels of 1s, radix 16, max delay 3106d21h24m15s, quorum queues`, "107 queues"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
	if this := thisLadderRow(out); !strings.HasPrefix(this, "16     7       105 ") {
		t.Errorf("plan marks %q as this ladder, want the radix 16 row:\n%s", this, out)
	}
	_, out, _ = run(t, offline, "plan", "--json")
	var p struct {
		Ladder struct {
			Layout     string `json:"layout"`
			Radix      int    `json:"radix"`
			Levels     int    `json:"levels"`
			MaxDelayMS int64  `json:"max_delay_ms"`
		} `json:"ladder"`
		Queues []struct {
			Name string `json:"name"`
		} `json:"queues"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	if l := p.Ladder; l.Layout != "direct" || l.Radix != 16 || l.Levels != 7 || l.MaxDelayMS != (1<<28-1)*1000 {
		t.Errorf("plan --json ladder = %+v, want direct, radix 16, 7 levels, max %d ms", l, (1<<28-1)*1000)
	}
	names := map[string]bool{}
	for _, q := range p.Queues {
		names[q.Name] = true
	}
	for _, want := range []string{"rungs.rung.06.f", "rungs.rung.00.1", "rungs.done"} {
		if !names[want] {
			t.Errorf("plan --json has no queue %s", want)
		}
	}
	if names["rungs.rung.00"] {
		t.Errorf("plan --json has the binary rung rungs.rung.00")
	}
	// trace uses the same default.
	code, out, _ = run(t, offline, "trace", "5s", "--to", "work")
	if code != ExitOK || !strings.Contains(out, "key      0.0.0.0.0.0.5.work") || !strings.Contains(out, "rungs.rung.00.5") {
		t.Errorf("trace on the default ladder: exit %d\n%s", code, out)
	}
}

// The radix default depends on the layout: a layout that is binary needs
// no --radix, and --max-delay counts levels in the default radix.
func TestPlanRadixDefaultFollowsLayout(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"suffix":           {[]string{"--layout", "suffix"}, `suffix ladder "rungs" in vhost /: 28 levels of 1s, max delay 3106d21h24m15s`},
		"suffix max-delay": {[]string{"--layout", "suffix", "--max-delay", "1h"}, `suffix ladder "rungs" in vhost /: 12 levels of 1s, max delay 1h8m15s`},
		"nsb":              {[]string{"--layout", "nsb"}, `nsb ladder "nsb.v2" in vhost /: 28 levels of 1s, max delay 3106d21h24m15s`},
		"celery":           {[]string{"--layout", "celery"}, `celery ladder "celery" in vhost /: 28 levels of 1s, max delay 3106d21h24m15s`},
		"max-delay":        {[]string{"--max-delay", "1h"}, `direct ladder "rungs" in vhost /: 3 levels of 1s, radix 16, max delay 1h8m15s`},
		"max-delay radix":  {[]string{"--max-delay", "1h", "--radix", "2"}, `direct ladder "rungs" in vhost /: 12 levels of 1s, max delay 1h8m15s`},
		"radix alone":      {[]string{"--radix", "4"}, `direct ladder "rungs" in vhost /: 14 levels of 1s, radix 4, max delay 3106d21h24m15s`},
		"binary alone":     {[]string{"--radix", "2"}, `direct ladder "rungs" in vhost /: 28 levels of 1s, max delay 3106d21h24m15s`},
		"prefix":           {[]string{"--layout", "prefix"}, `prefix ladder "rungs" in vhost /: 7 levels of 1s, radix 16, max delay 3106d21h24m15s`},
		"prefix max-delay": {[]string{"--layout", "prefix", "--max-delay", "1h"}, `prefix ladder "rungs" in vhost /: 3 levels of 1s, radix 16, max delay 1h8m15s`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errs := run(t, offline, append([]string{"plan"}, tc.args...)...)
			if code != ExitError || strings.Contains(errs, "binary") || !strings.Contains(errs, "drift not checked") {
				t.Errorf("exit %d, want %d (drift not checked)\n%s", code, ExitError, errs)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("plan output lacks %q:\n%s", tc.want, out)
			}
		})
	}
}
