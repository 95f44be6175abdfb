package ops

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/broker"
)

// A config file names brokers, as k9s contexts and rabbitmqadmin's named
// nodes do, so that `--context prod` replaces a URL, a management URL, TLS
// files and a vhost, and a production broker can be read-only by default:
//
//	{
//	  "current_context": "local",
//	  "contexts": {
//	    "local": {"url": "amqp://guest:guest@localhost:5672/"},
//	    "prod": {
//	      "url": "amqps://ops@rabbit.prod:5671/", "vhost": "jobs",
//	      "mgmt_url": "https://rabbit.prod:15671", "ca_cert": "/etc/rungs/ca.pem",
//	      "password_env": "RUNGS_PROD_PASSWORD", "read_only": true
//	    }
//	  }
//	}
//
// A password comes from the environment (password_env) or a file
// (password_file), so that it is never typed on a command line; a URL in the
// file may also carry one, as RUNGS_URL may. The CLI's commands and the
// console's `:ctx` both resolve a broker through a ConfigSource.

// ConfigFile is the config file's content. Unknown top-level keys are kept
// when the file is rewritten (UseContext).
type ConfigFile struct {
	CurrentContext string                   `json:"current_context,omitempty"`
	Contexts       map[string]BrokerContext `json:"contexts"`
}

// BrokerContext is one named broker.
type BrokerContext struct {
	URL          string `json:"url,omitempty"`
	MgmtURL      string `json:"mgmt_url,omitempty"`
	Vhost        string `json:"vhost,omitempty"`
	CACert       string `json:"ca_cert,omitempty"`
	Cert         string `json:"cert,omitempty"`
	Key          string `json:"key,omitempty"`
	ReadOnly     bool   `json:"read_only,omitempty"`
	PasswordEnv  string `json:"password_env,omitempty"`
	PasswordFile string `json:"password_file,omitempty"`
}

// ContextNames lists the file's contexts, sorted.
func (cf ConfigFile) ContextNames() []string {
	names := make([]string, 0, len(cf.Contexts))
	for n := range cf.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CredentialSource says where a context's password comes from, never what
// it is: "env NAME", "file PATH", "in url" or "none".
func (cc BrokerContext) CredentialSource() string {
	switch {
	case cc.PasswordEnv != "":
		return "env " + cc.PasswordEnv
	case cc.PasswordFile != "":
		return "file " + cc.PasswordFile
	case broker.RedactURL(cc.URL) != cc.URL:
		return "in url"
	}
	return "none"
}

// TLS says whether the context's broker is reached over TLS.
func (cc BrokerContext) TLS() bool {
	return cc.CACert != "" || cc.Cert != "" || strings.HasPrefix(cc.URL, "amqps:")
}

// BrokerFlags are the broker settings given on the command line; "" when a
// flag was not given.
type BrokerFlags struct {
	URL, MgmtURL, Vhost string
	CACert, Cert, Key   string
	// ReadOnly counts only when ReadOnlyGiven: an explicit
	// --read-only=false overrides a read-only context.
	ReadOnly, ReadOnlyGiven bool
	Timeout                 time.Duration
}

// ConfigSource is where contexts come from: the config file that --config
// or the environment names, and the context that --context, the
// environment or the file picks. Every command and every completion asks,
// so the file is read once.
type ConfigSource struct {
	Getenv func(string) string
	// PathFlag and ContextFlag are --config and --context, "" when not given.
	PathFlag, ContextFlag string

	file   ConfigFile
	loaded bool
	err    error
}

// envOr picks the flag's value if given, else the environment's, else def.
func (c *ConfigSource) envOr(name, flag, def string) string {
	if flag != "" {
		return flag
	}
	if v := c.Getenv(name); v != "" {
		return v
	}
	return def
}

// Path is the config file in use: --config, else RUNGS_CONFIG, else
// $XDG_CONFIG_HOME/rungs/config.json, else ~/.config/rungs/config.json.
func (c *ConfigSource) Path() string {
	if p := c.envOr("RUNGS_CONFIG", c.PathFlag, ""); p != "" {
		return p
	}
	if x := c.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "rungs", "config.json")
	}
	home := c.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".config", "rungs", "config.json")
}

