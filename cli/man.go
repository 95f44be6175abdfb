package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// manCommand writes a man page per command. It is hidden: release builds
// run it to put the pages into the archives (see .goreleaser.yaml).
func manCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "man DIR",
		Short:  "Write man pages into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		// The pages do not depend on the broker configuration.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true // reproducible pages: no date
			hdr := &doc.GenManHeader{Title: "RUNGS", Section: "1", Source: "rungs " + root.Version, Manual: "rungs manual"}
			if err := doc.GenManTree(root, hdr, args[0]); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			return nil
		},
	}
}
