package ops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const configTestFile = `{
  "current_context": "local",
  "editor": {"keep": "me"},
  "contexts": {
    "local": {"vhost": "dev", "url": "amqp://guest:guest@127.0.0.1:1/"},
    "prod": {"read_only": true, "vhost": "jobs", "password_env": "PROD_PW",
             "url": "amqps://ops@rabbit.prod:5671/", "mgmt_url": "https://ops@rabbit.prod:15671"},
    "stage": {"password_file": "~/stage.pw", "url": "amqp://ops@h:1/"}
  }
}`

// configSourceFor writes content as the config file under a fresh home
// and returns a source that reads it with vars as the environment.
func configSourceFor(t *testing.T, content string, vars map[string]string) (*ConfigSource, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, ".config", "rungs", "config.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": dir}
	for k, v := range vars {
		env[k] = v
	}
	return &ConfigSource{Getenv: func(k string) string { return env[k] }}, dir
}

func TestResolvePrecedence(t *testing.T) {
	cases := []struct {
		name    string
		context string
		env     map[string]string
		flags   BrokerFlags
		url     string
		mgmt    string
		vhost   string
		ro      bool
		err     string
	}{
		{name: "file's current context", url: "amqp://guest:guest@127.0.0.1:1/", vhost: "dev"},
		{name: "context's password from env", context: "prod", env: map[string]string{"PROD_PW": "pw"},
			url: "amqps://ops:pw@rabbit.prod:5671/", mgmt: "https://ops:pw@rabbit.prod:15671", vhost: "jobs", ro: true},
		{name: "RUNGS_CONTEXT picks", env: map[string]string{"RUNGS_CONTEXT": "prod", "PROD_PW": "pw"},
			url: "amqps://ops:pw@rabbit.prod:5671/", mgmt: "https://ops:pw@rabbit.prod:15671", vhost: "jobs", ro: true},
		{name: "flag over env over context", context: "prod", env: map[string]string{"PROD_PW": "pw", "RUNGS_VHOST": "envvh", "RUNGS_URL": "amqp://u@e/"},
			flags: BrokerFlags{Vhost: "flagvh"}, url: "amqp://u@e/", mgmt: "https://ops:pw@rabbit.prod:15671", vhost: "flagvh", ro: true},
		{name: "--read-only=false wins", context: "prod", env: map[string]string{"PROD_PW": "pw"}, flags: BrokerFlags{ReadOnlyGiven: true},
			url: "amqps://ops:pw@rabbit.prod:5671/", mgmt: "https://ops:pw@rabbit.prod:15671", vhost: "jobs"},
		{name: "RUNGS_PASSWORD fills a URL without one", env: map[string]string{"RUNGS_PASSWORD": "e"}, flags: BrokerFlags{URL: "amqp://ops@h/"},
			url: "amqp://ops:e@h/", vhost: "dev"},
		{name: "unset password_env", context: "prod", err: "password_env PROD_PW is not set"},
		{name: "missing password_file", context: "stage", err: "the context's password_file:"},
		{name: "unknown context", context: "nope", err: `no context "nope"`},
	}
	for _, tc := range cases {
		c, _ := configSourceFor(t, configTestFile, tc.env)
		c.ContextFlag = tc.context
		cfg, err := c.Resolve(tc.flags)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !IsInputError(err) {
				t.Errorf("%s: err %v, want input error %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || cfg.URL != tc.url || cfg.MgmtURL != tc.mgmt || cfg.Vhost != tc.vhost || cfg.ReadOnly != tc.ro {
			t.Errorf("%s: %s %s %s ro=%v %v", tc.name, cfg.URL, cfg.MgmtURL, cfg.Vhost, cfg.ReadOnly, err)
		}
	}
}

func TestResolvePasswordFileAndDefaults(t *testing.T) {
	c, home := configSourceFor(t, configTestFile, nil)
	if err := os.WriteFile(filepath.Join(home, "stage.pw"), []byte("f1le\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ContextFlag = "stage"
	if cfg, err := c.Resolve(BrokerFlags{}); err != nil || cfg.URL != "amqp://ops:f1le@h:1/" {
		t.Fatalf("password_file: %s %v", cfg.URL, err)
	}
	none := &ConfigSource{Getenv: func(k string) string { return map[string]string{"HOME": t.TempDir()}[k] }}
	if cfg, err := none.Resolve(BrokerFlags{}); err != nil || cfg.URL != "amqp://guest:guest@localhost:5672/" || cfg.Vhost != "" {
		t.Fatalf("no file: %+v %v", cfg, err)
	}
	named := &ConfigSource{Getenv: func(string) string { return "" }, PathFlag: "/nonexistent/rungs.json"}
	if _, err := named.Load(); !IsInputError(err) {
		t.Fatalf("missing named file: %v", err)
	}
}

func TestWithPassword(t *testing.T) {
	cases := []struct{ raw, pw, want string }{
		{"amqp://ops@h/", "p", "amqp://ops:p@h/"},
		{"amqp://ops:old@h/", "p", "amqp://ops:old@h/"},
		{"amqp://h/", "p", "amqp://h/"},
		{"amqp://ops@h/", "", "amqp://ops@h/"},
		{"", "p", ""},
		{"::bad", "p", "::bad"},
	}
	for _, tc := range cases {
		if got := withPassword(tc.raw, tc.pw); got != tc.want {
			t.Errorf("withPassword(%q, %q) = %q, want %q", tc.raw, tc.pw, got, tc.want)
		}
	}
}

func TestCredentialSource(t *testing.T) {
	cases := []struct {
		cc   BrokerContext
		want string
	}{
		{BrokerContext{PasswordEnv: "X", PasswordFile: "f"}, "env X"},
		{BrokerContext{PasswordFile: "f"}, "file f"},
		{BrokerContext{URL: "amqp://u:secret@h/"}, "in url"},
		{BrokerContext{URL: "amqp://u@h/"}, "none"},
	}
	for _, tc := range cases {
		if got := tc.cc.CredentialSource(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.cc, got, tc.want)
		}
	}
}

func TestListContextsRedactsAndWarns(t *testing.T) {
	c, _ := configSourceFor(t, strings.Replace(configTestFile, "amqp://ops@h:1/", "amqp://ops:s3cret@h:1/", 1), nil)
	l, err := c.ListContexts()
	if err != nil || len(l.Contexts) != 3 || l.Warning != "" {
		t.Fatalf("%+v %v", l, err)
	}
	got := l.Contexts[0].Name + l.Contexts[1].Name + l.Contexts[2].Name
	if got != "localprodstage" || !l.Contexts[0].Current || !l.Contexts[1].TLS || strings.Contains(l.Contexts[2].URL, "s3cret") {
		t.Fatalf("%+v", l.Contexts)
	}
	if err := os.Chmod(l.Path, 0o644); err != nil {
		t.Fatal(err)
	}
	if l, _ := c.ListContexts(); !strings.Contains(l.Warning, "readable by other users") {
		t.Fatalf("no warning for a readable file with a password: %q", l.Warning)
	}
}

func TestUseContextKeepsTheFile(t *testing.T) {
	c, _ := configSourceFor(t, configTestFile, nil)
	if err := c.UseContext("nope"); !IsInputError(err) || !strings.Contains(err.Error(), "known: local, prod, stage") {
		t.Fatalf("unknown: %v", err)
	}
	if err := c.UseContext("prod"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(c.Path())
	if !strings.Contains(string(data), `"current_context": "prod"`) || !strings.Contains(string(data), `"keep": "me"`) {
		t.Fatalf("rewritten: %s", data)
	}
}
