package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

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
// file may also carry one, as RUNGS_URL may.

// configFile is the config file's content. Unknown top-level keys are kept
// when rungs rewrites the file (`rungs config use`).
type configFile struct {
	CurrentContext string                   `json:"current_context,omitempty"`
	Contexts       map[string]contextConfig `json:"contexts"`
}

// contextConfig is one named broker.
type contextConfig struct {
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

// configSource is where contexts come from: the config file that --config
// or the environment names, and the context that --context, the
// environment or the file picks. Every command and every completion asks,
// so the file is read once.
type configSource struct {
	getenv func(string) string
	// --config and --context, "" when not given.
	pathFlag, contextFlag string
	file                  configFile
	loaded                bool
	err                   error
}

// envOr picks the flag's value if given, else the environment's, else def.
func (c *configSource) envOr(name, flag, def string) string {
	if flag != "" {
		return flag
	}
	if v := c.getenv(name); v != "" {
		return v
	}
	return def
}

// configPath is the config file in use: --config, else RUNGS_CONFIG, else
// $XDG_CONFIG_HOME/rungs/config.json, else ~/.config/rungs/config.json.
func (c *configSource) configPath() string {
	if p := c.envOr("RUNGS_CONFIG", c.pathFlag, ""); p != "" {
		return p
	}
	if x := c.getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "rungs", "config.json")
	}
	home := c.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".config", "rungs", "config.json")
}

// loadConfig reads the config file once. A missing file is an empty
// configuration unless it was named explicitly.
func (c *configSource) loadConfig() (configFile, error) {
	if c.loaded {
		return c.file, c.err
	}
	c.loaded = true
	path := c.configPath()
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && c.pathFlag == "" && c.getenv("RUNGS_CONFIG") == "":
		return c.file, nil
	case err != nil:
		c.err = usageErr("config file: %v", err)
		return c.file, c.err
	}
	if err := json.Unmarshal(data, &c.file); err != nil {
		// The decoder's message quotes no content, only positions.
		c.err = usageErr("config file %s: %v", path, err)
	}
	return c.file, c.err
}

// contextName is the context in use: --context, else RUNGS_CONTEXT, else the
// file's current_context; "" when none applies.
func (c *configSource) contextName() (string, error) {
	cf, err := c.loadConfig()
	if err != nil {
		return "", err
	}
	name := c.envOr("RUNGS_CONTEXT", c.contextFlag, cf.CurrentContext)
	if name == "" {
		return "", nil
	}
	if _, ok := cf.Contexts[name]; !ok {
		return "", usageErr("no context %q in %s (rungs config contexts lists them)", name, c.configPath())
	}
	return name, nil
}

// activeContext is the context in use and its settings.
func (c *configSource) activeContext() (string, contextConfig, error) {
	name, err := c.contextName()
	if err != nil || name == "" {
		return "", contextConfig{}, err
	}
	return name, c.file.Contexts[name], nil
}

