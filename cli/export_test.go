package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/rungs-dev/rungs/broker"
)

// The Terraform and definitions a small ladder exports, byte for byte
// (regenerate with go test ./cli -run Golden -update and read the diff).
func TestExportGolden(t *testing.T) {
	cases := map[string][]string{
		"direct.tf":   {"export", "--ladder", "jobs", "--levels", "3", "--radix", "2", "--unit", "1s", "--target", "work", "--format", "terraform"},
		"direct.json": {"export", "--ladder", "jobs", "--levels", "3", "--radix", "2", "--unit", "1s", "--target", "work"},
		"prefix.tf":   {"export", "--ladder", "jobs", "--layout", "prefix", "--levels", "3", "--radix", "2", "--unit", "1s", "--target", "work", "--format", "terraform"},
		"prefix.json": {"export", "--ladder", "jobs", "--layout", "prefix", "--levels", "3", "--radix", "2", "--unit", "1s", "--target", "work"},
		"suffix.tf":   {"export", "--ladder", "seed", "--layout", "suffix", "--levels", "2", "--queue-type", "quorum", "--format", "terraform", "--vhost", "apps"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, errs := run(t, offline, args...)
			if code != ExitOK || !strings.Contains(errs, "exporting the ladder the flags describe") {
				t.Fatalf("exit %d: %s", code, errs)
			}
			golden.RequireEqual(t, []byte(out))
		})
	}
}

// No terraform binary can load the provider here (no registry), so the
// output is checked structurally: balanced braces, every resource
// declared once, every reference pointing at a declared resource, every
// object of the plan present. Where terraform is installed, `terraform fmt
// -check` also parses it and confirms it is formatted as terraform would.
func TestTerraformExportIsWellFormed(t *testing.T) {
	for _, args := range [][]string{
		{"--layout", "prefix", "--levels", "5", "--radix", "4", "--queue-type", "quorum", "--target", "a.b", "--target", "a_b"},
		{"--layout", "celery", "--queue-type", "quorum", "--target", "celery", "--ladder", "billing_celery"},
		{"--layout", "nsb1", "--target", "Sales"},
		{"--layout", "suffix", "--ladder", "we\"ird${x}", "--levels", "3"},
	} {
		code, tf, errs := run(t, offline, append([]string{"export", "--format", "terraform"}, args...)...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d %s", args, code, errs)
		}
		if strings.Count(tf, "{") != strings.Count(tf, "}") {
			t.Errorf("%v: unbalanced braces", args)
		}
		decl := regexp.MustCompile(`(?m)^resource "(rabbitmq_\w+)" "([A-Za-z_][\w-]*)" \{$`)
		declared := map[string]bool{}
		for _, m := range decl.FindAllStringSubmatch(tf, -1) {
			id := m[1] + "." + m[2]
			if declared[id] {
				t.Errorf("%v: %s declared twice", args, id)
			}
			declared[id] = true
		}
		for _, m := range regexp.MustCompile(`(rabbitmq_\w+)\.([\w-]+)\.name`).FindAllStringSubmatch(tf, -1) {
			if !declared[m[1]+"."+m[2]] {
				t.Errorf("%v: reference to undeclared %s.%s", args, m[1], m[2])
			}
		}
		_, defs, _ := run(t, offline, append([]string{"export"}, args...)...)
		var d broker.Definitions
		if err := json.Unmarshal([]byte(defs), &d); err != nil {
			t.Fatal(err)
		}
		count := func(kind string) int { return strings.Count(tf, `resource "`+kind+`"`) }
		if count("rabbitmq_exchange") != len(d.Exchanges) || count("rabbitmq_queue") != len(d.Queues) || count("rabbitmq_binding") != len(d.Bindings) {
			t.Errorf("%v: resources %d/%d/%d, plan objects %d/%d/%d", args, count("rabbitmq_exchange"), count("rabbitmq_queue"), count("rabbitmq_binding"), len(d.Exchanges), len(d.Queues), len(d.Bindings))
		}
		if strings.Contains(tf, "${x}") && !strings.Contains(tf, "$${x}") {
			t.Errorf("%v: a template sequence in a name is not escaped", args)
		}
		terraformFmtCheck(t, tf)
	}
}

func terraformFmtCheck(t *testing.T, tf string) {
	t.Helper()
	bin, err := exec.LookPath("terraform")
	if err != nil {
		t.Log("terraform not installed: structural checks only")
		return
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "ladder.tf")
	if err := os.WriteFile(file, []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "fmt", "-check", "-diff", file)
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE=/dev/null", "CHECKPOINT_DISABLE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("terraform fmt -check: %v\n%s", err, out)
	}
}

