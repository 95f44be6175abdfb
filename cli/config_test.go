package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rungs-dev/rungs/broker"
)

// writeConfig writes a config file into a temporary XDG_CONFIG_HOME and
// returns an environment that finds it there.
func writeConfig(t *testing.T, content string, extra map[string]string) (map[string]string, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "rungs", "config.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": dir, "HOME": dir}
	for k, v := range extra {
		env[k] = v
	}
	return env, path
}

const testContexts = `{
  "current_context": "local",
  "editor": {"keep": "me"},
  "contexts": {
    "local": {"url": "amqp://guest:guest@127.0.0.1:1/", "vhost": "dev"},
    "prod": {"url": "amqps://ops@rabbit.prod:5671/", "mgmt_url": "https://ops@rabbit.prod:15671",
             "vhost": "jobs", "password_env": "PROD_PW", "read_only": true},
    "stage": {"url": "amqp://ops:inl1ne-secret@127.0.0.1:1/", "password_file": "~/stage.pw"}
  }
}`

// resolveFor runs rungs' configuration resolution for args and env.
func resolveFor(t *testing.T, vars map[string]string, args ...string) (string, string, bool, error) {
	t.Helper()
	x := &env{IO: IO{Getenv: func(k string) string { return vars[k] }}}
	if err := x.rootCommand().ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	cfg, err := x.config(), x.configErr()
	return cfg.URL + " vhost=" + cfg.Vhost, cfg.MgmtURL, cfg.ReadOnly, err
}

func TestContextSuppliesBrokerAndPasswordFromEnv(t *testing.T) {
	env, _ := writeConfig(t, testContexts, map[string]string{"PROD_PW": "pr0d-secret"})
	got, mgmt, ro, err := resolveFor(t, env, "--context", "prod")
	if err != nil || got != "amqps://ops:pr0d-secret@rabbit.prod:5671/ vhost=jobs" || mgmt != "https://ops:pr0d-secret@rabbit.prod:15671" || !ro {
		t.Fatalf("prod: %s %s read-only=%v %v", got, mgmt, ro, err)
	}
	// The file's current context applies without --context.
	if got, _, ro, _ := resolveFor(t, env); got != "amqp://guest:guest@127.0.0.1:1/ vhost=dev" || ro {
		t.Fatalf("current context: %s %v", got, ro)
	}
	// RUNGS_CONTEXT picks one; --context wins over it.
	env["RUNGS_CONTEXT"] = "prod"
	if got, _, _, _ := resolveFor(t, env); !strings.Contains(got, "rabbit.prod") {
		t.Fatalf("RUNGS_CONTEXT: %s", got)
	}
	if got, _, _, _ := resolveFor(t, env, "--context", "local"); !strings.Contains(got, "127.0.0.1") {
		t.Fatalf("--context over RUNGS_CONTEXT: %s", got)
	}
}

// Explicit flag > environment > context > default, setting by setting.
func TestContextPrecedence(t *testing.T) {
	env, _ := writeConfig(t, testContexts, map[string]string{"PROD_PW": "pw"})
	got, _, _, _ := resolveFor(t, env, "--context", "prod", "--vhost", "flagged")
	if !strings.HasSuffix(got, "vhost=flagged") || !strings.Contains(got, "rabbit.prod") {
		t.Fatalf("flag over context: %s", got)
	}
	env["RUNGS_VHOST"] = "from-env"
	if got, _, _, _ := resolveFor(t, env, "--context", "prod"); !strings.HasSuffix(got, "vhost=from-env") {
		t.Fatalf("env over context: %s", got)
	}
	if got, _, _, _ := resolveFor(t, env, "--context", "prod", "--vhost", "flagged"); !strings.HasSuffix(got, "vhost=flagged") {
		t.Fatalf("flag over env: %s", got)
	}
	// A URL given explicitly does not borrow the context's password.
	env["RUNGS_URL"] = "amqp://other@elsewhere:5672/"
	if got, _, _, _ := resolveFor(t, env, "--context", "prod"); !strings.HasPrefix(got, "amqp://other@elsewhere:5672/") {
		t.Fatalf("explicit URL: %s", got)
	}
	// --read-only=false explicitly overrides a read-only context.
	if _, _, ro, _ := resolveFor(t, env, "--context", "prod", "--read-only=false"); ro {
		t.Fatal("--read-only=false did not win over the context")
	}
	// Without any context, the defaults.
	if got, _, _, _ := resolveFor(t, map[string]string{"HOME": t.TempDir()}); got != "amqp://guest:guest@localhost:5672/ vhost=" {
		t.Fatalf("no config: %s", got)
	}
}