// Load reads the config file once. A missing file is an empty
// configuration unless it was named explicitly. A refusal is an
// *InputError.
func (c *ConfigSource) Load() (ConfigFile, error) {
	if c.loaded {
		return c.file, c.err
	}
	c.loaded = true
	path := c.Path()
	data, err := os.ReadFile(path)
	named := c.PathFlag != "" || c.Getenv("RUNGS_CONFIG") != ""
	if errors.Is(err, fs.ErrNotExist) && !named {
		return c.file, nil
	}
	if err != nil {
		c.err = badInput("config file: %v", err)
		return c.file, c.err
	}
	if err := json.Unmarshal(data, &c.file); err != nil {
		// The decoder's message quotes no content, only positions.
		c.err = badInput("config file %s: %v", path, err)
	}
	return c.file, c.err
}

// ContextName is the context in use: --context, else RUNGS_CONTEXT, else
// the file's current_context; "" when none applies.
func (c *ConfigSource) ContextName() (string, error) {
	cf, err := c.Load()
	if err != nil {
		return "", err
	}
	name := c.envOr("RUNGS_CONTEXT", c.ContextFlag, cf.CurrentContext)
	if name == "" {
		return "", nil
	}
	if _, ok := cf.Contexts[name]; !ok {
		return "", badInput("no context %q in %s (rungs config contexts lists them)", name, c.Path())
	}
	return name, nil
}

// pick is one setting's value and whether the context supplied it: the
// flag, else the environment variable (if the setting has one), else the
// context's, else def.
func (c *ConfigSource) pick(flag, envName, ctx, def string) (string, bool) {
	if flag != "" {
		return flag, false
	}
	if envName != "" {
		if v := c.Getenv(envName); v != "" {
			return v, false
		}
	}
	if ctx != "" {
		return ctx, true
	}
	return def, false
}

// Resolve is the broker configuration, each setting taken from, in order:
// its flag, its environment variable, the context, the default. A password
// missing from the URL in use comes from the context's password_env or
// password_file (when the URL is the context's), else from RUNGS_PASSWORD.
// Read-only is on if the flag or the context says so, unless
// --read-only=false is given explicitly.
func (c *ConfigSource) Resolve(o BrokerFlags) (broker.Config, error) {
	name, err := c.ContextName()
	if err != nil {
		return broker.Config{}, err
	}
	cc := c.file.Contexts[name]
	cfg := broker.Config{ReadOnly: cc.ReadOnly, Timeout: o.Timeout}
	if o.ReadOnlyGiven {
		cfg.ReadOnly = o.ReadOnly
	}
	var urlFromCtx, mgmtFromCtx bool
	cfg.URL, urlFromCtx = c.pick(o.URL, "RUNGS_URL", cc.URL, broker.DefaultURL)
	cfg.MgmtURL, mgmtFromCtx = c.pick(o.MgmtURL, "RUNGS_MGMT_URL", cc.MgmtURL, "")
	cfg.Vhost, _ = c.pick(o.Vhost, "RUNGS_VHOST", cc.Vhost, "")
	cfg.CACert, _ = c.pick(o.CACert, "", cc.CACert, "")
	cfg.ClientCert, _ = c.pick(o.Cert, "", cc.Cert, "")
	cfg.ClientKey, _ = c.pick(o.Key, "", cc.Key, "")

	// The context's password belongs to the context's URLs; a URL given
	// by flag or environment does not borrow it.
	pw := ""
	if urlFromCtx || mgmtFromCtx {
		if pw, err = cc.password(c.Getenv); err != nil {
			return cfg, err
		}
	}
	if urlFromCtx {
		cfg.URL = withPassword(cfg.URL, pw)
	}
	if mgmtFromCtx {
		cfg.MgmtURL = withPassword(cfg.MgmtURL, pw)
	}
	envPW := c.Getenv("RUNGS_PASSWORD")
	cfg.URL = withPassword(cfg.URL, envPW)
	cfg.MgmtURL = withPassword(cfg.MgmtURL, envPW)
	return cfg, nil
}

