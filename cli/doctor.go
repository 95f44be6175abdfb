package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rungs-dev/rungs/broker"
	"github.com/rungs-dev/rungs/health"
	"github.com/rungs-dev/rungs/ops"
	"github.com/rungs-dev/rungs/topology"
)

// Check outcomes, mildest first.
const (
	checkOK      = "ok"
	checkInfo    = "info"
	checkWarn    = "warn"
	checkProblem = "problem"
)

// check is one line of the doctor's report.
type check struct {
	Area   string `json:"area"`   // broker, feature-flags, plugins, ladder NAME
	Status string `json:"status"` // ok, info, warn, problem
	Text   string `json:"text"`
}

// Broker requirements of ladder features. Quorum queues arrived in 3.8;
// at-least-once dead-lettering (x-dead-letter-strategy, which every quorum
// ladder uses so that no message is lost between two rungs) in 3.10, and it
// needs the stream_queue feature flag besides quorum_queue (RabbitMQ's
// dead-lettering guide; NServiceBus' v2 delay infrastructure states the
// same two flags as its minimum).
var (
	minQuorum      = topology.Version{Major: 3, Minor: 8}
	minAtLeastOnce = topology.Version{Major: 3, Minor: 10}
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
			t, err := parseTarget(target)
			if err != nil {
				return err
			}
			if definitions != "" {
				return e.doctorDefinitions(definitions, t)
			}
			return e.runDoctor(cmd.Context(), e.opts.ladder.named(), allVhosts, t)
		},
	}
	cmd.Flags().BoolVar(&allVhosts, "all-vhosts", false, "check the ladders of every vhost")
	cmd.Flags().StringVar(&target, "target", "", "also check the delays against the release an upgrade goes to, e.g. 4.3 (see docs/delays.md)")
	cmd.Flags().StringVar(&definitions, "definitions", "", "check the delays of an exported definitions file instead of a broker (with --target)")
	return cmd
}

