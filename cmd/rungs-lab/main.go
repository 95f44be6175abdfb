// Command rungs-lab measures rungs itself, from outside: what its commands
// and its console cost, one ladder beside tens of thousands of other
// queues, a million messages in one ladder and a replay killed with
// SIGKILL. It is not shipped: run it from the source tree,
//
//	go run ./cmd/rungs-lab scale -n 1000000 -delays 5s..1m
//	go run ./cmd/rungs-lab beside -others 10000,50000
//	go run ./cmd/rungs-lab scan -n 1000000
//	go run ./cmd/rungs-lab console
//
// against the broker RUNGS_URL and RUNGS_MGMT_URL name (the local
// broker's defaults otherwise). scale and beside run the rungs binary as
// a user would: one built from this tree, or -rungs PATH.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rungs-dev/rungs/bench"
	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/internal/lab"
	"github.com/rungs-dev/rungs/topology"
)

const usage = `rungs-lab measures rungs itself against a real broker (RUNGS_URL,
RUNGS_MGMT_URL), each phase in vhosts of its own that it removes:

  scale    N persistent messages in the ladder ` + "`rungs apply`" + ` declares by default,
           each checked on arrival, what ` + "`rungs status`" + ` and a console refresh
           cost while it drains, and a ` + "`rungs replay`" + ` of N dead letters killed
           with SIGKILL a third of the way
  beside   ` + "`rungs status --ladder`" + ` of the default ladder alone and beside N
           other queues: time, requests, bytes and peak RSS; then peek,
           replay --dry-run, purge and unstall of the same ladder
  scan     ` + "`rungs scheduled`" + ` over N messages in the default ladder: its rate
           against the broker's plain consume rate, its peak RSS, what it adds
           to the lateness of the messages it reads, and the listed due times'
           error against the real arrivals
  console  what the console's observer reads from a vhost of -queues queues,
           and what building and rendering a ladder's view take

Usage: rungs-lab PHASE [flags] [-- flags of rungs plan for the ladder]
       rungs-lab PHASE -h
`

func main() {
	lab.Spawn() // when this process is the spawner of a measured command
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageError is bad input: exit status 2, as flag's own errors.
type usageError struct{ error }

func usageErr(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// common are the flags every phase takes.
type common struct {
	json                  bool
	markdown              string
	caCert, cert, key     string
	timeout               time.Duration
	rungs, ladder         string
	planArgs              []string
	needsRungs, hasLadder bool
}

func (c *common) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.json, "json", false, "print the report as JSON")
	fs.StringVar(&c.markdown, "markdown", "", "also write the Markdown report to FILE")
	fs.StringVar(&c.caCert, "ca-cert", "", "CA certificate file for TLS")
	fs.StringVar(&c.cert, "cert", "", "client certificate file for TLS")
	fs.StringVar(&c.key, "key", "", "client key file for TLS")
	fs.DurationVar(&c.timeout, "timeout", broker.DefaultTimeout, "timeout for each management request")
	if c.needsRungs {
		fs.StringVar(&c.rungs, "rungs", "", "the rungs binary to measure (default: build this tree's)")
	}
	if c.hasLadder {
		fs.StringVar(&c.ladder, "ladder", "rungs", "name of the ladder the phase declares")
	}
}

// config is the broker the lab measures against.
func (c *common) config() broker.Config {
	return broker.Config{
		URL: os.Getenv("RUNGS_URL"), MgmtURL: os.Getenv("RUNGS_MGMT_URL"),
		CACert: c.caCert, ClientCert: c.cert, ClientKey: c.key, Timeout: c.timeout,
	}
}

// report is what every phase hands back to be printed.
type report interface{ Markdown() string }

