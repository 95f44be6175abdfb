package cli

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// completionTimeout bounds the broker lookups behind a TAB: a shell that
// hangs on a slow broker is worse than no suggestions.
const completionTimeout = 2 * time.Second

// registerCompletions adds the completion command and dynamic completion
// of the persistent flags: ladders, vhosts and contexts complete as asked.
func registerCompletions(root *cobra.Command, ladders, vhosts, contexts cobra.CompletionFunc) {
	// Cobra's default completion command has no examples; ours says how
	// to install the script in each shell.
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(completionCommand())
	fixed := func(vals ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return vals, cobra.ShellCompDirectiveNoFileComp
		}
	}
	_ = root.RegisterFlagCompletionFunc("ladder", ladders)
	_ = root.RegisterFlagCompletionFunc("vhost", vhosts)
	_ = root.RegisterFlagCompletionFunc("context", contexts)
	_ = root.RegisterFlagCompletionFunc("layout", fixed(topology.LayoutNames()...))
	_ = root.RegisterFlagCompletionFunc("queue-type", fixed(string(topology.Classic), string(topology.Quorum)))
	_ = root.RegisterFlagCompletionFunc("radix", fixed("2", "4", "8", "16"))
}

// completeLadders offers the names of the ladders in the vhost, discovered
// on the broker within completionTimeout; nothing if it does not answer.
func (e *env) completeLadders(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	m, err := e.clients().management()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	// Every ladder of the vhost, as discover reads them: filtered
	// listings, not the other queues.
	snap, err := ops.ReadLadder(ctx, m, e.vhost())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return ops.LadderCompletions(topology.Discover(snap), prefix), cobra.ShellCompDirectiveNoFileComp
}

// completeVhosts offers the vhosts the user can see.
func (e *env) completeVhosts(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	m, err := e.clients().management()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
	defer cancel()
	vs, err := m.Vhosts(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return vs, cobra.ShellCompDirectiveNoFileComp
}

func completionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Write the shell completion script",
		Long: `completion writes a script that teaches your shell to complete rungs'
commands and flags, including --ladder (the ladders discovered on the
broker, within 2 s), --vhost, --context, --layout and --queue-type.

  bash         needs the bash-completion package
  zsh          needs "autoload -U compinit; compinit" in ~/.zshrc
  fish, powershell`,
		Example: `  source <(rungs completion bash)                           # this shell only
  rungs completion bash > /etc/bash_completion.d/rungs      # every bash
  rungs completion zsh > "${fpath[1]}/_rungs"
  rungs completion fish > ~/.config/fish/completions/rungs.fish
  rungs completion powershell | Out-String | Invoke-Expression`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		// The script does not depend on the broker configuration.
		PersistentPreRunE:     func(*cobra.Command, []string) error { return nil },
		DisableFlagsInUseLine: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			write, ok := completionScripts[args[0]]
			if !ok {
				return usageErr("completion: unknown shell %q (bash, zsh, fish or powershell)", args[0])
			}
			return write(cmd.Root(), cmd.OutOrStdout())
		},
	}
}

// completionScripts writes each shell's script, with descriptions where
// the shell shows them.
var completionScripts = map[string]func(*cobra.Command, io.Writer) error{
	"bash":       func(root *cobra.Command, w io.Writer) error { return root.GenBashCompletionV2(w, true) },
	"zsh":        func(root *cobra.Command, w io.Writer) error { return root.GenZshCompletion(w) },
	"fish":       func(root *cobra.Command, w io.Writer) error { return root.GenFishCompletion(w, true) },
	"powershell": func(root *cobra.Command, w io.Writer) error { return root.GenPowerShellCompletionWithDesc(w) },
}