func (e *env) runDoctor(ctx context.Context, only string, allVhosts bool, target topology.Version) error {
	var checks []check
	add := func(area, status, format string, a ...any) {
		checks = append(checks, check{area, status, fmt.Sprintf(format, a...)})
	}
	report := func() error {
		problems := 0
		for _, c := range checks {
			if c.Status == checkProblem {
				problems++
			}
		}
		if e.opts.json {
			if err := writeJSON(e.Out, map[string]any{"ok": problems == 0, "problems": problems, "checks": checks}); err != nil {
				return err
			}
		} else {
			printChecks(e, checks, problems)
		}
		if problems > 0 {
			return &exitError{ExitError, nil}
		}
		return nil
	}
	m, err := e.management()
	if err != nil {
		return err
	}
	call := func(f func(context.Context) error) error {
		cctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
		defer cancel()
		return f(cctx)
	}

	var ov broker.Overview
	if err := call(func(c context.Context) (err error) { ov, err = m.Overview(c); return }); err != nil {
		add("broker", checkProblem, "management API at %s does not answer: %v", m.URL(), err)
		return report()
	}
	version, _ := topology.ParseVersion(ov.RabbitMQVersion)
	add("broker", checkOK, "management API at %s answers as %s: RabbitMQ %s, Erlang %s, node %s", m.URL(), m.User(), ov.RabbitMQVersion, ov.ErlangVersion, ov.Node)
	if c, err := e.amqp(ctx); err != nil {
		add("broker", checkProblem, "AMQP: %v", err)
	} else {
		add("broker", checkOK, "AMQP accepts the credentials (vhost %s)", c.Vhost())
	}

	var nodes []broker.Node
	if err := call(func(c context.Context) (err error) { nodes, err = m.Nodes(c); return }); err != nil {
		add("plugins", checkWarn, "cannot list the nodes' plugins: %v", err)
	} else {
		for _, n := range nodes {
			switch {
			case !n.Running:
				add("broker", checkProblem, "node %s is not running", n.Name)
			case contains(n.Plugins, "rabbitmq_management"):
				add("plugins", checkOK, "node %s runs %s", n.Name, strings.Join(n.Plugins, ", "))
			case n.Name == ov.Node:
				// The node that answered this very API runs it, whatever
				// its (perhaps not yet collected) application list says.
				add("plugins", checkOK, "node %s serves this management API", n.Name)
			case len(n.Plugins) == 0:
				// A node lists its applications with its statistics, which
				// a freshly started node (seen on 4.0.5, ~30 s after boot)
				// has not collected yet: an empty list is not an answer.
				add("plugins", checkInfo, "node %s has not reported its plugins yet (its statistics start a few seconds after it boots); run doctor again to check them", n.Name)
			default:
				add("plugins", checkProblem, "node %s does not run rabbitmq_management", n.Name)
			}
		}
	}

	// The oldest node's quorum rules hold in a cluster mid-upgrade: a
	// queue may live there.
	rules := version
	for _, n := range nodes {
		rules = topology.Oldest(rules, n.Version)
	}

	flags := map[string]bool{}
	ffErr := call(func(c context.Context) error {
		ffs, err := m.FeatureFlags(c)
		for _, f := range ffs {
			flags[f.Name] = f.Enabled()
		}
		return err
	})

	vhosts := []string{e.vhost()}
	if allVhosts {
		if err := call(func(c context.Context) (err error) { vhosts, err = m.Vhosts(c); return }); err != nil {
			return err
		}
	}
	var found []topology.Found
	insp := timed{m, e.opts.timeout}
	observers := map[string]ops.Observer{}
	for _, vh := range vhosts {
		// The ladders' objects only, not the vhost's: beside 10,000 other
		// queues its definitions are megabytes. Every binding into a
		// ladder's queues is read too (a request per queue), so that a
		// stray binding from an exchange no ladder owns is drift here.
		scope := ops.Scope{Vhost: vh, Inbound: true}
		if only != "" {
			scope.Ladders = []string{only}
		}
		o, err := observeLadders(ctx, insp, scope)
		if err != nil {
			add("ladders", checkProblem, "cannot %v", err)
			continue
		}
		observers[vh] = o
		found = append(found, o.Found()...)
	}
	if only != "" && len(found) == 0 {
		add("ladders", checkProblem, "no ladder %q in vhost %s (rungs discover lists the ladders there)", only, strings.Join(vhosts, ", "))
	} else if len(found) == 0 {
		add("ladders", checkInfo, "no ladders in vhost %s", strings.Join(vhosts, ", "))
	}

	// What the ladders found need from the broker.
	quorum := ""
	for _, f := range found {
		if f.Ladder.QueueType == topology.Quorum {
			quorum = f.Ladder.Name
			break
		}
	}
	switch {
	case quorum == "":
	case version.Known() && version.Less(minQuorum):
		add("broker", checkProblem, "ladder %s has quorum queues, which need RabbitMQ 3.8+; this is %s", quorum, ov.RabbitMQVersion)
	case version.Known() && version.Less(minAtLeastOnce):
		add("broker", checkProblem, "ladder %s uses at-least-once dead-lettering, which needs RabbitMQ 3.10+; on %s a message can be lost between rungs", quorum, ov.RabbitMQVersion)
	}
	switch {
	case quorum == "" && ffErr == nil:
		add("feature-flags", checkOK, "no quorum ladder here; quorum_queue is %s, stream_queue is %s", onOff(flags["quorum_queue"]), onOff(flags["stream_queue"]))
	case ffErr != nil:
		status := checkWarn
		if quorum != "" {
			status = checkProblem
		}
		add("feature-flags", status, "cannot read the feature flags (the user needs the administrator or monitoring tag): %v", ffErr)
	default:
		for _, ff := range []struct{ name, why string }{
			{"quorum_queue", "quorum queues"},
			{"stream_queue", "at-least-once dead-lettering between quorum rungs"},
		} {
			if flags[ff.name] {
				add("feature-flags", checkOK, "%s is enabled (%s)", ff.name, ff.why)
			} else {
				add("feature-flags", checkProblem, "%s is not enabled; ladder %s needs it for %s (rabbitmqctl enable_feature_flag %s)", ff.name, quorum, ff.why, ff.name)
			}
		}
	}

	if version.LosesBCCOnDeadLetter() {
		add("broker", checkWarn, "%s; the other layouts are not affected", bccBrokenText(ov.RabbitMQVersion))
	}
	// Stalled dead-lettering shows only across samples: watch the vhosts
	// whose rungs hold expired messages (a no-op for the others).
	for _, vh := range vhosts {
		o, ok := observers[vh]
		if !ok {
			continue
		}
		o, err := e.watchStalls(ctx, insp, o)
		if err != nil {
			add("ladders", checkProblem, "cannot re-read vhost %s: %v", vh, err)
		}
		rep := o.Report(o.At())
		ps, psErr := e.quorumPolicies(ctx, m, rep)
		for _, lr := range rep.Ladders {
			checkLadder(lr, version, add)
			checkDelayedRetry(lr, rep.Snapshot, ps, psErr, rules, add)
		}
	}
	if only == "" {
		e.checkDelays(ctx, m, vhosts, found, observers, rules, target, add)
	}
	return report()
}

