// Package examples checks the command lines the documentation shows:
// each `rungs …` example must be one rungs accepts. It is the docs
// tests' tool, not shipped: the binary never judges its own examples.
package examples

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rungs-dev/rungs/cli"
)

// Check runs a command line as rungs would, against a broker address where
// nothing listens, and returns the error when rungs rejects it as bad input
// (exit 2): its flags, arguments and the checks a command makes before it
// connects, such as a reschedule time that has passed. A line that gets as
// far as the broker passes. Commands that would not end on their own, or
// that write files (the console, the exporter, the worker, export, config,
// docs, man), are only parsed. The docs tests run every example through it.
func Check(args []string) error {
	if err := cli.Parse(args); err != nil {
		return err
	}
	cmd, _, _ := cli.ReferenceRoot().Find(args)
	if cmd == nil || cmd.Parent() == nil {
		return nil
	}
	top := cmd
	for top.Parent().Parent() != nil {
		top = top.Parent()
	}
	if onlyParsed(top.Name()) {
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
	code := cli.Run(ctx, args, cli.IO{
		In: strings.NewReader(""), Out: io.Discard, Err: &stderr,
		Getenv: func(k string) string { return offline[k] },
	})
	if code == cli.ExitUsage {
		return refused(stderr.String())
	}
	return nil
}

// onlyParsed reports whether the documentation's examples of the
// top-level command are only parsed, not run offline: they would not end
// on their own (the exporter, the worker, a benchmark) or they write files
// (config, docs, man, completion, export).
func onlyParsed(command string) bool {
	switch command {
	case "exporter", "worker", "config", "docs", "man", "completion", "bench", "help", "export":
		return true
	}
	return false
}

// exampleUsageFine are what a usage error of an example run offline may
// say and still be a good example.
var exampleUsageFine = []string{
	// An example may leave the confirmation to the terminal.
	"needs --yes",
	// It got as far as the broker, which is not there.
	"connection refused",
	// A file or a context of the reader's own.
	"no such file or directory", "no context ",
	// Without the broker the ladder's shape is the default's, so a key
	// from a real ladder of another height cannot decode.
	"does not belong to this ladder",
}

// refused judges an example that, run offline, exited as bad input
// with stderr: nil when the refusal is one a good example meets offline,
// otherwise the refusal.
func refused(stderr string) error {
	msg := strings.TrimSpace(stderr)
	for _, fine := range exampleUsageFine {
		if strings.Contains(msg, fine) {
			return nil
		}
	}
	return fmt.Errorf("%s", msg)
}