// run is the lab's command line; it returns the exit status: 0, 1 when
// the run found problems or could not be carried out, 2 for bad input.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	rep, problems, c, err := phase(ctx, args[0], args[1:], stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)) || errors.Is(err, bench.ErrOptions):
		fmt.Fprintf(stderr, "rungs-lab %s: %v\n", args[0], err)
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "rungs-lab %s: %v\n", args[0], err)
		return 1
	}
	if err := c.write(rep, stdout); err != nil {
		fmt.Fprintf(stderr, "rungs-lab %s: %v\n", args[0], err)
		return 1
	}
	if len(problems) > 0 {
		fmt.Fprintf(stderr, "rungs-lab %s found %s, first: %s\n", args[0], topology.Counted(len(problems), "problem", "problems"), problems[0])
		return 1
	}
	return 0
}

// write prints the report as Markdown (and to -markdown) or JSON.
func (c common) write(rep report, w io.Writer) error {
	md := rep.Markdown()
	if c.markdown != "" {
		if err := os.WriteFile(c.markdown, []byte(md), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", c.markdown, err)
		}
	}
	if c.json {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	_, err := fmt.Fprint(w, md)
	return err
}

// phase parses a phase's flags and runs it.
func phase(ctx context.Context, name string, args []string, log io.Writer) (report, []string, common, error) {
	fs := flag.NewFlagSet("rungs-lab "+name, flag.ContinueOnError)
	// Bad input is one line, below; -h lists the flags.
	fs.SetOutput(io.Discard)
	var c common
	check := func() error { return nil }
	var runPhase func(cfg broker.Config, m *broker.Management, binary string, l topology.Ladder) (report, []string, error)
	switch name {
	case "scale":
		c.needsRungs, c.hasLadder = true, true
		var sf scaleFlags
		sf.register(fs)
		var o lab.ScaleOptions
		check = func() (err error) {
			o, err = sf.options()
			return err
		}
		runPhase = func(cfg broker.Config, m *broker.Management, binary string, l topology.Ladder) (report, []string, error) {
			o.Ladder, o.Binary, o.Log = l, binary, log
			rep, err := lab.RunScale(ctx, cfg, m, o)
			return rep, rep.Problems, err
		}
	case "beside":
		c.needsRungs, c.hasLadder = true, true
		o := lab.DefaultBesideOptions()
		others := intList(o.Others)
		fs.Var(&others, "others", "numbers of other queues to put beside the ladder, one vhost each")
		fs.IntVar(&o.InFlight, "in-flight", o.InFlight, "messages waiting in the ladder while it is read")
		fs.IntVar(&o.Runs, "runs", o.Runs, "timed runs of each read; the report gives the median")
		runPhase = func(cfg broker.Config, m *broker.Management, binary string, l topology.Ladder) (report, []string, error) {
			o.Others, o.Ladder, o.Binary, o.Log = others, l, binary, log
			rep, err := lab.RunBeside(ctx, cfg, m, o)
			return rep, rep.Problems, err
		}
	case "scan":
		c.needsRungs, c.hasLadder = true, true
		o := lab.DefaultScanOptions()
		fs.IntVar(&o.N, "n", o.N, "messages waiting in the ladder while `rungs scheduled` scans it")
		fs.IntVar(&o.Probes, "probes", o.Probes, "messages due soon, found by the scan and timed at their destination")
		fs.DurationVar(&o.ProbeMax, "probe-max", o.ProbeMax, "the probes are due within this")
		runPhase = func(cfg broker.Config, m *broker.Management, binary string, l topology.Ladder) (report, []string, error) {
			o.Ladder, o.Binary, o.Log = l, binary, log
			rep, err := lab.RunScan(ctx, cfg, m, o)
			return rep, rep.Problems, err
		}
	case "console":
		o := lab.DefaultConsoleOptions()
		fs.IntVar(&o.Queues, "queues", o.Queues, "queues in the console's vhost")
		fs.BoolVar(&o.Smoke, "smoke", false, "time each operation once: checks what is read, measures no time")
		runPhase = func(cfg broker.Config, m *broker.Management, _ string, _ topology.Ladder) (report, []string, error) {
			rep, err := lab.RunConsole(ctx, cfg, m, o)
			return rep, rep.Problems, err
		}
	default:
		return nil, nil, c, usageErr("no phase %q (scale, beside, scan or console)", name)
	}
	c.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(log, "Usage of rungs-lab %s:\n", name)
			fs.SetOutput(log)
			fs.PrintDefaults()
			return nil, nil, c, err
		}
		return nil, nil, c, usageErr("%v", err)
	}
	c.planArgs = fs.Args()
	if len(c.planArgs) > 0 && !c.hasLadder {
		return nil, nil, c, usageErr("%s takes no arguments, got %q", name, c.planArgs)
	}
	if err := check(); err != nil {
		return nil, nil, c, err
	}
	cfg := c.config()
	m, err := broker.NewManagement(cfg)
	if err != nil {
		return nil, nil, c, err
	}
	var binary string
	var l topology.Ladder
	if c.needsRungs {
		if binary, err = rungsBinary(ctx, c.rungs, log); err != nil {
			return nil, nil, c, err
		}
		if l, err = lab.DefaultLadder(ctx, binary, cfg, c.ladder, c.planArgs...); err != nil {
			return nil, nil, c, err
		}
		fmt.Fprintf(log, "ladder %s: %s, %s, radix %d, %d levels of %s, as rungs apply declares it\n",
			l.Name, l.Layout, l.QueueType, l.Radix, l.Levels, topology.FormatDelay(l.Unit))
	}
	rep, problems, err := runPhase(cfg, m, binary, l)
	return rep, problems, c, err
}