func TestContextPasswordFromFile(t *testing.T) {
	env, _ := writeConfig(t, `{"contexts": {"s": {"url": "amqp://ops@h:5672/", "password_file": "~/pw"}}}`, nil)
	if err := os.WriteFile(filepath.Join(env["HOME"], "pw"), []byte("f1le-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _, _, err := resolveFor(t, env, "--context", "s"); err != nil || !strings.HasPrefix(got, "amqp://ops:f1le-secret@h:5672/") {
		t.Fatalf("%s %v", got, err)
	}
	// RUNGS_PASSWORD fills a URL without a password when no context does.
	if got, _, _, _ := resolveFor(t, map[string]string{"HOME": t.TempDir(), "RUNGS_URL": "amqp://ops@h/", "RUNGS_PASSWORD": "envpw"}); !strings.HasPrefix(got, "amqp://ops:envpw@h/") {
		t.Fatalf("RUNGS_PASSWORD: %s", got)
	}
}

func TestBadContextsAreUsageErrors(t *testing.T) {
	env, _ := writeConfig(t, testContexts, nil)
	cases := map[string][]string{
		"unknown context":        {"status", "--context", "nope"},
		"unset password_env":     {"status", "--context", "prod"},
		"missing password_file":  {"status", "--context", "stage"},
		"missing explicit file":  {"status", "--config", "/nonexistent/rungs.json"},
		"unknown context to use": {"config", "use", "nope"},
	}
	for name, args := range cases {
		code, out, errs := run(t, env, args...)
		if code != ExitUsage || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, errs)
		}
	}
	bad, _ := writeConfig(t, `{"contexts": [}`, nil)
	if code, _, errs := run(t, bad, "status"); code != ExitUsage || !strings.Contains(errs, "config file") {
		t.Errorf("broken file: exit %d %s", code, errs)
	}
}

// A read-only context is enforced like --read-only: refused before any
// connection is tried.
func TestReadOnlyContextRefusesBeforeConnecting(t *testing.T) {
	env, _ := writeConfig(t, testContexts, map[string]string{"PROD_PW": "pw"})
	for _, args := range [][]string{{"apply"}, {"publish", "--delay", "1s"}, {"purge", "q", "--yes"}, {"teardown", "--yes"}} {
		code, _, errs := run(t, env, append(args, "--context", "prod")...)
		if code == ExitOK || !strings.Contains(errs, "read-only") {
			t.Errorf("%v: exit %d %s", args, code, errs)
		}
	}
}