// A ladder exported as definitions and imported into an empty vhost through
// the management API is the ladder: no drift from the plan, and a delayed
// message arrives where it should. For rungs' prefix ladder and for the
// foreign layouts, whose definitions are what Celery and NServiceBus would
// have declared.
func TestExportedDefinitionsImportWithoutDriftAndDeliver(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		shape    []string
		ladder   string
		delay    string
		dest     string
		queue    string
		discover string
	}{
		"prefix quorum": {[]string{"--ladder", "jobs", "--layout", "prefix", "--unit", "10ms", "--levels", "8", "--radix", "2", "--queue-type", "quorum", "--target", "work"}, "jobs", "300ms", "work", "work", "prefix"},
		"celery":        {[]string{"--layout", "celery", "--queue-type", "quorum", "--target", "celery"}, "celery", "1s", "celery", "celery", "celery"},
		"direct quorum": {[]string{"--ladder", "hops", "--layout", "direct", "--unit", "1ms", "--max-delay", "1m", "--queue-type", "quorum", "--target", "work"}, "hops", "300ms", "work", "work", "direct"},
		"direct":        {[]string{"--ladder", "hops", "--layout", "direct", "--unit", "10ms", "--max-delay", "1h"}, "hops", "1s", "", "hops.done", "direct"},
		"nsb1":          {[]string{"--layout", "nsb1", "--target", "Sales"}, "nsb", "1s", "Sales", "Sales", "nsb1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env, cfg := brokerEnv(t)
			defs := mustRun(t, env, append([]string{"export"}, tc.shape...)...)
			checkExportedReleaseArgs(t, cfg, tc.ladder, defs, tc.discover == "prefix" || tc.discover == "direct")
			// An import of a few hundred objects takes the broker seconds
			// while the other cases import theirs: a request bound for a
			// test's set-up, not rungs' own per-request timeout.
			cfg.Timeout = 30 * time.Second
			m, err := broker.NewManagement(cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := m.ImportDefinitions(ctx, cfg.Vhost, []byte(defs)); err != nil {
				t.Fatalf("import: %v", err)
			}
			// The broker now holds exactly the plan the flags describe...
			if code, out, errs := run(t, env, append([]string{"plan"}, tc.shape...)...); code != ExitOK || !strings.Contains(out, "drift: none") {
				t.Fatalf("plan after import: exit %d\n%s%s", code, out, errs)
			}
			// ...and discovery finds it as that layout, without drift.
			var found struct {
				Ladders []struct {
					Ladder struct{ Name, Layout string }
					Drift  []any
				}
			}
			if err := json.Unmarshal([]byte(mustRun(t, env, "discover", "--json")), &found); err != nil {
				t.Fatal(err)
			}
			if st := found.Ladders; len(st) != 1 || st[0].Ladder.Name != tc.ladder || st[0].Ladder.Layout != tc.discover || len(st[0].Drift) != 0 {
				t.Fatalf("discover after import: %+v", st)
			}
			mustRun(t, env, "publish", "--ladder", tc.ladder, "--delay", tc.delay, "--to", tc.dest, "--count", "3")
			c := dial(t, cfg)
			if got := drain(t, c, tc.queue, 3, 20*time.Second); len(got) != 3 {
				t.Fatalf("%d of 3 delayed messages reached %s", len(got), tc.queue)
			}
		})
	}
}

func TestExportRefusesUnknownFormat(t *testing.T) {
	if code, _, errs := run(t, offline, "export", "--format", "yaml"); code != ExitUsage || !strings.Contains(errs, "definitions or terraform") {
		t.Fatalf("exit %d %s", code, errs)
	}
}

// rungs applies, traces and publishes into a Celery ladder as Celery's
// workers would find it, destination exchange included.
func TestCeleryLadderApplyTracePublish(t *testing.T) {
	t.Parallel()
	env, cfg := brokerEnv(t)
	mustRun(t, env, "apply", "--layout", "celery", "--ladder", "billing_celery", "--queue-type", "quorum", "--target", "invoices")
	out := mustRun(t, env, "trace", "5s", "--ladder", "billing_celery", "--to", "invoices")
	for _, want := range []string{"publish  to exchange billing_celery_delayed_27", "billing_celery_delayed_2", "billing_celery_delayed_0", "→    invoices", "checked:"} {
		if !strings.Contains(out, want) {
			t.Fatalf("trace lacks %q:\n%s", want, out)
		}
	}
	mustRun(t, env, "publish", "--ladder", "billing_celery", "--delay", "1s", "--to", "invoices")
	if got := drain(t, dial(t, cfg), "invoices", 1, 15*time.Second); len(got) != 1 {
		t.Fatal("the delayed task did not reach invoices")
	}
}

// checkExportedReleaseArgs checks that an export read from the broker
// declares the quorum rungs of rungs' own layouts (own) as apply would on
// its release: balanced leaders, and no delivery limit where the release
// sets one by default; classic rungs and a library's ladder get neither.
func checkExportedReleaseArgs(t *testing.T, cfg broker.Config, ladder, defs string, own bool) {
	t.Helper()
	ver := releaseOf(t, cfg)
	var d struct {
		Queues []struct {
			Name      string
			Arguments map[string]any
		}
	}
	if err := json.Unmarshal([]byte(defs), &d); err != nil {
		t.Fatal(err)
	}
	rungs := 0
	for _, q := range d.Queues {
		if !strings.HasPrefix(q.Name, ladder+".rung.") {
			continue
		}
		rungs++
		own := own && q.Arguments["x-queue-type"] == "quorum"
		_, balanced := q.Arguments["x-queue-leader-locator"]
		limit, limited := q.Arguments["x-delivery-limit"]
		if balanced != own || limited != (own && ver.QuorumDefaultDeliveryLimit() > 0) || limited && limit != float64(-1) {
			t.Errorf("on %s, rung %s exported with %v", ver, q.Name, q.Arguments)
		}
	}
	if own && rungs == 0 {
		t.Errorf("no rung of %s in the export", ladder)
	}
}
