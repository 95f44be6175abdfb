// Package cli is rungs' command line: flags and environment become a ladder
// and broker clients, each subcommand does one job, and every failure is one
// line on stderr with a meaningful exit code. Scripts depend on this
// surface, so human output and --json are both contracts.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/ui"
)

// Exit codes (ops.ExitCode classifies an error into one).
const (
	ExitOK    = ops.ExitOK
	ExitError = ops.ExitError
	ExitUsage = ops.ExitUsage
	ExitDrift = ops.ExitDrift
)

// Version is set at build time with -ldflags "-X .../cli.Version=...".
var Version = "dev"

// exitError carries an exit code other than ExitError through cobra
// (ops.Coded); with no error it ends the command without a message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

// usageErr marks bad input: the command was not run.
func usageErr(format string, a ...any) error {
	return &exitError{ExitUsage, fmt.Errorf(format, a...)}
}

// IO is where a command reads and writes; tests pass buffers.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	// Interactive says stdin is a terminal, so a typed confirmation can be
	// asked for instead of requiring --yes.
	Interactive bool
	Getenv      func(string) string
	// Width is the terminal's width for tables; 0 when not a terminal.
	Width int
}

// env is one invocation: the parsed options plus lazily opened clients.
type env struct {
	IO
	// screen is Out as given: the console draws on it and chooses its
	// own colours; Out itself drops what the output cannot show.
	screen io.Writer
	opts   options
	// flags are the root's persistent flags, to tell a flag given
	// explicitly from its default.
	flags *pflag.FlagSet
	conf  ops.ConfigSource
	// cl is nil until the broker configuration is first asked for: it is
	// resolved from flags, environment and context once they are parsed.
	cl *clients
}

// options are the flags shared by every command.
type options struct {
	url, mgmtURL, vhost string
	caCert, cert, key   string
	readOnly, json, yes bool
	timeout             time.Duration
	refresh             time.Duration
	ladder              ladderFlags
	noColor             bool
}

// Run executes rungs with args and returns the process exit code.
func Run(ctx context.Context, args []string, io IO) int {
	if io.Getenv == nil {
		io.Getenv = os.Getenv
	}
	e := &env{IO: io, screen: io.Out}
	// What a command prints is plain text to a pipe or a file.
	e.Out, e.Err = ui.StyledWriter(io.Out, io.Getenv), ui.StyledWriter(io.Err, io.Getenv)
	defer e.close()
	root := e.rootCommand()
	root.SetArgs(args)
	root.SetIn(io.In)
	root.SetOut(e.Out)
	root.SetErr(e.Err)
	err := root.ExecuteContext(ctx)
	var xe *exitError
	if err != nil && (!errors.As(err, &xe) || xe.err != nil) {
		fmt.Fprintln(io.Err, "rungs: "+oneLine(broker.Redact(err.Error())))
	}
	return ops.ExitCode(err)
}

// oneLine folds an error onto one line: operators grep logs line by line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func (e *env) close() {
	if e.cl != nil {
		e.cl.close()
	}
}