// rungsBinary is the rungs binary to measure: given, or built from the
// module this command is run in.
func rungsBinary(ctx context.Context, given string, log io.Writer) (string, error) {
	if given != "" {
		return given, nil
	}
	dir, err := os.MkdirTemp("", "rungs-lab-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "rungs")
	fmt.Fprintf(log, "building rungs into %s\n", bin)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/rungs-dev/rungs")
	cmd.Stderr = log
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build rungs (or give -rungs PATH): %w", err)
	}
	return bin, nil
}

// scaleFlags are the scale phase's own flags.
type scaleFlags struct {
	n, size int
	delays  string
	seed    uint64
}

func (sf *scaleFlags) register(fs *flag.FlagSet) {
	d := lab.DefaultScaleOptions()
	fs.IntVar(&sf.n, "n", d.N, "messages into the ladder, and dead letters replayed")
	fs.StringVar(&sf.delays, "delays", topology.FormatDelay(d.MinDelay)+".."+topology.FormatDelay(d.MaxDelay), "delays, MIN..MAX, drawn uniformly in whole units of the ladder")
	fs.IntVar(&sf.size, "size", d.Size, "message body bytes")
	fs.Uint64Var(&sf.seed, "seed", d.Seed, "seed of the drawn delays")
}

// options reads the scale flags.
func (sf scaleFlags) options() (lab.ScaleOptions, error) {
	o := lab.DefaultScaleOptions()
	if sf.n < 1 {
		return o, usageErr("-n %d: want at least 1 message", sf.n)
	}
	o.N, o.Size, o.Seed = sf.n, sf.size, sf.seed
	lo, hi, ok := strings.Cut(sf.delays, "..")
	if !ok {
		return o, usageErr("-delays %q: want MIN..MAX, e.g. 5s..1m", sf.delays)
	}
	var err error
	if o.MinDelay, err = topology.ParseDelay(lo); err != nil {
		return o, usageErr("-delays: %v", err)
	}
	if o.MaxDelay, err = topology.ParseDelay(hi); err != nil {
		return o, usageErr("-delays: %v", err)
	}
	if o.MinDelay <= 0 || o.MaxDelay < o.MinDelay {
		return o, usageErr("-delays %q: want 0 < MIN ≤ MAX", sf.delays)
	}
	return o, nil
}

// intList is a flag of comma-separated positive whole numbers.
type intList []int

func (l *intList) String() string {
	parts := make([]string, len(*l))
	for i, n := range *l {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

func (l *intList) Set(s string) error {
	*l = nil
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return fmt.Errorf("%q is not a positive whole number", part)
		}
		*l = append(*l, n)
	}
	return nil
}
