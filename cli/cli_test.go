package cli

import (
	"bytes"
	"context"
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
		"delay without unit":  {"trace", "15"},
		"negative delay":      {"trace", "-5s"},
		"garbage delay":       {"trace", "soon"},
		"over the maximum":    {"trace", "1h", "--unit", "1ms", "--levels", "4"},
		"unknown layout":      {"plan", "--layout", "spiral"},
		"bad queue type":      {"plan", "--queue-type", "stream"},
		"bad unit":            {"plan", "--unit", "1us"},
		"bad radix":           {"plan", "--radix", "3"},
		"levels and max":      {"plan", "--levels", "4", "--max-delay", "1h"},
		"suffix destination":  {"trace", "5s", "--layout", "suffix", "--to", "q"},
		"wildcard dest":       {"trace", "5s", "--to", "a.#"},
		"key and delay":       {"trace", "5s", "--routing-key", "0.1"},
		"foreign key":         {"trace", "--routing-key", "banana", "--levels", "4"},
		"count zero":          {"publish", "--delay", "1s", "--count", "0"},
		"bad header":          {"publish", "--delay", "1s", "--header", "novalue"},
		"missing body file":   {"publish", "--delay", "1s", "--body", "@/nonexistent/file"},
		"no delay":            {"publish"},
		"unknown flag":        {"status", "--frobnicate"},
		"unknown command":     {"frobnicate"},
		"purge without queue": {"purge"},
		"nsb unit":            {"plan", "--layout", "nsb", "--unit", "1ms"},
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
	code, out, _ := run(t, offline, "trace", "5s", "--ladder", "jobs", "--levels", "4", "--to", "work")
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
	_, out, _ := run(t, offline, "trace", "1001ms", "--levels", "4")
	if !strings.Contains(out, "delay    2s (1.001s rounded up to the 1s unit)") {
		t.Errorf("rounding not reported:\n%s", out)
	}
	code, out, _ := run(t, offline, "trace", "--routing-key", "1.0.0.1.orders", "--levels", "4", "--json")
	if code != ExitOK || !strings.Contains(out, `"delay_ms": 9000`) || !strings.Contains(out, `"destination": "orders"`) {
		t.Errorf("exit %d, decode:\n%s", code, out)
	}
}

func TestPurgeAndTeardownNeedConfirmation(t *testing.T) {
	e := &env{IO: IO{In: strings.NewReader("wrong\n"), Interactive: true, Err: &bytes.Buffer{}}}
	if err := e.confirm("purge q", "q"); err == nil {
		t.Error("a wrong typed word confirmed")
	}
	e = &env{IO: IO{In: strings.NewReader("q\n"), Interactive: true, Err: &bytes.Buffer{}}}
	if err := e.confirm("purge q", "q"); err != nil {
		t.Errorf("typed confirmation refused: %v", err)
	}
	e = &env{IO: IO{In: strings.NewReader("q\n"), Interactive: false, Err: &bytes.Buffer{}}}
	if err := e.confirm("purge q", "q"); err == nil || !strings.Contains(err.Error(), "--yes") {
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
	_, out, _ := run(t, offline, "plan", "--levels", "12")
	for _, want := range []string{"radix  levels  rungs  bindings  mean hops  max hops", "← this ladder", "16     3       45"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q:\n%s", want, out)
		}
	}
}