// checkLadder adds one ladder's integrity checks: drift, then every queue
// the ladder view would mark as a warning or a problem.
func checkLadder(lr health.LadderReport, version topology.Version, add func(area, status, format string, a ...any)) {
	f := lr.Found
	l := f.Ladder
	area := ladderArea(l)
	add(area, checkInfo, "%s", describe(l))
	if len(f.Drift) == 0 {
		add(area, checkOK, "matches its plan: no missing, extra or changed objects")
	}
	for _, d := range f.Drift {
		add(area, checkProblem, "drift: %s", d)
	}
	if l.RoutesByBCC() && version.LosesBCCOnDeadLetter() {
		add(area, checkProblem, "this ladder routes by BCC keys, which this broker loses at every rung (upgrade to 3.13.3 or later)")
	}
	if l.RoutesByBCC() && l.QueueType == topology.Quorum && version.LosesBCCOnDeadLetterRetry() {
		add(area, checkWarn, "%s (after a node restart or a slow next rung); rungs replay --from %s.unroutable --to-origin puts them back into the rung they left (late, never early) (upgrade to 3.13.3 or later, or apply the ladder with --layout prefix or --queue-type classic)", bccRetryText(version, l.Name), l.Name)
	}
	if l.Layout == "nsb1" && version.AtLeast(3, 12, 0) {
		add(area, checkInfo, "NServiceBus v1 declares lazy queues; RabbitMQ 3.12+ ignores x-queue-mode. v1 dead-letters at most once: NServiceBus' v2 (quorum) infrastructure does not lose messages between levels")
	}
	var stalled []string
	for _, r := range lr.Rows {
		if r.Missing || len(r.Drift) > 0 && r.Kind != health.RungRow {
			continue // reported as drift above
		}
		if r.Stalled {
			stalled = append(stalled, r.Queue)
			add(area, checkProblem, "%s is stalled: %s expired %s waiting to be dead-lettered, none moved on in %s",
				r.Queue, topology.FormatCount(r.Stats.Expired), topology.Plural(r.Stats.Expired, "message", "messages"),
				topology.FormatSpan(r.Waited.Truncate(time.Second)))
			continue
		}
		switch r.Severity {
		case health.Problem:
			add(area, checkProblem, "%s: %s", r.Queue, r.Status)
		case health.Warning:
			if len(r.Drift) == 0 {
				add(area, checkWarn, "%s: %s", r.Queue, r.Status)
			}
		}
	}
	if len(stalled) > 0 {
		add(area, checkInfo, "likely cause: %s", health.StallCause)
		add(area, checkInfo, "remedy: %s", unstallHint(l, stalled, version))
	}
	if lr.Totals.Attention() == 0 {
		add(area, checkOK, "%s in flight, no rung stuck or stalled", topology.FormatCount(lr.Totals.InFlight))
	}
}

// ladderArea is the doctor's area of one ladder's checks.
func ladderArea(l topology.Ladder) string {
	if len(vhostLabel(l)) > 0 {
		return "ladder " + l.Name + " (" + vhostLabel(l) + ")"
	}
	return "ladder " + l.Name
}

