// Command rungs is a terminal console and CLI for RabbitMQ delay ladders.
// See README.md, or run rungs --help.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/charmbracelet/x/term"

	"github.com/rungs-dev/rungs/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	width := 0
	if term.IsTerminal(os.Stdout.Fd()) {
		width, _, _ = term.GetSize(os.Stdout.Fd())
	}
	code := cli.Run(ctx, os.Args[1:], cli.IO{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		Interactive: term.IsTerminal(os.Stdin.Fd()),
		Width:       width,
	})
	stop()
	os.Exit(code)
}