// password reads a context's password from its environment variable or
// file; "" when it names neither.
func (cc BrokerContext) password(getenv func(string) string) (string, error) {
	switch {
	case cc.PasswordEnv != "":
		pw := getenv(cc.PasswordEnv)
		if pw == "" {
			return "", badInput("the context's password_env %s is not set", cc.PasswordEnv)
		}
		return pw, nil
	case cc.PasswordFile != "":
		data, err := os.ReadFile(expandHome(cc.PasswordFile, getenv))
		if err != nil {
			return "", badInput("the context's password_file: %v", err)
		}
		pw := strings.TrimRight(string(data), "\r\n")
		if pw == "" {
			return "", badInput("the context's password_file %s is empty", cc.PasswordFile)
		}
		return pw, nil
	}
	return "", nil
}

func expandHome(p string, getenv func(string) string) string {
	rest, ok := strings.CutPrefix(p, "~/")
	home := getenv("HOME")
	if !ok || home == "" {
		return p
	}
	return filepath.Join(home, rest)
}

// withPassword puts pw into a URL that names a user but no password. An
// empty pw or URL, a URL with a password, without a user, or that does not
// parse is returned as it is (the broker package reports a bad URL without
// echoing it).
func withPassword(raw, pw string) string {
	if raw == "" || pw == "" {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil || u.User.Username() == "" {
		return raw
	}
	if _, has := u.User.Password(); has {
		return raw
	}
	u.User = url.UserPassword(u.User.Username(), pw)
	return u.String()
}

// ContextSummary is one context as `config contexts` lists it: URLs with
// any password redacted, and where the password comes from, never what it
// is.
type ContextSummary struct {
	Name        string `json:"name"`
	Current     bool   `json:"current"`
	URL         string `json:"url"`
	MgmtURL     string `json:"mgmt_url,omitempty"`
	Vhost       string `json:"vhost,omitempty"`
	ReadOnly    bool   `json:"read_only"`
	TLS         bool   `json:"tls"`
	Credentials string `json:"credentials"`
}

// ContextList is the config file's contexts, sorted by name, and a warning
// when the file holds a password in a URL that other users may read.
type ContextList struct {
	Path     string
	Contexts []ContextSummary
	Warning  string
}

// ListContexts summarises the config file's contexts. A current context
// that does not resolve is listed unmarked, so that `config` can repair it.
func (c *ConfigSource) ListContexts() (ContextList, error) {
	cf, err := c.Load()
	if err != nil {
		return ContextList{}, err
	}
	current, _ := c.ContextName()
	l := ContextList{Path: c.Path(), Contexts: []ContextSummary{}}
	for _, n := range cf.ContextNames() {
		cc := cf.Contexts[n]
		l.Contexts = append(l.Contexts, ContextSummary{
			Name: n, Current: n == current, URL: broker.RedactURL(cc.URL), MgmtURL: broker.RedactURL(cc.MgmtURL),
			Vhost: cc.Vhost, ReadOnly: cc.ReadOnly, TLS: cc.TLS(), Credentials: cc.CredentialSource(),
		})
	}
	l.Warning = c.exposedPasswords(cf)
	return l, nil
}

// exposedPasswords warns when the file holds a password in a URL and other
// users may read it.
func (c *ConfigSource) exposedPasswords(cf ConfigFile) string {
	st, err := os.Stat(c.Path())
	if err != nil || st.Mode().Perm()&0o077 == 0 {
		return ""
	}
	for _, n := range cf.ContextNames() {
		if cf.Contexts[n].CredentialSource() == "in url" {
			return fmt.Sprintf("%s holds a password and is readable by other users (chmod 600 it, or use password_env / password_file)", c.Path())
		}
	}
	return ""
}

// UseContext rewrites current_context, keeping everything else in the
// file and its mode. An unknown name is an *InputError.
func (c *ConfigSource) UseContext(name string) error {
	cf, err := c.Load()
	if err != nil {
		return err
	}
	if _, ok := cf.Contexts[name]; !ok {
		return badInput("no context %q in %s (known: %s)", name, c.Path(), strings.Join(cf.ContextNames(), ", "))
	}
	path := c.Path()
	raw := map[string]json.RawMessage{}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return badInput("config file %s: %v", path, err)
	}
	raw["current_context"], _ = json.Marshal(name)
	out, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(out, '\n'), st.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	c.file.CurrentContext = name
	return nil
}