// quorumPolicies reads the policies of a vhost that holds a quorum ladder:
// only quorum queues have delayed retry.
func (e *env) quorumPolicies(ctx context.Context, m *broker.Management, rep health.Report) (broker.Policies, error) {
	for _, lr := range rep.Ladders {
		if lr.Found.Ladder.QueueType == topology.Quorum {
			ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
			defer cancel()
			return m.Policies(ctx, rep.Vhost)
		}
	}
	return broker.Policies{}, nil
}

// checkDelayedRetry flags quorum delayed retry (RabbitMQ 4.3's
// x-delayed-retry-*, as arguments or policy keys) on a ladder's rungs: it
// holds a message handed back (by a peek, a move, a worker) beyond the
// rung's TTL. Rungs that one source configures alike are named together.
// Older releases accept the arguments and ignore them (and refuse the
// policy keys), so there it is said as a note for the upgrade.
func checkDelayedRetry(lr health.LadderReport, snap topology.Snapshot, ps broker.Policies, psErr error, version topology.Version, add func(area, status, format string, a ...any)) {
	l := lr.Found.Ladder
	if l.QueueType != topology.Quorum {
		return
	}
	area := ladderArea(l)
	if psErr != nil {
		add(area, checkInfo, "cannot read the policies, so delayed retry that a policy sets is not checked: %v", psErr)
	} else if ps.OperatorUnread {
		add(area, checkInfo, "cannot read the operator policies (the user needs the policymaker or administrator tag), so delayed retry that one sets is not checked")
	}
	for _, r := range lr.Rows {
		if r.Kind == health.RungRow && r.Stats.Delayed > 0 && len(r.Drift) > 0 {
			// checkLadder names a drifted row's drift, not its status.
			add(area, checkWarn, "%s: %s", r.Queue, health.HeldPastTTL(r.Stats.Delayed))
		}
	}
	var sources []string
	rungs := map[string][]string{}
	hold := map[string]broker.DelayedRetry{}
	for _, r := range lr.Rows {
		q, ok := snap.Queue(r.Queue)
		if r.Kind != health.RungRow || !ok {
			continue
		}
		for _, d := range broker.DelayedRetries(q, ps) {
			k := d.String()
			if _, seen := rungs[k]; !seen {
				sources = append(sources, k)
				hold[k] = d
			}
			rungs[k] = append(rungs[k], r.Queue)
		}
	}
	for _, k := range sources {
		d, on := hold[k], nameSome(rungs[k], 3)
		wait := "at least " + topology.FormatSpan(d.Min)
		if d.Max > 0 {
			wait = topology.FormatSpan(d.Min) + " to " + topology.FormatSpan(d.Max)
		}
		if version.QuorumDelayedRetry() {
			add(area, checkWarn, "delayed retry on %s, set by the %s: a message handed back (a peek, a move) waits %s beyond the rung's TTL before it moves on", on, k, wait)
			continue
		}
		add(area, checkInfo, "delayed retry on %s, set by the %s: RabbitMQ %s ignores it; from 4.3 a message handed back would wait %s beyond the rung's TTL", on, k, version, wait)
	}
}

// nameSome names up to n of xs and counts the rest.
func nameSome(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:n], ", "), len(xs)-n)
}

func vhostLabel(l topology.Ladder) string {
	if l.Vhost == "/" {
		return ""
	}
	return "vhost " + l.Vhost
}

func printChecks(e *env, checks []check, problems int) {
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
		fmt.Fprintln(e.Out, area)
		for _, c := range byArea[area] {
			fmt.Fprintf(e.Out, "  %s %s\n", marks[c.Status], c.Text)
		}
	}
	if problems == 0 {
		fmt.Fprintln(e.Out, "no problems found")
	} else {
		fmt.Fprintf(e.Out, "%s found\n", topology.Counted(problems, "problem", "problems"))
	}
}

func onOff(b bool) string {
	if b {
		return "enabled"
	}
	return "disabled"
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}