// resolveConfig is the broker configuration, each setting taken from, in
// order: its flag, its environment variable, the context, the default.
// A password missing from the URL in use comes from the context's
// password_env or password_file (when the URL is the context's), else from
// RUNGS_PASSWORD. Read-only is on if the flag or the context says so,
// unless --read-only=false is given explicitly (readOnlyGiven).
func (c *configSource) resolveConfig(o options, readOnlyGiven bool) (broker.Config, error) {
	_, cc, err := c.activeContext()
	if err != nil {
		return broker.Config{}, err
	}
	pick := func(flag, envName, ctx, def string) (string, bool) {
		if flag != "" {
			return flag, false
		}
		if v := c.getenv(envName); envName != "" && v != "" {
			return v, false
		}
		if ctx != "" {
			return ctx, true
		}
		return def, false
	}
	cfg := broker.Config{ReadOnly: cc.ReadOnly, Timeout: o.timeout}
	if readOnlyGiven {
		cfg.ReadOnly = o.readOnly
	}
	var urlFromCtx, mgmtFromCtx bool
	cfg.URL, urlFromCtx = pick(o.url, "RUNGS_URL", cc.URL, broker.DefaultURL)
	cfg.MgmtURL, mgmtFromCtx = pick(o.mgmtURL, "RUNGS_MGMT_URL", cc.MgmtURL, "")
	cfg.Vhost, _ = pick(o.vhost, "RUNGS_VHOST", cc.Vhost, "")
	cfg.CACert, _ = pick(o.caCert, "", cc.CACert, "")
	cfg.ClientCert, _ = pick(o.cert, "", cc.Cert, "")
	cfg.ClientKey, _ = pick(o.key, "", cc.Key, "")

	// The context's password belongs to the context's URLs; a URL given
	// by flag or environment does not borrow it.
	if urlFromCtx || mgmtFromCtx {
		pw, err := contextPassword(cc, c.getenv)
		if err != nil {
			return cfg, err
		}
		if pw != "" && urlFromCtx {
			cfg.URL = withPassword(cfg.URL, pw)
		}
		if pw != "" && mgmtFromCtx {
			cfg.MgmtURL = withPassword(cfg.MgmtURL, pw)
		}
	}
	if pw := c.getenv("RUNGS_PASSWORD"); pw != "" {
		cfg.URL = withPassword(cfg.URL, pw)
		cfg.MgmtURL = withPassword(cfg.MgmtURL, pw)
	}
	return cfg, nil
}

// contextPassword reads a context's password from its environment variable
// or file; "" when it names neither.
func contextPassword(cc contextConfig, getenv func(string) string) (string, error) {
	switch {
	case cc.PasswordEnv != "":
		pw := getenv(cc.PasswordEnv)
		if pw == "" {
			return "", usageErr("the context's password_env %s is not set", cc.PasswordEnv)
		}
		return pw, nil
	case cc.PasswordFile != "":
		data, err := os.ReadFile(expandHome(cc.PasswordFile, getenv))
		if err != nil {
			return "", usageErr("the context's password_file: %v", err)
		}
		pw := strings.TrimRight(string(data), "\r\n")
		if pw == "" {
			return "", usageErr("the context's password_file %s is empty", cc.PasswordFile)
		}
		return pw, nil
	}
	return "", nil
}

