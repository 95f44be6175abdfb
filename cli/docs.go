package cli

import (
	"fmt"
	"os"
	"path"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// docsCommand writes the CLI reference as Markdown, one page per command,
// from the same cobra commands the man pages come from, so the reference in
// docs/cli/ cannot say something --help does not. It is hidden: it is a
// maintainer's tool (`go run . docs docs/cli`), and a test fails when the
// committed pages differ from what it writes.
func docsCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "docs DIR",
		Short:  "Write the Markdown CLI reference into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		// The pages do not depend on the broker configuration.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, args []string) error {
			return WriteReference(cmd.Root(), args[0])
		},
	}
}

// WriteReference writes one Markdown page per visible command of root into
// dir, without dates, so that the pages are reproducible.
func WriteReference(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root.DisableAutoGenTag = true
	// A build's version would make the pages differ between checkouts.
	root.Version = ""
	link := func(name string) string { return path.Base(name) }
	noFront := func(string) string { return "" }
	if err := doc.GenMarkdownTreeCustom(root, dir, noFront, link); err != nil {
		return fmt.Errorf("CLI reference: %w", err)
	}
	return nil
}

// ReferenceRoot is the command tree the reference is written from, with no
// broker configuration and nothing run.
func ReferenceRoot() *cobra.Command {
	e := &env{IO: IO{Getenv: func(string) string { return "" }}}
	return e.rootCommand()
}

// Parse checks a command line the way rungs would parse it (subcommand,
// flags and the number of arguments) without running it. The docs tests run
// every `rungs …` example through it.
func Parse(args []string) error {
	root := ReferenceRoot()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return fmt.Errorf("%s: %w", cmd.CommandPath(), err)
	}
	return nil
}
