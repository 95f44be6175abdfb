package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// check is one line of the doctor's report (ops.Finding).
type check = ops.Finding

// Check outcomes, mildest first.
const (
	checkOK      = ops.FindingOK
	checkInfo    = ops.FindingInfo
	checkWarn    = ops.FindingWarn
	checkProblem = ops.FindingProblem
)

func (e *env) doctorCommand() *cobra.Command {
	var allVhosts bool
	var target, definitions string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the broker and the ladders: version, feature flags, plugins, integrity",
		Long: `doctor checks what the ladders on a broker need and whether they are whole:

  broker          the management API answers; RabbitMQ and Erlang versions;
                  every node is running; AMQP accepts the credentials
  plugins         rabbitmq_management on every node
  feature flags   quorum ladders need quorum_queue, and their at-least-once
                  dead-lettering needs RabbitMQ 3.10+ and stream_queue
  each ladder     drift from its plan (missing, extra or changed objects),
                  stuck rungs, stalled dead-lettering (quorum rungs whose
                  expired messages do not move on), unroutable messages,
                  consumers on delay queues; quorum delayed retry on a rung
                  (x-delayed-retry-* arguments or policy keys: on RabbitMQ
                  4.3 it holds a handed-back message beyond the TTL)

When a quorum rung holds expired messages waiting to be dead-lettered,
doctor watches it for up to 15s (its TTL, at most one statistics interval,
plus two intervals) to tell a busy rung from a stalled one.

With --ladder it checks that ladder only (and says if it is not there). It
reads only: nothing on the broker changes. It exits 0 when nothing is wrong
(warnings included), 1 when a check found a problem.`,
		Example: `  rungs doctor
  rungs doctor --ladder jobs
  rungs doctor --all-vhosts --json | jq '.checks[] | select(.status == "problem")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := ops.ParseTarget(target)
			if err != nil {
				return err
			}
			if definitions != "" {
				return doctorDefinitions(e.view(), e.vhost(), definitions, t)
			}
			return e.runDoctor(cmd.Context(), e.opts.ladder.named(), allVhosts, t)
		},
	}
	cmd.Flags().BoolVar(&allVhosts, "all-vhosts", false, "check the ladders of every vhost")
	cmd.Flags().StringVar(&target, "target", "", "also check the delays against the release an upgrade goes to, e.g. 4.3 (see docs/delays.md)")
	cmd.Flags().StringVar(&definitions, "definitions", "", "check the delays of an exported definitions file instead of a broker (with --target)")
	return cmd
}

// runDoctor reads the facts, lets ops.Doctor judge them and prints the
// findings: a problem among them exits 1.
func (e *env) runDoctor(ctx context.Context, only string, allVhosts bool, target topology.Version) error {
	c := e.clients()
	m, err := c.management()
	if err != nil {
		return err
	}
	facts, err := doctorReader{m: m, clients: c, vhost: e.vhost(), timeout: e.opts.timeout, view: e.view(), unrouted: e.readUnrouted}.facts(ctx, only, allVhosts)
	if err != nil {
		return err
	}
	facts.Target = target
	return e.view().printDoctor(ops.Doctor(facts))
}

// printDoctor prints doctor's findings, text or JSON: a problem among them
// exits 1.
func (v view) printDoctor(checks ops.Findings) error {
	problems := checks.Problems()
	if v.json {
		if err := writeJSON(v.Out, map[string]any{"ok": problems == 0, "problems": problems, "checks": checks}); err != nil {
			return err
		}
	} else {
		printChecks(v, checks, problems)
	}
	if problems > 0 {
		return &exitError{ExitError, nil}
	}
	return nil
}

// doctorReader reads what ops.Doctor judges: through the management API,
// the command's AMQP connection (its vhost's Celery ladders) and one of
// its own to each other vhost doctor samples keys in, each request within
// timeout; view is where the stall watch says how long it waits.
type doctorReader struct {
	m       *broker.Management
	clients *clients
	vhost   string
	timeout time.Duration
	view    view
	// unrouted reads the destinations in the command's vhost's
	// unroutable queues (env.readUnrouted); nil reads none.
	unrouted func(context.Context, ops.Observer) ops.Observer
}

// facts reads what ops.Doctor judges. A failed read is a fact to report,
// not an error; only an unreadable list of vhosts stops doctor.
func (d doctorReader) facts(ctx context.Context, only string, allVhosts bool) (ops.DoctorFacts, error) {
	m := d.m
	call := func(f func(context.Context) error) error { return d.call(ctx, f) }
	f := ops.DoctorFacts{API: m.URL(), User: m.User(), Only: only, Flags: map[string]bool{}}
	if f.OverviewErr = call(func(c context.Context) (err error) { f.Overview, err = m.Overview(c); return }); f.OverviewErr != nil {
		return f, nil
	}
	if c, err := d.clients.amqp(ctx); err != nil {
		f.AMQPErr = err
	} else {
		f.AMQPVhost = c.Vhost()
	}
	f.NodesErr = call(func(c context.Context) (err error) { f.Nodes, err = m.Nodes(c); return })
	f.FlagsErr = call(func(c context.Context) error {
		ffs, err := m.FeatureFlags(c)
		for _, ff := range ffs {
			f.Flags[ff.Name] = ff.Enabled()
		}
		return err
	})
	vhosts := []string{d.vhost}
	if allVhosts {
		if err := call(func(c context.Context) (err error) { vhosts, err = m.Vhosts(c); return }); err != nil {
			return f, err
		}
	}
	d.readVhosts(ctx, &f, vhosts, only)
	if only == "" {
		d.readVhostWide(ctx, &f)
	}
	return f, nil
}

// call runs f within the reader's timeout.
func (d doctorReader) call(ctx context.Context, f func(context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	return f(cctx)
}

// readVhosts observes the ladders of each vhost (only: the ladder of that
// name) and what ops.Doctor judges of them.
func (d doctorReader) readVhosts(ctx context.Context, f *ops.DoctorFacts, vhosts []string, only string) {
	insp := timed{Insp: d.m, Timeout: d.timeout}
	observers := map[string]ops.Observer{}
	for _, vh := range vhosts {
		o, err := observeLadders(ctx, insp, ops.DoctorScope(vh, only))
		if err != nil {
			f.Vhosts = append(f.Vhosts, ops.DoctorVhost{Vhost: vh, ReadErr: err})
			continue
		}
		observers[vh] = o
		f.Vhosts = append(f.Vhosts, ops.DoctorVhost{Vhost: vh, Found: o.Found()})
	}
	// Stalled dead-lettering shows only across samples: watch the vhosts
	// whose rungs hold expired messages (a no-op for the others).
	for i := range f.Vhosts {
		vh := &f.Vhosts[i]
		o, ok := observers[vh.Vhost]
		if !ok {
			continue
		}
		o, vh.WatchErr = watchStalls(ctx, d.view, insp, o)
		if vh.Vhost == d.vhost && d.unrouted != nil {
			o = d.unrouted(ctx, o)
		}
		vh.Report = o.Report(o.At())
		vh.Policies, vh.PoliciesErr = d.quorumPolicies(ctx, vh.Report)
		vh.KeySamples = d.sampleCeleryKeys(ctx, vh)
	}
}

// readVhostWide reads what doctor asks of each readable vhost as a whole,
// not of one ladder. The delays outside ladders: a paged listing of every
// queue, since the management API cannot filter by arguments. The quorum
// queues under delayed retry, on a release that has it: found in that
// listing (ops.ReadRetryListed), or, where it failed, by the sorted
// listings status reads (ops.ReadRetry).
func (d doctorReader) readVhostWide(ctx context.Context, f *ops.DoctorFacts) {
	v := f.Version()
	for i := range f.Vhosts {
		vh := &f.Vhosts[i]
		if vh.ReadErr != nil {
			continue
		}
		vh.DelaysRead = true
		vh.DelaysErr = d.call(ctx, func(c context.Context) (err error) {
			vh.Delays, vh.DelaySnap, err = ops.Delays(c, d.m, vh.Vhost, vh.Found)
			return err
		})
		listed := vh.DelaySnap.Queues
		vh.DelaySnap = vh.DelaySnap.Merge(vh.Report.Snapshot)
		if !v.QuorumDelayedRetry() {
			continue
		}
		vh.RetryRead = true
		vh.RetryErr = d.call(ctx, func(c context.Context) (err error) {
			if vh.DelaysErr == nil {
				vh.Retry, err = ops.ReadRetryListed(c, d.m, vh.Vhost, v, listed)
			} else {
				vh.Retry, err = ops.ReadRetry(c, d.m, vh.Vhost, v)
			}
			return err
		})
		vh.Report = vh.Report.WithRetry(vh.Retry)
	}
}

// sampleCeleryKeys reads the routing keys at the heads of the Celery
// ladders' rungs of one vhost (ops.SampleKeys): through the command's
// connection in its own vhost, through one opened for the purpose in
// another (--all-vhosts), closed when the samples are read.
func (d doctorReader) sampleCeleryKeys(ctx context.Context, vh *ops.DoctorVhost) []ops.KeySample {
	var out []ops.KeySample
	ladders := ops.Ladders(vh.Found)
	var conn *broker.Conn
	var connErr error
	for _, l := range ops.KeySampled(vh.Found) {
		if conn == nil && connErr == nil {
			conn, connErr = d.amqpTo(ctx, vh.Vhost)
			if conn != nil && vh.Vhost != d.vhost {
				defer conn.Close()
			}
		}
		if connErr != nil {
			out = append(out, ops.KeySample{Ladder: l.Name, Err: connErr})
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 2*d.timeout)
		out = append(out, ops.SampleKeys(cctx, d.m, conn, l, vh.Report.Snapshot, ladders))
		cancel()
	}
	return out
}

// amqpTo is an AMQP connection to vhost: the command's own in its vhost,
// else a new one the caller closes.
func (d doctorReader) amqpTo(ctx context.Context, vhost string) (*broker.Conn, error) {
	if vhost == d.vhost {
		return d.clients.amqp(ctx)
	}
	if d.clients.err != nil {
		return nil, d.clients.err
	}
	cfg := d.clients.cfg
	cfg.Vhost = vhost
	return broker.Dial(ctx, cfg)
}

// quorumPolicies reads the policies of a vhost where ops.ReadsPolicies
// says to.
func (d doctorReader) quorumPolicies(ctx context.Context, rep health.Report) (broker.Policies, error) {
	if !ops.ReadsPolicies(rep) {
		return broker.Policies{}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	return d.m.Policies(ctx, rep.Vhost)
}

func printChecks(v view, checks []check, problems int) {
	marks := map[string]string{checkOK: "✓", checkInfo: "·", checkWarn: "!", checkProblem: "✗"}
	// Checks of one area are printed together, areas in the order they
	// first came up (a ladder's needs are judged after it is found).
	var areas []string
	byArea := map[string][]check{}
	for _, c := range checks {
		if _, seen := byArea[c.Area]; !seen {
			areas = append(areas, c.Area)
		}
		byArea[c.Area] = append(byArea[c.Area], c)
	}
	for _, area := range areas {
		fmt.Fprintln(v.Out, area)
		for _, c := range byArea[area] {
			fmt.Fprintf(v.Out, "  %s %s\n", marks[c.Status], c.Text)
		}
	}
	if problems == 0 {
		fmt.Fprintln(v.Out, "no problems found")
	} else {
		fmt.Fprintf(v.Out, "%s found\n", topology.Counted(problems, "problem", "problems"))
	}
}