func TestConfigContextsNeverShowsPasswords(t *testing.T) {
	env, _ := writeConfig(t, testContexts, map[string]string{"PROD_PW": "pr0d-secret"})
	for _, args := range [][]string{{"config", "contexts"}, {"config", "contexts", "--json"}, {"config", "contexts", "--context", "prod"}} {
		code, out, errs := run(t, env, args...)
		if code != ExitOK || strings.Contains(out+errs, "secret") {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	_, out, _ := run(t, env, "config", "contexts")
	for _, want := range []string{"* ", "local", "prod", "amqps://ops@rabbit.prod:5671/", "env PROD_PW", "file ~/stage.pw", "amqp://ops:xxxxx@127.0.0.1:1/"} {
		if !strings.Contains(out, want) {
			t.Errorf("contexts output lacks %q:\n%s", want, out)
		}
	}
}

func TestConfigUseKeepsTheRestOfTheFile(t *testing.T) {
	env, path := writeConfig(t, testContexts, nil)
	if out := mustRun(t, env, "config", "use", "stage"); !strings.Contains(out, "current context: stage") {
		t.Fatalf("use: %s", out)
	}
	data, _ := os.ReadFile(path)
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["current_context"] != "stage" || raw["editor"] == nil || len(raw["contexts"].(map[string]any)) != 3 {
		t.Fatalf("rewritten file: %s", data)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode changed to %v", st.Mode())
	}
	if out := mustRun(t, env, "config", "path"); strings.TrimSpace(out) != path {
		t.Fatalf("config path = %s", out)
	}
}

// A context against the real broker: its password comes from the
// environment, commands reach the context's vhost, and its read-only flag
// is enforced by the broker clients themselves, for the console's :ctx too.
func TestContextAgainstTheBroker(t *testing.T) {
	t.Parallel()
	_, cfg := brokerEnv(t)
	u, err := url.Parse(cfg.URL)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	u.User = url.User(u.User.Username())
	conf := fmt.Sprintf(`{"contexts": {
	  "rw": {"url": %q, "mgmt_url": %q, "vhost": %q, "password_env": "TEST_PW"},
	  "ro": {"url": %q, "mgmt_url": %q, "vhost": %q, "password_env": "TEST_PW", "read_only": true}}}`,
		u.String(), cfg.MgmtURL, cfg.Vhost, u.String(), cfg.MgmtURL, cfg.Vhost)
	vars, _ := writeConfig(t, conf, map[string]string{"TEST_PW": pw})
	mustRun(t, vars, "--context", "rw", "apply", "--ladder", "ctx", "--levels", "3", "--radix", "2")
	if out := mustRun(t, vars, "--context", "ro", "discover"); !strings.Contains(out, "ctx") {
		t.Fatalf("discover in the context's vhost:\n%s", out)
	}
	if code, _, errs := run(t, vars, "--context", "ro", "purge", "--ladder", "ctx", "--yes"); code == ExitOK || !strings.Contains(errs, "read-only") {
		t.Fatalf("purge in a read-only context: exit %d %s", code, errs)
	}
	// Before 4.3, reading a quorum queue counts a delivery on it: a
	// read-only context refuses that as --read-only does. From 4.3 a peek
	// changes nothing that can act on a message, so both allow it.
	ver := releaseOf(t, cfg)
	code, _, errs := run(t, vars, "--context", "ro", "peek", "ctx.unroutable")
	if refused := code != ExitOK && strings.Contains(errs, "read-only"); refused != ver.QuorumRequeueNackCounts() {
		t.Fatalf("peek of a quorum queue in a read-only context on %s: exit %d %s", ver, code, errs)
	}
	if code, _, errs := run(t, vars, "--context", "ro", "--read-only=false", "peek", "ctx.unroutable", "--force"); code != ExitOK {
		t.Fatalf("peek with --read-only=false over the context: exit %d %s", code, errs)
	}

	e := &env{IO: IO{Getenv: func(k string) string { return vars[k] }}}
	if err := e.rootCommand().ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := e.connectContext(ctx, "ro")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Vhost != cfg.Vhost || !b.ReadOnly || strings.Contains(b.BrokerLabel, ":"+pw+"@") {
		t.Fatalf("backends %+v", b)
	}
	if snap, err := b.Inspector.Snapshot(ctx, b.Vhost); err != nil || len(snap.Queues) == 0 {
		t.Fatalf("snapshot through the context: %v", err)
	}
	if _, err := b.Publisher.Publish(ctx, []broker.Message{{Exchange: "ctx.ingest", RoutingKey: "0.0.1"}}); !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("publish through a read-only context: %v", err)
	}
	if _, err := b.Purger.Purge(ctx, "ctx.done"); !errors.Is(err, broker.ErrReadOnly) {
		t.Fatalf("purge through a read-only context: %v", err)
	}
}
