package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/ui"
)

// The config file and how a broker resolves from it (flag, environment,
// context, default) are ops.ConfigSource's: the console's `:ctx` resolves
// through it too. These commands show and select its contexts.

// brokerFlags are the root's broker flags as ops.ConfigSource takes them.
func (e *env) brokerFlags() ops.BrokerFlags {
	o := e.opts
	return ops.BrokerFlags{
		URL: o.url, MgmtURL: o.mgmtURL, Vhost: o.vhost, CACert: o.caCert, Cert: o.cert, Key: o.key,
		ReadOnly: o.readOnly, ReadOnlyGiven: e.flags != nil && e.flags.Changed("read-only"), Timeout: o.timeout,
	}
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
			_, err := e.conf.Load()
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
		ValidArgsFunction: e.completeContexts,
		RunE:              func(_ *cobra.Command, args []string) error { return e.useContext(args[0]) },
	}
	path := &cobra.Command{
		Use:     "path",
		Short:   "Print the config file's path",
		Example: `  $EDITOR "$(rungs config path)"`,
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(e.Out, e.conf.Path())
			return nil
		},
	}
	cmd.AddCommand(contexts, use, path)
	return cmd
}

func (v view) listContexts(c *ops.ConfigSource) error {
	l, err := c.ListContexts()
	if err != nil {
		return err
	}
	// A table written to memory cannot fail.
	if err := v.emit(ui.ContextsJSON(l), written(func(w io.Writer) { _ = ui.WriteContexts(w, l) })); err != nil {
		return err
	}
	v.textOnly(v.Err, ui.WarningText(l.Warning))
	return nil
}

// useContext makes name the file's current context.
func (e *env) useContext(name string) error {
	if err := e.conf.UseContext(name); err != nil {
		return err
	}
	fmt.Fprintf(e.Out, "current context: %s\n", name)
	return nil
}

// completeContexts completes context names for `config use` and --context.
func (e *env) completeContexts(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	cf, err := e.conf.Load()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return cf.ContextNames(), cobra.ShellCompDirectiveNoFileComp
}