func (e *env) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "rungs",
		Short: "See, check and drive RabbitMQ delay ladders",
		Long: `rungs shows and drives RabbitMQ delay ladders: queues with TTLs chained by
dead-letter exchanges, where a message waits in the rungs whose TTLs add up
to its delay. A new ladder is direct by default: radix 16 (a rung for each
hex digit of each level), each message carrying its path in its BCC header.
rungs also finds NServiceBus', Celery's and Terraform-built ladders.

It declares a ladder and checks it for drift, traces the path a delay takes,
publishes with confirms, and watches every rung's depth, rates, stalls and
backlogs with a forecast of when messages arrive. It finds any scheduled
message and cancels, reschedules or fires it; peeks at parked messages and
replays dead letters; migrates messages between ladders and from other
delay queues or the delayed-message plugin; purges a queue or a ladder.
With no subcommand it opens the console.`,
		Example: `  rungs apply --ladder jobs --unit 1s --max-delay 7d
  rungs trace 90s --ladder jobs --to orders.retry
  rungs publish --ladder jobs --delay 1h30m --to orders.retry --body @job.json
  rungs status --ladder jobs
  rungs scheduled --ladder jobs --id order-8812
  rungs replay --from orders.parked --to-origin --dry-run
  rungs migrate --from jobs --to jobs2 --dry-run
  rungs plan --ladder jobs     # exit 3 on drift
  rungs                        # the console`,
		Version:       ops.ReadBuildInfo(Version, debug.ReadBuildInfo).Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE:          e.runConsole,
		// A bad config file or an unknown context is bad input for every
		// command, reported before anything runs.
		PersistentPreRunE: func(*cobra.Command, []string) error { return e.configErr() },
	}
	f := root.PersistentFlags()
	e.flags = f
	e.conf.Getenv = e.Getenv
	// Defaults from the environment are applied in config(), not here:
	// a flag's default is printed by --help, and RUNGS_URL holds a password.
	f.StringVar(&e.opts.url, "url", "", "AMQP URL, amqps:// for TLS (env RUNGS_URL; default: guest on localhost:5672)")
	f.StringVar(&e.opts.mgmtURL, "mgmt-url", "", "management API URL (env RUNGS_MGMT_URL; default: the AMQP host, port 15672)")
	f.StringVar(&e.opts.vhost, "vhost", "", "vhost (env RUNGS_VHOST; default: the URL's, else /)")
	f.StringVar(&e.opts.caCert, "ca-cert", "", "CA certificate file for TLS")
	f.StringVar(&e.opts.cert, "cert", "", "client certificate file for TLS")
	f.StringVar(&e.opts.key, "key", "", "client key file for TLS")
	f.BoolVar(&e.opts.readOnly, "read-only", false, "refuse every action that changes the broker (a context may set it; --read-only=false overrides)")
	f.BoolVar(&e.opts.json, "json", false, "print machine-readable JSON")
	f.DurationVar(&e.opts.timeout, "timeout", 10*time.Second, "timeout for each broker request")
	f.DurationVar(&e.opts.refresh, "refresh", 0, "console refresh interval (default: the broker's statistics interval, 5s)")
	f.StringVar(&e.conf.PathFlag, "config", "", "config file with named contexts (env RUNGS_CONFIG; default: $XDG_CONFIG_HOME/rungs/config.json)")
	f.StringVar(&e.conf.ContextFlag, "context", "", "named broker from the config file (env RUNGS_CONTEXT; default: its current_context)")
	e.opts.ladder.register(f)
	registerCompletions(root, e.completeLadders, e.completeVhosts, e.completeContexts)
	root.AddCommand(
		e.applyCommand(), e.planCommand(), e.traceCommand(), e.publishCommand(),
		e.statusCommand(), e.discoverCommand(), e.purgeCommand(), e.teardownCommand(),
		e.configCommand(), e.exportCommand(), e.doctorCommand(), e.peekCommand(), e.replayCommand(), e.migrateCommand(), e.scheduledCommand(), e.workerCommand(), e.benchCommand(), e.unstallCommand(), e.rerouteCommand(),
		e.versionCommand(), e.exporterCommand(), e.bridgeCommand(), manCommand(), docsCommand(),
	)
	return root
}

// clients are the broker's clients, with the configuration that flags,
// environment and context describe (see ops.ConfigSource.Resolve).
func (e *env) clients() *clients {
	if e.cl == nil {
		cfg, err := e.conf.Resolve(e.brokerFlags())
		e.cl = &clients{cfg: cfg, err: err}
	}
	return e.cl
}

// config is the broker configuration. If it does not resolve, configErr
// says why and the clients refuse to open.
func (e *env) config() broker.Config { return e.clients().cfg }

// configErr is why the configuration does not resolve, if it does not.
func (e *env) configErr() error { return e.clients().err }

// vhost is the vhost commands act on.
func (e *env) vhost() string { return e.config().EffectiveVhost() }