func expandHome(p string, getenv func(string) string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home := getenv("HOME"); home != "" {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// withPassword puts pw into a URL that names a user but no password. A URL
// with a password, without a user, or that does not parse is returned as
// it is (the broker package reports a bad URL without echoing it).
func withPassword(raw, pw string) string {
	if raw == "" {
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

func (e *env) configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Named brokers (contexts) from the config file",
		Long: `config shows and selects the contexts of the config file: named brokers
with their URL, management URL, TLS files, default vhost and read-only flag.
The file is --config, else $RUNGS_CONFIG, else
$XDG_CONFIG_HOME/rungs/config.json (~/.config/rungs/config.json).

Every command takes --context NAME (or $RUNGS_CONTEXT); without either, the
file's current_context applies. A flag or environment variable given
explicitly still wins over the context's value.`,
		Example: `  rungs config contexts
  rungs config use prod
  rungs --context staging status
  RUNGS_CONTEXT=prod rungs discover`,
		Args: cobra.NoArgs,
		// The config commands repair a configuration that does not
		// resolve (a current context whose password is missing), so only
		// a file that does not parse stops them.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			_, err := e.conf.loadConfig()
			return err
		},
	}
	contexts := &cobra.Command{
		Use:   "contexts",
		Short: "List the contexts; passwords are never shown",
		Long: `contexts lists the config file's contexts: the current one marked with *,
each broker's URL (any password replaced by xxxxx), vhost, whether it is
read-only and where its password comes from.`,
		Example: `  rungs config contexts
  rungs config contexts --json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return e.view().listContexts(&e.conf) },
	}
	use := &cobra.Command{
		Use:   "use NAME",
		Short: "Make a context the current one (writes the config file)",
		Long: `use sets the config file's current_context, the context every command
uses when neither --context nor $RUNGS_CONTEXT names one.`,
		Example:           `  rungs config use prod`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: e.conf.completeContexts,
		RunE:              func(_ *cobra.Command, args []string) error { return e.conf.useContext(e.Out, args[0]) },
	}
	path := &cobra.Command{
		Use:     "path",
		Short:   "Print the config file's path",
		Example: `  $EDITOR "$(rungs config path)"`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(e.Out, e.conf.configPath())
			return nil
		},
	}
	cmd.AddCommand(contexts, use, path)
	return cmd
}

// contextNames lists the file's contexts, sorted.
func (cf configFile) contextNames() []string {
	names := make([]string, 0, len(cf.Contexts))
	for n := range cf.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// credentialSource says where a context's password comes from, never what it is.
func credentialSource(cc contextConfig) string {
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

func (v view) listContexts(c *configSource) error {
	cf, err := c.loadConfig()
	if err != nil {
		return err
	}
	current, err := c.contextName()
	if err != nil {
		current = ""
	}
	type jctx struct {
		Name        string `json:"name"`
		Current     bool   `json:"current"`
		URL         string `json:"url"`
		MgmtURL     string `json:"mgmt_url,omitempty"`
		Vhost       string `json:"vhost,omitempty"`
		ReadOnly    bool   `json:"read_only"`
		TLS         bool   `json:"tls"`
		Credentials string `json:"credentials"`
	}
	var out []jctx
	for _, n := range cf.contextNames() {
		cc := cf.Contexts[n]
		out = append(out, jctx{
			Name: n, Current: n == current, URL: broker.RedactURL(cc.URL), MgmtURL: broker.RedactURL(cc.MgmtURL),
			Vhost: cc.Vhost, ReadOnly: cc.ReadOnly, TLS: cc.CACert != "" || cc.Cert != "" || strings.HasPrefix(cc.URL, "amqps:"),
			Credentials: credentialSource(cc),
		})
	}
	if v.json {
		if out == nil {
			out = []jctx{}
		}
		return writeJSON(v.Out, map[string]any{"config": c.configPath(), "contexts": out})
	}
	if len(out) == 0 {
		fmt.Fprintf(v.Out, "no contexts in %s\n", c.configPath())
		return nil
	}
	w := table(v.Out)
	fmt.Fprintln(w, "\tcontext\turl\tvhost\tread-only\tpassword")
	for _, c := range out {
		mark, ro, vh := "", "", c.Vhost
		if c.Current {
			mark = "*"
		}
		if c.ReadOnly {
			ro = "yes"
		}
		if vh == "" {
			vh = "(url's)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", mark, c.Name, c.URL, vh, ro, c.Credentials)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if warn := c.exposedPasswords(cf); warn != "" {
		fmt.Fprintln(v.Err, "rungs: warning: "+warn)
	}
	return nil
}

// exposedPasswords warns when the file holds a password in a URL and other
// users may read it.
func (c *configSource) exposedPasswords(cf configFile) string {
	st, err := os.Stat(c.configPath())
	if err != nil || st.Mode().Perm()&0o077 == 0 {
		return ""
	}
	for _, n := range cf.contextNames() {
		if credentialSource(cf.Contexts[n]) == "in url" {
			return fmt.Sprintf("%s holds a password and is readable by other users (chmod 600 it, or use password_env / password_file)", c.configPath())
		}
	}
	return ""
}

// useContext rewrites current_context, keeping everything else in the file.
func (c *configSource) useContext(w io.Writer, name string) error {
	cf, err := c.loadConfig()
	if err != nil {
		return err
	}
	if _, ok := cf.Contexts[name]; !ok {
		return usageErr("no context %q in %s (known: %s)", name, c.configPath(), strings.Join(cf.contextNames(), ", "))
	}
	path := c.configPath()
	raw := map[string]json.RawMessage{}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return usageErr("config file %s: %v", path, err)
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
	fmt.Fprintf(w, "current context: %s\n", name)
	return nil
}

// completeContexts completes context names for `config use` and --context.
func (c *configSource) completeContexts(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	cf, err := c.loadConfig()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return cf.contextNames(), cobra.ShellCompDirectiveNoFileComp
}
