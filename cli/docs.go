package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/rungs-dev/rungs/ops"
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

// Check runs a command line as rungs would, against a broker address where
// nothing listens, and returns the error when rungs rejects it as bad input
// (exit 2): its flags, arguments and the checks a command makes before it
// connects, such as a reschedule time that has passed. A line that gets as
// far as the broker passes. Commands that would not end on their own, or
// that write files (the console, the exporter, the worker, export, config,
// docs, man), are only parsed. The docs tests run every example through it.
func Check(args []string) error {
	if err := Parse(args); err != nil {
		return err
	}
	cmd, _, _ := ReferenceRoot().Find(args)
	if cmd == nil || cmd.Parent() == nil {
		return nil
	}
	top := cmd
	for top.Parent().Parent() != nil {
		top = top.Parent()
	}
	if ops.ExampleOnlyParsed(top.Name()) {
		return nil
	}
	offline := map[string]string{
		"RUNGS_URL":      "amqp://guest:guest@127.0.0.1:1/",
		"RUNGS_MGMT_URL": "http://127.0.0.1:1",
		// No config file: the user's own contexts play no part.
		"XDG_CONFIG_HOME": filepath.Join(os.TempDir(), "rungs-check-no-such-dir"),
	}
	var stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := Run(ctx, args, IO{
		In: strings.NewReader(""), Out: io.Discard, Err: &stderr,
		Getenv: func(k string) string { return offline[k] },
	})
	if code == ExitUsage {
		return ops.ExampleRefused(stderr.String())
	}
	return nil
}
